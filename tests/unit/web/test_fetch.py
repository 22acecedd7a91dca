"""PageFetcher against real servers on 127.0.0.1: deadline, size cap, types, redirects, pinning."""

from __future__ import annotations

import socket
from collections.abc import Sequence

import pytest
from fixtures.http_test_server import self_signed_tls
from fixtures.web_servers import (
    AURORA_PATH,
    BINARY_PATH,
    HANG_PATH,
    HUGE_BYTES,
    HUGE_PATH,
    HUGE_STREAM_PATH,
    LANWAN_HTML,
    LANWAN_PATH,
    NOT_FOUND_PATH,
    PLAIN_PATH,
    REDIRECT_LOCAL_PATH,
    REDIRECT_LOOP_PATH,
    REDIRECT_METADATA_PATH,
    REDIRECT_PRIVATE_PATH,
    SLOW_BODY_PATH,
    CanaryServer,
    PageServer,
)
from weaverbird_common.errors import DeadlineExceeded, InvalidArgument, Unavailable
from weaverbird_common.web import (
    FetchReport,
    PageFetcher,
    PageRejected,
    PageTimedOut,
    PageUnreachable,
    UnsafeUrl,
    UrlGuard,
)

pytest_plugins = ["fixtures.web_servers"]

DEADLINE_S = 1.0


def fetcher_for(server: PageServer, **kwargs: int) -> PageFetcher:
    return PageFetcher(UrlGuard([server.allow_entry]), **kwargs)


def reasons(report: FetchReport) -> dict[str, str]:
    return {failure.url: failure.reason for failure in report.failed}


async def test_fetches_pages_concurrently(web_page_server: PageServer) -> None:
    urls = [web_page_server.url(p) for p in (AURORA_PATH, LANWAN_PATH, PLAIN_PATH)]
    report = await fetcher_for(web_page_server).fetch_all(urls, DEADLINE_S * 5)
    assert not report.failed and not report.timed_out
    assert [page.url for page in report.pages] == urls  # input order
    aurora, lanwan, plain = report.pages
    assert aurora.status == 200 and aurora.media_type == "text/html" and aurora.final_url == urls[0]
    assert b"$4.82 billion" in aurora.body
    assert lanwan.charset == "gbk" and lanwan.body == LANWAN_HTML.encode("gbk")
    assert plain.media_type == "text/plain"
    assert all(page.elapsed_ms >= 0 for page in report.pages)
    assert web_page_server.requests[0].headers["user-agent"] == "WeaverBird/0.1"


async def test_hanging_pages_are_timed_out_and_the_rest_kept(web_page_server: PageServer) -> None:
    urls = [web_page_server.url(p) for p in (HANG_PATH, AURORA_PATH, SLOW_BODY_PATH)]
    report = await fetcher_for(web_page_server).fetch_all(urls, DEADLINE_S)
    assert [page.url for page in report.pages] == [urls[1]]
    assert sorted(report.timed_out) == sorted([urls[0], urls[2]])
    assert report.failed == []
    # Generous bound: the point is that the call does not wait for the hanging pages (30 s).
    assert report.elapsed_ms < (DEADLINE_S + 2.0) * 1000


async def test_enough_pages_cut_stragglers_short(web_page_server: PageServer) -> None:
    urls = [web_page_server.url(p) for p in (AURORA_PATH, PLAIN_PATH, HANG_PATH)]
    report = await fetcher_for(web_page_server).fetch_all(urls, 25.0, enough=2, straggler_grace_s=0.2)
    assert sorted(page.url for page in report.pages) == sorted(urls[:2])
    assert report.timed_out == [urls[2]]
    # Without the rule the hanging page would hold the call to the 25 s deadline.
    assert report.elapsed_ms < 20_000


async def test_zero_deadline_times_everything_out(web_page_server: PageServer) -> None:
    url = web_page_server.url(AURORA_PATH)
    report = await fetcher_for(web_page_server).fetch_all([url], 0.0)
    assert report.timed_out == [url] and not report.pages


@pytest.mark.parametrize("path", [HUGE_PATH, HUGE_STREAM_PATH])
async def test_huge_pages_fail_as_too_large(web_page_server: PageServer, path: str) -> None:
    url = web_page_server.url(path)
    report = await fetcher_for(web_page_server).fetch_all([url], DEADLINE_S * 5)
    assert not report.pages
    assert reasons(report)[url].startswith("too large")


