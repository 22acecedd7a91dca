"""WebPath end to end over real local servers: search → fetch under a deadline → load → chunk."""

from __future__ import annotations

import socket

import pytest
from fixtures.local_web_path import local_web_path
from fixtures.search_server import SearchHit, SearchServer
from fixtures.web_servers import (
    AURORA_PATH,
    BINARY_PATH,
    BOILERPLATE_MARKERS,
    EMPTY_PATH,
    HANG_PATH,
    LANWAN_PATH,
    MALFORMED_PATH,
    PLAIN_PATH,
    REDIRECT_LOCAL_PATH,
    REDIRECT_METADATA_PATH,
    REDIRECT_PRIVATE_PATH,
    CanaryServer,
    PageServer,
)
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.web import PageFetcher, UrlGuard
from weaverbird_orchestrator.web import SearchResult, SearxngProvider, WebGathering, WebPath

pytest_plugins = ["fixtures.web_servers"]

DEADLINE_S = 1.5


def web_path(search: SearchServer, pages: PageServer, n: int = 3, search_timeout_s: float = 2.0) -> WebPath:
    return local_web_path(search, pages, pages=n, deadline_s=DEADLINE_S, search_timeout_s=search_timeout_s)


def all_text(gathering: WebGathering) -> str:
    return "\n".join(chunk.text for _, chunk in gathering.chunks)


async def test_warm_up_runs_first(web_page_server: PageServer) -> None:
    # Also makes the tests below fast: the loader's first Chinese date costs seconds (dateparser).
    path = WebPath(
        SearxngProvider("http://127.0.0.1:9"), PageFetcher(UrlGuard()), pages=1, deadline_s=1, search_timeout_s=1
    )
    await path.warm_up()
    assert web_page_server.requests == []


async def test_gathers_bilingual_finance_pages(web_search_server: SearchServer, web_page_server: PageServer) -> None:
    aurora, lanwan = web_page_server.url(AURORA_PATH), web_page_server.url(LANWAN_PATH)
    web_search_server.set_results({"aurora": [aurora, lanwan, web_page_server.url(HANG_PATH)]})

    gathering = await web_path(web_search_server, web_page_server).gather("Aurora Tidal Power FY2025 revenue")

    assert gathering.status == "ok"
    assert (gathering.pages_fetched, gathering.pages_failed, gathering.pages_timed_out) == (2, 0, 1)
    assert gathering.failures == [f"{web_page_server.url(HANG_PATH)}: timed out"]
    assert [doc.source for doc in gathering.documents] == [aurora, lanwan]
    english, chinese = gathering.documents
    assert all(doc.origin == "web" for doc in gathering.documents)
    assert english.document_id == document_id_for(aurora)
    assert english.title == "Aurora Tidal Power reports FY2025 results"
    assert "$4.82 billion" in english.text and "$612 million" in english.text
    assert chinese.title == "蓝湾半导体发布2025年年度业绩"  # GBK page decoded by its declared charset
    assert "186.4亿元" in chinese.text and chinese.language.startswith("zh")
    assert {doc.document_id for doc, _ in gathering.chunks} == {english.document_id, chinese.document_id}
    assert all(chunk.document_id == doc.document_id for doc, chunk in gathering.chunks)
    text = all_text(gathering)
    for marker in BOILERPLATE_MARKERS:
        assert marker not in text
    assert gathering.search_ms > 0 and gathering.fetch_ms > 0
    assert [result.url for result in gathering.results] == [aurora, lanwan, web_page_server.url(HANG_PATH)]


async def test_fetches_only_the_top_n(web_search_server: SearchServer, web_page_server: PageServer) -> None:
    paths = [AURORA_PATH, LANWAN_PATH, PLAIN_PATH, MALFORMED_PATH]
    web_search_server.set_results({"aurora": [web_page_server.url(p) for p in paths]})
    gathering = await web_path(web_search_server, web_page_server, n=2).gather("aurora results")
    assert gathering.pages_fetched == 2
    assert sorted(web_page_server.paths_requested()) == sorted(paths[:2])


