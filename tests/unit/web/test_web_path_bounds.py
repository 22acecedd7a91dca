"""The web path's work is bounded per question: at most max_chunks chunks (taken from every page in turn),
and nothing past the caller's deadline. Real local search and page servers."""

from __future__ import annotations

import time

from fixtures.local_web_path import local_web_path
from fixtures.web_servers import AURORA_PATH, HANG_PATH, LANWAN_PATH, PageServer, SearchServer
from weaverbird_common.docs.documents import Chunk, Document
from weaverbird_orchestrator.deadline import caller_deadline
from weaverbird_orchestrator.web import WebPath
from weaverbird_orchestrator.web.web_path import fair_share

pytest_plugins = ["fixtures.web_servers"]


def _path(search: SearchServer, pages: PageServer, max_chunks: int, deadline_s: float = 3.0) -> WebPath:
    return local_web_path(search, pages, deadline_s=deadline_s, max_chunks=max_chunks)


def _chunks(doc_id: str, n: int) -> list[tuple[Document, Chunk]]:
    doc = Document(doc_id, doc_id, f"https://{doc_id}.example/", [], "en", "", None, None, "")
    return [(doc, Chunk(doc_id, i, f"{doc_id} {i}", None)) for i in range(n)]


def test_fair_share_takes_every_document_in_turn() -> None:
    chunks = _chunks("long", 10) + _chunks("a", 2) + _chunks("b", 1)
    kept = fair_share(chunks, 6)
    assert [(d.document_id, c.index) for d, c in kept] == [
        ("long", 0), ("a", 0), ("b", 0), ("long", 1), ("a", 1), ("long", 2),
    ]  # fmt: skip
    assert fair_share(chunks, 50) == chunks


async def test_chunks_are_capped_per_question(web_search_server: SearchServer, web_page_server: PageServer) -> None:
    urls = [web_page_server.url(AURORA_PATH), web_page_server.url(LANWAN_PATH)]
    web_search_server.set_results({"aurora": urls})
    full = await _path(web_search_server, web_page_server, max_chunks=1000).gather("aurora revenue")
    assert len(full.chunks) > 2 and full.chunks_dropped == 0
    capped = await _path(web_search_server, web_page_server, max_chunks=2).gather("aurora revenue")
    assert len(capped.chunks) == 2 and capped.chunks_dropped == len(full.chunks) - 2
    assert {d.document_id for d, _ in capped.chunks} == {d.document_id for d in capped.documents}  # both pages


async def test_the_fetch_ends_by_the_callers_deadline(
    web_search_server: SearchServer, web_page_server: PageServer
) -> None:
    web_search_server.set_results({"aurora": [web_page_server.url(HANG_PATH)]})
    started = time.monotonic()
    with caller_deadline(1.5):  # the page hangs; the path's own fetch deadline would be 30 s
        gathering = await _path(web_search_server, web_page_server, 48, deadline_s=30).gather("aurora revenue")
    assert gathering.pages_timed_out == 1 and gathering.status.startswith("no usable pages")
    assert time.monotonic() - started < 10  # generous: the bound is the caller's 1.5 s, not 30 s


async def test_no_web_work_starts_when_the_deadline_is_too_close(
    web_search_server: SearchServer, web_page_server: PageServer
) -> None:
    web_search_server.set_results({"aurora": [web_page_server.url(AURORA_PATH)]})
    with caller_deadline(0.1):
        gathering = await _path(web_search_server, web_page_server, 48).gather("aurora revenue")
    assert gathering.status == "search skipped: the request's deadline is too close"
    assert web_page_server.requests == [] and gathering.chunks == []