async def test_size_limit_is_configurable(web_page_server: PageServer) -> None:
    url = web_page_server.url(HUGE_STREAM_PATH)
    report = await fetcher_for(web_page_server, max_bytes=HUGE_BYTES + 100_000).fetch_all([url], DEADLINE_S * 5)
    assert len(report.pages) == 1 and len(report.pages[0].body) > HUGE_BYTES
    small = await fetcher_for(web_page_server, max_bytes=1000).fetch_all([web_page_server.url(AURORA_PATH)], 5)
    assert "too large" in small.failed[0].reason


async def test_redirect_to_cloud_metadata_is_refused(web_page_server: PageServer) -> None:
    url = web_page_server.url(REDIRECT_METADATA_PATH)
    report = await fetcher_for(web_page_server).fetch_all([url], DEADLINE_S * 5)
    assert not report.pages and not report.timed_out
    assert "169.254.169.254" in reasons(report)[url] and "link-local" in reasons(report)[url]


async def test_redirect_to_a_private_port_never_reaches_it(
    web_page_server: PageServer, web_canary_server: CanaryServer
) -> None:
    # Same host as the allowed page server, other port: the allow-list entry names the port.
    url = web_page_server.url(REDIRECT_PRIVATE_PATH)
    report = await fetcher_for(web_page_server).fetch_all([url], DEADLINE_S * 5)
    assert "loopback" in reasons(report)[url]
    assert web_canary_server.requests == []
    assert web_page_server.paths_requested() == [REDIRECT_PRIVATE_PATH]


async def test_allowed_redirects_are_followed(web_page_server: PageServer) -> None:
    url = web_page_server.url(REDIRECT_LOCAL_PATH)
    report = await fetcher_for(web_page_server).fetch_all([url], DEADLINE_S * 5)
    (page,) = report.pages
    assert page.url == url and page.final_url == web_page_server.url(AURORA_PATH)
    assert web_page_server.paths_requested() == [REDIRECT_LOCAL_PATH, AURORA_PATH]


async def test_redirect_loops_stop(web_page_server: PageServer) -> None:
    url = web_page_server.url(REDIRECT_LOOP_PATH)
    report = await fetcher_for(web_page_server, max_redirects=3).fetch_all([url], DEADLINE_S * 5)
    assert reasons(report)[url] == "too many redirects (> 3)"
    assert len(web_page_server.requests) == 4


async def test_non_text_types_and_errors_fail(web_page_server: PageServer) -> None:
    binary, missing = web_page_server.url(BINARY_PATH), web_page_server.url(NOT_FOUND_PATH)
    report = await fetcher_for(web_page_server).fetch_all([binary, missing, binary], DEADLINE_S * 5)
    assert reasons(report) == {
        binary: "unsupported content type 'application/octet-stream'",
        missing: "HTTP 404",
    }
    assert len(report.failed) == 2  # the repeated URL is fetched once


async def test_empty_url_list() -> None:
    report = await PageFetcher(UrlGuard()).fetch_all([], 1.0)
    assert report == FetchReport()