async def test_malformed_html_and_plain_text(web_search_server: SearchServer, web_page_server: PageServer) -> None:
    malformed, plain = web_page_server.url(MALFORMED_PATH), web_page_server.url(PLAIN_PATH)
    web_search_server.set_results({"q4": [malformed, SearchHit(plain, "ATP FY2025 summary (filing)", "")]})
    gathering = await web_path(web_search_server, web_page_server).gather("aurora q4 2025")
    assert gathering.status == "ok" and gathering.pages_fetched == 2
    broken, summary = gathering.documents
    assert "$1.31 billion" in broken.text and "SCRIPT-MARKER" not in broken.text
    assert summary.title == "ATP FY2025 summary (filing)"  # a text page has no title: the search result's
    assert "Diluted EPS: $1.87" in summary.text


async def test_unsafe_and_unusable_pages_are_reported(
    web_search_server: SearchServer, web_page_server: PageServer, web_canary_server: CanaryServer
) -> None:
    urls = [web_page_server.url(p) for p in (REDIRECT_PRIVATE_PATH, REDIRECT_METADATA_PATH, BINARY_PATH, EMPTY_PATH)]
    web_search_server.set_results({"aurora": [*urls, web_page_server.url(AURORA_PATH)]})
    gathering = await web_path(web_search_server, web_page_server, n=5).gather("aurora")
    assert gathering.status == "ok"
    assert (gathering.pages_fetched, gathering.pages_failed, gathering.pages_timed_out) == (1, 4, 0)
    failures = "\n".join(gathering.failures)
    assert "loopback" in failures and "169.254.169.254" in failures
    assert "unsupported content type 'application/octet-stream'" in failures
    assert f"{urls[3]}: unreadable: no extractable text" in failures
    assert web_canary_server.requests == []


async def test_redirected_page_is_keyed_by_its_final_url(
    web_search_server: SearchServer, web_page_server: PageServer
) -> None:
    aurora = web_page_server.url(AURORA_PATH)
    web_search_server.set_results({"aurora": [web_page_server.url(REDIRECT_LOCAL_PATH), aurora]})
    gathering = await web_path(web_search_server, web_page_server).gather("aurora")
    assert [doc.source for doc in gathering.documents] == [aurora]  # the same page twice: one document
    assert gathering.pages_fetched == 2


@pytest.mark.parametrize(
    ("mode", "status"),
    [("fail", "search failed: HTTP 500"), ("hang", "search failed: timeout"), ("bad-json", "search failed: invalid")],
)
async def test_search_failure_degrades(
    web_search_server: SearchServer, web_page_server: PageServer, mode: str, status: str
) -> None:
    web_search_server.set_mode(mode)  # type: ignore[arg-type]
    gathering = await web_path(web_search_server, web_page_server, search_timeout_s=0.5).gather("aurora")
    assert gathering.status.startswith(status)
    assert gathering.documents == [] and gathering.chunks == []
    assert web_page_server.requests == []


async def test_provider_down_degrades(web_page_server: PageServer) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = WebPath(
        SearxngProvider(f"http://127.0.0.1:{port}"),
        PageFetcher(UrlGuard([web_page_server.allow_entry])),
        pages=3,
        deadline_s=DEADLINE_S,
        search_timeout_s=2.0,
    )
    gathering = await path.gather("aurora")
    assert gathering.status == "search failed: cannot reach searxng: ConnectError"


async def test_provider_bug_degrades(web_page_server: PageServer) -> None:
    class Broken:
        name = "broken"

        async def search(self, query: str, count: int, timeout_s: float) -> list[SearchResult]:
            raise KeyError("oops")

    path = WebPath(Broken(), PageFetcher(UrlGuard()), pages=3, deadline_s=1.0, search_timeout_s=1.0)
    assert (await path.gather("aurora")).status == "search failed: KeyError"


async def test_no_results(web_search_server: SearchServer, web_page_server: PageServer) -> None:
    gathering = await web_path(web_search_server, web_page_server).gather("nothing matches this")
    assert gathering.status == "no search results"
    assert gathering.pages_fetched == gathering.pages_failed == gathering.pages_timed_out == 0


async def test_all_pages_unusable(web_search_server: SearchServer, web_page_server: PageServer) -> None:
    web_search_server.set_results({"aurora": [web_page_server.url(HANG_PATH), web_page_server.url(BINARY_PATH)]})
    gathering = await web_path(web_search_server, web_page_server).gather("aurora")
    assert gathering.status == "no usable pages (1 failed, 1 timed out)"
    assert gathering.documents == []
    assert len(gathering.failures) == 2
