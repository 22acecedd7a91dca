"""Fetch web pages concurrently under one deadline, with every hop vetted by the SSRF guard.

Used by the orchestrator's web path (search results) and by the ingester (URLs users submit).

Decisions:
- Redirects are followed by hand so each hop goes through `UrlGuard.vet`, and each request
  connects to an address the guard vetted (DNS pinning, see `ssrf`): the URL is rewritten to that
  IP while the Host header and TLS SNI/certificate check keep the real name. Keep-alive is off so
  a connection opened for one name is never reused for another name on the same IP.
- Environment proxy variables are ignored: a proxy would resolve names itself, defeating pinning.
- The fetcher connects only to addresses the guard returned; an allow-listed host name gets no
  shortcut there (its addresses must still be public unless the guard was built with
  `names_may_resolve_private`), and neither does a redirect to one.
- Bodies larger than `max_bytes` (after content decoding, so compression cannot smuggle more in)
  FAIL as "too large" rather than being truncated: a cut page can end mid-table, and a half number
  ("1,2" of "1,234") is worse for a financial answer than no page. A declared Content-Length over
  the limit fails before any body is read.
- Only text/html, application/xhtml+xml and text/plain are accepted; everything else (PDF, images,
  octet-stream) fails with the type named.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from weaverbird_common.errors import DeadlineExceeded, InvalidArgument, Unavailable, WeaverbirdError
from weaverbird_common.web.ssrf import UnsafeUrl, UrlGuard, VettedUrl

ACCEPTED_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Tasks still running at the deadline are cancelled; this is how long we wait for them to unwind.
_CANCEL_GRACE_S = 0.05
# Dual-stack names often list an address this host cannot route to first; try a few in order.
_MAX_ADDRESSES_TRIED = 3


@dataclass(slots=True)
class FetchedPage:
    """A page fetched in full: 2xx status, accepted type, body within the size limit."""

    url: str
    # After redirects; the URL to cite and to key the document by.
    final_url: str
    status: int
    # The Content-Type header as sent, charset included (e.g. "text/html; charset=gbk").
    content_type: str
    body: bytes
    elapsed_ms: float

    @property
    def media_type(self) -> str:
        """The content type without parameters, lower-case ("text/html")."""
        return _media_type(self.content_type)

    @property
    def charset(self) -> str | None:
        """The charset the server declared, if any."""
        return _charset(self.content_type)


@dataclass(frozen=True, slots=True)
class FetchFailure:
    """A page that could not be used and why ("HTTP 404", "too large (> 2000000 bytes)", ...)."""

    url: str
    reason: str


@dataclass(slots=True)
class FetchReport:
    """Outcome of `fetch_all`: each distinct URL is in exactly one of the three lists."""

    pages: list[FetchedPage] = field(default_factory=list)
    failed: list[FetchFailure] = field(default_factory=list)
    # URLs still in flight at the deadline; their requests were cancelled.
    timed_out: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0


class PageFetchError(WeaverbirdError):
    """A page could not be fetched; `reason` is short and safe to show ("HTTP 404")."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot fetch {url}: {reason}")
        self.url = url
        self.reason = reason


class PageRejected(PageFetchError, InvalidArgument):
    """The server answered, but with something we do not take (status, type, size, redirects)."""


class PageUnreachable(PageFetchError, Unavailable):
    """No usable answer: connection refused or reset, TLS or protocol error."""


class PageTimedOut(PageFetchError, DeadlineExceeded):
    """The page did not arrive within the time allowed."""