async def test_connects_to_the_vetted_address_with_the_real_host_name(web_page_server: PageServer) -> None:
    """DNS pinning: the name is resolved once by the guard and never again by the HTTP client.

    "aurora.test" does not exist in system DNS, so the fetch succeeding proves the client used
    the vetted address; the Host header still carries the name.
    """
    lookups: list[str] = []

    async def resolver(host: str, port: int) -> Sequence[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    fetcher = PageFetcher(UrlGuard([web_page_server.allow_entry], resolver=resolver))
    url = f"http://aurora.test:{web_page_server.port}{AURORA_PATH}"
    report = await fetcher.fetch_all([url], DEADLINE_S * 5)
    (page,) = report.pages
    assert page.final_url == url
    assert lookups == ["aurora.test"]
    assert web_page_server.requests[0].headers["host"] == f"aurora.test:{web_page_server.port}"


async def test_https_pinning_verifies_the_certificate_for_the_host_name() -> None:
    """The TLS connection goes to the vetted IP, but SNI and the certificate check use the name.

    The certificate also covers 127.0.0.1, so a fetcher that verified against the pinned IP
    would wrongly accept "other.test" below.
    """
    tls = self_signed_tls("aurora.test")

    async def resolver(host: str, port: int) -> Sequence[str]:
        return ["127.0.0.1"]

    with PageServer(tls=tls.server) as server:
        fetcher = PageFetcher(UrlGuard([server.allow_entry], resolver=resolver), ssl_context=tls.client)
        page = await fetcher.fetch_one(f"https://aurora.test:{server.port}{AURORA_PATH}", timeout_s=5.0)
        assert page.status == 200 and b"$4.82 billion" in page.body
        assert server.requests[0].headers["host"] == f"aurora.test:{server.port}"
        with pytest.raises(PageUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
            await fetcher.fetch_one(f"https://other.test:{server.port}{AURORA_PATH}", timeout_s=5.0)
        assert len(server.requests) == 1


async def test_falls_back_to_the_next_vetted_address(web_page_server: PageServer) -> None:
    async def resolver(host: str, port: int) -> Sequence[str]:
        return ["127.0.0.3", "127.0.0.1"]  # nothing listens on 127.0.0.3 (like an unroutable IPv6)

    fetcher = PageFetcher(UrlGuard(["127.0.0.0/8"], resolver=resolver))
    report = await fetcher.fetch_all([f"http://pages.test:{web_page_server.port}{AURORA_PATH}"], DEADLINE_S * 5)
    assert len(report.pages) == 1


async def test_fetch_one(web_page_server: PageServer) -> None:
    page = await fetcher_for(web_page_server).fetch_one(web_page_server.url(AURORA_PATH), timeout_s=5.0)
    assert page.status == 200 and b"Aurora Tidal Power" in page.body


async def test_fetch_one_errors(web_page_server: PageServer) -> None:
    fetcher = fetcher_for(web_page_server)
    with pytest.raises(UnsafeUrl):
        await fetcher.fetch_one(web_page_server.url(REDIRECT_METADATA_PATH), timeout_s=5.0)
    with pytest.raises(PageRejected, match="HTTP 404") as rejected:
        await fetcher.fetch_one(web_page_server.url(NOT_FOUND_PATH), timeout_s=5.0)
    assert isinstance(rejected.value, InvalidArgument)
    with pytest.raises(PageRejected, match="too large"):
        await fetcher.fetch_one(web_page_server.url(HUGE_PATH), timeout_s=5.0)
    with pytest.raises(PageTimedOut) as timed_out:
        await fetcher.fetch_one(web_page_server.url(HANG_PATH), timeout_s=0.5)
    assert isinstance(timed_out.value, DeadlineExceeded)


async def test_fetch_one_unreachable() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    fetcher = PageFetcher(UrlGuard([f"127.0.0.1:{port}"]))
    with pytest.raises(PageUnreachable) as caught:
        await fetcher.fetch_one(f"http://127.0.0.1:{port}/", timeout_s=5.0)
    assert isinstance(caught.value, Unavailable)


async def test_allow_listed_name_rebound_to_an_internal_service_is_never_fetched(
    web_canary_server: CanaryServer,
) -> None:
    """An allow-listed name whose DNS now points at an internal service (the canary on 127.0.0.1)
    is refused before any connection; only the explicit opt-in lets the name reach it."""

    async def rebound(host: str, port: int) -> Sequence[str]:
        return ["127.0.0.1"]

    url = f"http://search.internal:{web_canary_server.port}/secret"
    guarded = PageFetcher(UrlGuard(["search.internal"], resolver=rebound))
    report = await guarded.fetch_all([url], DEADLINE_S * 5)
    assert not report.pages and "loopback" in reasons(report)[url]
    with pytest.raises(UnsafeUrl, match="loopback"):
        await guarded.fetch_one(url, timeout_s=5.0)
    assert web_canary_server.requests == []

    trusting = PageFetcher(UrlGuard(["search.internal"], resolver=rebound, names_may_resolve_private=True))
    page = await trusting.fetch_one(url, timeout_s=5.0)
    assert CanaryServer.SECRET.encode() in page.body
    assert [r.headers["host"] for r in web_canary_server.requests] == [f"search.internal:{web_canary_server.port}"]
