"""The web path: search, fetch the top N pages under one deadline, and load and chunk them.

Embedding and scoring are not done here: the orchestrator's flow embeds these chunks with its
embedder client and ranks them against the question like local passages.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import time
from dataclasses import dataclass, field

from weaverbird_common.docs.chunker import chunk_document
from weaverbird_common.docs.documents import Chunk, Document
from weaverbird_common.docs.loaders import UnreadableDocument, load_bytes
from weaverbird_common.web import FetchedPage, FetchReport, PageFetcher

from weaverbird_orchestrator.deadline import time_left
from weaverbird_orchestrator.web.search import SearchProvider, SearchResult, WebSearchFailed

log = logging.getLogger(__name__)

# The loader names documents after their file when the content has no title; a name no real page
# uses lets us tell "no title" apart and put the search engine's title there instead.
_NAMELESS = "weaverbird-web-page"
# Providers get `search_timeout_s`; this is the margin before we stop waiting for one that ignores it.
_SEARCH_GRACE_S = 0.25
# Most chunks one question embeds (ORCHESTRATOR_WEB_MAX_CHUNKS): five ordinary articles give ~50.
DEFAULT_MAX_CHUNKS = 48
# Web work stops this long before the caller's deadline, leaving time to rank, answer and say why.
_DEADLINE_RESERVE_S = 0.5
# A page with an English and a Chinese date: loading it makes the HTML date search (dateparser)
# build its locale tables, which takes seconds the first time a page needs it.
_WARM_UP_HTML = (
    "<html><head><title>Warm-up</title></head><body><article><h1>Results 业绩</h1>"
    "<p>Published 12 February 2026. Revenue of $1.0 billion.</p>"
    '<p class="meta">2026年3月28日 来源：财经快讯</p><p>公司实现营业收入186.4亿元，同比增长23.1%。</p>'
    "</article></body></html>"
).encode()


@dataclass(slots=True)
class WebGathering:
    """What one web search produced, with counts and timings for logs, metrics and the response.

    Each fetched URL is counted once: `pages_fetched` (downloaded and readable) + `pages_failed`
    (refused, HTTP error, wrong type, too large, unreadable) + `pages_timed_out` (cancelled at the
    deadline) = the number of distinct URLs tried.
    """

    documents: list[Document]
    chunks: list[tuple[Document, Chunk]]
    search_ms: float
    fetch_ms: float
    pages_fetched: int
    pages_failed: int
    pages_timed_out: int
    # "ok" when at least one page was usable, else why not ("search failed: timeout", ...).
    status: str
    # One line per page that was not used: "<url>: <reason>".
    failures: list[str]
    # Loading and chunking the fetched pages (runs after the fetch deadline, in a worker thread).
    extract_ms: float = 0.0
    # Chunks left out by the per-question cap (max_chunks).
    chunks_dropped: int = 0
    # The search results themselves, e.g. to show as further reading when pages fail.
    results: list[SearchResult] = field(default_factory=list)


class WebPath:
    """Search the web for a question and turn the top pages into chunks.

    Args:
        provider: The search backend.
        fetcher: Fetches pages (with SSRF checks and a size cap).
        pages: N, the number of top results fetched.
        deadline_s: Overall deadline for fetching all N pages; unfinished pages are dropped.
        search_timeout_s: Deadline for the search call itself (before the fetch deadline starts).
        enough_pages: once this many pages arrived, stragglers get a short grace, not the whole
            deadline (None = wait for every page up to the deadline).
        max_chunks: most chunks kept for one question, taken from every page in turn.

    Every step also ends by the caller's deadline (deadline.time_left) less a short reserve.
    """

    def __init__(
        self,
        provider: SearchProvider,
        fetcher: PageFetcher,
        *,
        pages: int,
        deadline_s: float,
        search_timeout_s: float,
        enough_pages: int | None = None,
        max_chunks: int = DEFAULT_MAX_CHUNKS,
    ) -> None:
        if pages < 1 or deadline_s <= 0 or search_timeout_s <= 0 or max_chunks < 1:
            raise ValueError("pages and max_chunks must be >= 1 and both deadlines positive")
        self._max_chunks = max_chunks
        self._provider = provider
        self._fetcher = fetcher
        self._enough_pages = enough_pages
        self._pages = pages
        self._deadline_s = deadline_s
        self._search_timeout_s = search_timeout_s

    async def warm_up(self) -> None:
        """Pays the loader's one-time start-up costs now (call at service start, not per request).

        The first HTML page with a non-English date makes dateparser compile its locale tables,
        several seconds of CPU that would otherwise delay the first answer that uses the web.
        """
        started = time.monotonic()
        await asyncio.to_thread(lambda: chunk_document(load_bytes(_WARM_UP_HTML, "warm-up.html", origin="web")))
        log.info("web path warmed up in %.0f ms", _ms_since(started))

    async def gather(self, query: str) -> WebGathering:
        """Search → fetch top N under the deadline → load → chunk. Never raises for web failures.

        Returns:
            The documents (origin "web", source = final URL after redirects) and their chunks,
            with `status` "ok" if at least one page was usable, else the reason.
        """
        started = time.monotonic()
        search_timeout = _bounded(self._search_timeout_s)
        if search_timeout <= 0:
            return self._give_up("search skipped: the request's deadline is too close", started)
        try:
            async with asyncio.timeout(search_timeout + _SEARCH_GRACE_S):
                results = await self._provider.search(query, self._pages, search_timeout)
        except WebSearchFailed as exc:
            return self._give_up(f"search failed: {exc.reason}", started)
        except TimeoutError:
            return self._give_up("search failed: timeout", started)
        except Exception as exc:  # a provider bug must not fail the whole answer; local passages remain
            log.exception("web search provider %s raised", self._provider.name)
            return self._give_up(f"search failed: {type(exc).__name__}", started)
        search_ms = _ms_since(started)

        titles: dict[str, str] = {}
        for result in results:
            titles.setdefault(result.url, result.title)
        urls = list(titles)[: self._pages]
        if not urls:
            return self._give_up("no search results", started, search_ms=search_ms, results=results)

        fetch_started = time.monotonic()
        fetch_deadline = _bounded(self._deadline_s)
        if fetch_deadline <= 0:
            return self._give_up(
                "fetch skipped: the request's deadline is too close", started, search_ms=search_ms, results=results
            )
        try:
            report = await self._fetcher.fetch_all(urls, fetch_deadline, enough=self._enough_pages)
        except Exception as exc:  # fetch_all reports per page; anything else is a bug, not a reason to fail
            log.exception("web fetch raised")
            return self._give_up(f"fetch failed: {type(exc).__name__}", started, search_ms=search_ms, results=results)
        fetch_ms = _ms_since(fetch_started)

        extract_started = time.monotonic()
        # trafilatura and the chunker are CPU-bound; keep them off the event loop serving other RPCs.
        # A thread cannot be stopped, but the request need not wait for it past its deadline.
        # The reserve kept back from the fetch is this step's: it may use what is left of the deadline.
        extract_budget = time_left()
        try:
            async with asyncio.timeout(None if extract_budget is None else max(extract_budget, 0)):
                documents, chunks, unreadable = (
                    await asyncio.to_thread(_load_pages, report, titles) if report.pages else ([], [], [])
                )
        except TimeoutError:
            return self._give_up(
                "extraction stopped at the request's deadline", started, search_ms=search_ms, results=results
            )
        extract_ms = _ms_since(extract_started)
        kept = fair_share(chunks, self._max_chunks)
        dropped = len(chunks) - len(kept)
        if dropped:
            log.info("web path: embedding %d of %d chunks (max_chunks)", len(kept), len(chunks))
        chunks = kept

        failures = [f"{failure.url}: {failure.reason}" for failure in report.failed]
        failures += [f"{url}: timed out" for url in report.timed_out]
        failures += unreadable
        failed = len(report.failed) + len(unreadable)
        if documents:
            status = "ok"
        else:
            status = f"no usable pages ({failed} failed, {len(report.timed_out)} timed out)"
        log.info(
            "web path: %d results, %d pages usable, %d failed, %d timed out, %d chunks; search %.0f ms, fetch %.0f ms",
            len(results), len(report.pages) - len(unreadable), failed, len(report.timed_out), len(chunks),
            search_ms, fetch_ms,
        )  # fmt: skip
        return WebGathering(
            documents=documents,
            chunks=chunks,
            search_ms=search_ms,
            fetch_ms=fetch_ms,
            pages_fetched=len(report.pages) - len(unreadable),
            pages_failed=failed,
            pages_timed_out=len(report.timed_out),
            status=status,
            failures=failures,
            extract_ms=extract_ms,
            results=results,
            chunks_dropped=dropped,
        )

    def _give_up(
        self, status: str, started: float, *, search_ms: float | None = None, results: list[SearchResult] | None = None
    ) -> WebGathering:
        log.warning("web path gave up: %s", status)
        return WebGathering(
            documents=[],
            chunks=[],
            search_ms=_ms_since(started) if search_ms is None else search_ms,
            fetch_ms=0.0,
            pages_fetched=0,
            pages_failed=0,
            pages_timed_out=0,
            status=status,
            failures=[],
            results=results or [],
        )


def _bounded(seconds: float) -> float:
    """`seconds`, or less when the caller's deadline (less a reserve) comes sooner; <= 0 = no time left."""
    left = time_left()
    return seconds if left is None else min(seconds, left - _DEADLINE_RESERVE_S)