class PageFetcher:
    """Fetches pages over HTTP(S) with SSRF checks, a size cap and a deadline.

    Args:
        guard: Vets every URL and redirect target and supplies the addresses to connect to.
        max_bytes: Largest body accepted, after decoding. Default 2,000,000.
        max_redirects: Redirect hops followed before failing. Default 5.
        user_agent: Sent with every request. Default "WeaverBird/0.1".
        ssl_context: Certificate verification for https; default None = the certifi CA bundle.
            Private deployments (and tests) pass one trusting their own CA.
    """

    def __init__(
        self,
        guard: UrlGuard,
        *,
        max_bytes: int = 2_000_000,
        max_redirects: int = 5,
        user_agent: str = "WeaverBird/0.1",
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if max_bytes <= 0 or max_redirects < 0:
            raise ValueError("max_bytes must be positive and max_redirects not negative")
        self._guard = guard
        self._max_bytes = max_bytes
        self._max_redirects = max_redirects
        self._user_agent = user_agent
        # Built once: loading the CA bundle costs tens of milliseconds, paid inside the deadline otherwise.
        self._ssl_context = ssl_context if ssl_context is not None else httpx.create_ssl_context()

    async def fetch_all(
        self,
        urls: Sequence[str],
        deadline_s: float,
        *,
        enough: int | None = None,
        straggler_grace_s: float = 0.3,
    ) -> FetchReport:
        """Fetches `urls` concurrently; whatever is unfinished after `deadline_s` is cancelled.

        Never raises for a page: each distinct URL ends up in `pages`, `failed` or `timed_out`
        (duplicates are fetched once). Returns within `deadline_s` plus a few tens of milliseconds
        for cancelled requests to close their sockets.

        Args:
            enough: once this many pages arrived, the rest get only `straggler_grace_s` more, so one
                hanging server does not hold every answer to the full deadline. None = wait for all.
        """
        started = time.monotonic()
        unique = list(dict.fromkeys(urls))
        report = FetchReport()
        if not unique:
            return report
        async with self._client(deadline_s) as client:
            tasks = {url: asyncio.create_task(self._fetch_timed(client, url)) for url in unique}
            try:
                deadline = started + max(deadline_s, 0.0)
                pending = await self._wait(set(tasks.values()), deadline, enough, straggler_grace_s)
                for task in pending:
                    task.cancel()
                if pending:
                    await asyncio.wait(pending, timeout=_CANCEL_GRACE_S)
            finally:
                for task in tasks.values():  # also when our caller cancels us
                    task.cancel()
        for url, task in tasks.items():
            if not task.done() or task.cancelled():
                report.timed_out.append(url)
                continue
            exc = task.exception()
            if exc is None:
                report.pages.append(task.result())
            elif isinstance(exc, PageTimedOut):
                report.timed_out.append(url)
            elif isinstance(exc, PageFetchError | UnsafeUrl):
                report.failed.append(FetchFailure(url, exc.reason))
            else:
                report.failed.append(FetchFailure(url, f"{type(exc).__name__}: {exc}"))
        report.elapsed_ms = (time.monotonic() - started) * 1000
        return report

    @staticmethod
    async def _wait(
        pending: set[asyncio.Task[FetchedPage]], deadline: float, enough: int | None, grace_s: float
    ) -> set[asyncio.Task[FetchedPage]]:
        """Waits until all tasks end, the deadline passes, or `enough` succeeded plus a short grace."""
        succeeded = 0
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            done, pending = await asyncio.wait(pending, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            succeeded += sum(1 for t in done if not t.cancelled() and t.exception() is None)
            if enough is not None and succeeded >= enough and pending:
                _, pending = await asyncio.wait(pending, timeout=min(grace_s, max(deadline - time.monotonic(), 0)))
                break
        return pending

    async def fetch_one(self, url: str, timeout_s: float) -> FetchedPage:
        """Fetches one page, for adding a user-submitted URL to the knowledge base.

        Raises:
            UnsafeUrl: The URL or a redirect target was refused (INVALID_ARGUMENT).
            PageRejected: Bad status, unsupported type, too large, too many redirects.
            PageUnreachable: The server could not be reached or broke the protocol.
            PageTimedOut: Not done within `timeout_s`.
        """
        async with self._client(timeout_s) as client:
            try:
                async with asyncio.timeout(timeout_s):
                    return await self._fetch_timed(client, url)
            except TimeoutError:
                raise PageTimedOut(url, f"no complete answer within {timeout_s:g}s") from None

    # -----------------------------------------------------------------------------------------

    def _client(self, timeout_s: float) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            follow_redirects=False,  # each hop is vetted in _fetch
            trust_env=False,  # no proxies from the environment: they would resolve names themselves
            verify=self._ssl_context,
            timeout=httpx.Timeout(max(timeout_s, 0.01)),
            limits=httpx.Limits(max_keepalive_connections=0),  # never share a pinned connection
            headers={
                "User-Agent": self._user_agent,
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9",
            },
        )

    async def _fetch_timed(self, client: httpx.AsyncClient, url: str) -> FetchedPage:
        started = time.monotonic()
        page = await self._fetch(client, url)
        page.elapsed_ms = (time.monotonic() - started) * 1000
        return page

    async def _fetch(self, client: httpx.AsyncClient, url: str) -> FetchedPage:
        current = url
        for _ in range(self._max_redirects + 1):
            target = await self._guard.vet(current)
            response = await self._send_pinned(client, target, url)
            try:
                if response.status_code in _REDIRECTS:
                    location = response.headers.get("location", "").strip()
                    if not location:
                        raise PageRejected(url, f"HTTP {response.status_code} redirect without Location")
                    try:
                        current = str(httpx.URL(target.url).join(location))
                    except (httpx.InvalidURL, ValueError) as exc:
                        raise PageRejected(url, f"bad redirect Location: {exc}") from exc
                    continue
                return await self._read(response, url, target.url)
            finally:
                await response.aclose()
        raise PageRejected(url, f"too many redirects (> {self._max_redirects})")

    async def _send_pinned(self, client: httpx.AsyncClient, target: VettedUrl, url: str) -> httpx.Response:
        """Sends GET for `target` to one of its vetted addresses, trying the next on connect errors."""
        headers = {"Host": target.host_header}
        extensions: dict[str, object] = {}
        if target.scheme == "https" and not target.host_is_ip:
            # The certificate is checked against this name, not against the IP in the URL.
            extensions["sni_hostname"] = target.host
        last_error: Exception | None = None
        for address in target.addresses[:_MAX_ADDRESSES_TRIED]:
            pinned = httpx.URL(target.url).copy_with(host=address)
            request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
            try:
                return await client.send(request, stream=True, follow_redirects=False)
            except httpx.ConnectError as exc:
                last_error = exc
            except httpx.TimeoutException as exc:
                raise PageTimedOut(url, "timeout") from exc
            except httpx.HTTPError as exc:
                raise PageUnreachable(url, f"{type(exc).__name__}: {exc}") from exc
        raise PageUnreachable(url, f"cannot connect to {target.host}: {last_error}")

    async def _read(self, response: httpx.Response, url: str, final_url: str) -> FetchedPage:
        status = response.status_code
        if not 200 <= status < 300:
            raise PageRejected(url, f"HTTP {status}")
        content_type = response.headers.get("content-type", "")
        if _media_type(content_type) not in ACCEPTED_TYPES:
            raise PageRejected(url, f"unsupported content type {_media_type(content_type) or '(none)'!r}")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            raise PageRejected(url, f"too large ({declared} > {self._max_bytes} bytes)")
        body = bytearray()
        try:
            async for part in response.aiter_bytes():
                body += part
                if len(body) > self._max_bytes:
                    raise PageRejected(url, f"too large (> {self._max_bytes} bytes)")
        except httpx.TimeoutException as exc:
            raise PageTimedOut(url, "timeout while reading the body") from exc
        except httpx.HTTPError as exc:
            raise PageUnreachable(url, f"{type(exc).__name__}: {exc}") from exc
        return FetchedPage(
            url=url, final_url=final_url, status=status, content_type=content_type, body=bytes(body), elapsed_ms=0.0
        )


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _charset(content_type: str) -> str | None:
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip().strip("\"'"):
            return value.strip().strip("\"'").lower()
    return None