def fair_share(chunks: list[tuple[Document, Chunk]], limit: int) -> list[tuple[Document, Chunk]]:
    """At most `limit` chunks, taken from each document in turn (its first chunk, then every second ...),
    so one long page cannot crowd the others out. Each document's chunks keep their order."""
    if len(chunks) <= limit:
        return chunks
    by_doc: dict[str, list[tuple[Document, Chunk]]] = {}
    for item in chunks:
        by_doc.setdefault(item[0].document_id, []).append(item)
    kept: list[tuple[Document, Chunk]] = []
    depth = 0
    while len(kept) < limit:
        for items in by_doc.values():
            if depth < len(items) and len(kept) < limit:
                kept.append(items[depth])
        depth += 1
    return kept


def _load_pages(
    report: FetchReport, titles: dict[str, str]
) -> tuple[list[Document], list[tuple[Document, Chunk]], list[str]]:
    """Documents and chunks of the fetched pages, plus "<url>: unreadable: ..." for those without text."""
    documents: list[Document] = []
    chunks: list[tuple[Document, Chunk]] = []
    unreadable: list[str] = []
    seen: set[str] = set()
    for page in report.pages:
        try:
            doc = page_document(page, titles.get(page.url, ""))
        except UnreadableDocument as exc:
            unreadable.append(f"{page.url}: unreadable: {exc.reason}")
            continue
        if doc.document_id in seen:  # two results redirecting to the same page
            continue
        seen.add(doc.document_id)
        documents.append(doc)
        chunks.extend((doc, chunk) for chunk in chunk_document(doc))
    return documents, chunks, unreadable


def page_document(page: FetchedPage, search_title: str = "") -> Document:
    """A fetched page as a Document (origin "web", keyed by its final URL); raises UnreadableDocument.

    The page's own <title> wins; `search_title` is used when it has none, then the URL.
    """
    suffix = ".txt" if page.media_type == "text/plain" else ".html"
    doc = load_bytes(_as_utf8(page), f"{_NAMELESS}{suffix}", source=page.final_url, origin="web")
    if doc.title == _NAMELESS:
        doc.title = search_title or page.final_url
    return doc


def _as_utf8(page: FetchedPage) -> bytes:
    """The body re-encoded as UTF-8 when the server declared another charset.

    The loader guesses encodings from the bytes alone; the HTTP header is the better source for
    Chinese sites that still serve GBK. Undecodable bodies are passed on for the loader to guess.
    """
    charset = page.charset
    if not charset:
        return page.body
    try:
        if codecs.lookup(charset).name == "utf-8":
            return page.body
        return page.body.decode(charset).encode("utf-8")
    except (LookupError, UnicodeDecodeError):
        return page.body


def _ms_since(started: float) -> float:
    return (time.monotonic() - started) * 1000
