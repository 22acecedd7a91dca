"""Listing and showing the knowledge base's documents: the plain logic (filters, order, page tokens) and the
retriever's ListDocuments / GetDocument over real stores (Qdrant Edge, qdrant-client local mode, and the
asynchronous server store over AsyncQdrantClient's local mode)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import timestamp_pb2
from qdrant_client import AsyncQdrantClient
from weaverbird.v1 import common_pb2, retriever_pb2
from weaverbird_common.errors import InvalidArgument, NotFound
from weaverbird_retriever import documents, provenance
from weaverbird_retriever.documents import Head, decode_token, encode_token, matches, paginate
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.stores import open_store
from weaverbird_retriever.stores.qdrant_server_store import AsyncQdrantStore

DIM = 16
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _stamp(when: datetime) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(when)
    return stamp


# ------------------------------------------------------------------------------------ plain logic


def _head(document_id: str, added: datetime | None = None, **payload: object) -> Head:
    fields: dict[str, object] = {"document_id": document_id, **payload}
    if added is not None:
        fields[provenance.ADDED_AT_KEY] = added.isoformat()
    return Head(document_id, fields)  # type: ignore[arg-type]


def test_pages_are_newest_first_and_tokens_resume_after_the_last_shown() -> None:
    heads = [_head(f"d{i}", T0 + timedelta(minutes=i)) for i in range(5)] + [_head("legacy")]
    seen, token = [], ""
    for _ in range(10):
        page, token = paginate(heads, 2, token)
        seen += [h.document_id for h in page]
        if not token:
            break
    assert seen == ["d4", "d3", "d2", "d1", "d0", "legacy"]  # documents without a time come last

    # A document added after the first page was read does not shift the later pages.
    _, token = paginate(heads, 2, "")
    grown = [*heads, _head("new", T0 + timedelta(hours=1))]
    page2, _ = paginate(grown, 2, token)
    assert [h.document_id for h in page2] == ["d2", "d1"]


@pytest.mark.parametrize("token", ["garbage!", encode_token((0, 1.0, "x"))[:-3], "W10", "WzIsMCwwLCJ4Il0"])
def test_a_token_this_server_did_not_issue_is_invalid_argument(token: str) -> None:
    with pytest.raises(InvalidArgument, match="page_token"):
        decode_token(token)


def test_filters_on_origin_company_alias_language_and_time_with_legacy_payloads() -> None:
    web = _head("w", T0, origin="web", document_origin="web", company="AURORA", aliases=["ATP"], language="en")
    legacy_web = _head("lw", None, origin="web", language="zh")  # stored before provenance
    legacy_local = _head("ll", None, origin="local", company="青松新能源", language="zh")
    user = _head("u", T0 + timedelta(days=2), origin="web", document_origin="user", language="en")

    def listed(**flt: object) -> set[str]:
        f = retriever_pb2.DocumentFilter(**flt)  # type: ignore[arg-type]
        return {h.document_id for h in (web, legacy_web, legacy_local, user) if matches(h, f)}

    assert listed() == {"w", "lw", "ll", "u"}
    assert listed(origin=retriever_pb2.DOCUMENT_ORIGIN_WEB) == {"w", "lw"}
    assert listed(origin=retriever_pb2.DOCUMENT_ORIGIN_USER) == {"u"}
    assert listed(origin=retriever_pb2.DOCUMENT_ORIGIN_LOCAL) == {"ll"}
    assert listed(company="aurora") == listed(company="atp") == {"w"}
    assert listed(company="青松新能源", language="zh") == {"ll"}
    assert listed(added_since=_stamp(T0 + timedelta(days=1))) == {"u"}
    assert listed(added_since=_stamp(T0)) == {"w", "u"}  # at or after; no time recorded = left out


def _found_on_the_web(question: str, score: float, searched_s_before: int) -> retriever_pb2.DocumentProvenance:
    """A web page saved at T0, found `searched_s_before` seconds earlier by `question`."""
    return retriever_pb2.DocumentProvenance(
        origin=retriever_pb2.DOCUMENT_ORIGIN_WEB,
        added_at=_stamp(T0),
        question=question,
        best_score=score,
        found_at=_stamp(T0 - timedelta(seconds=searched_s_before)),
    )


def test_provenance_round_trips_through_the_payload() -> None:
    given = _found_on_the_web("What was Aurora's revenue?", 0.625, searched_s_before=3)
    payload = provenance.to_payload(given)
    assert payload[provenance.ADDED_AT_KEY] == "2026-03-01T12:00:00+00:00"
    assert provenance.from_payload({**payload, "origin": "web"}) == given
    bare = provenance.from_payload({"origin": "local"})
    assert bare.origin == retriever_pb2.DOCUMENT_ORIGIN_LOCAL
    assert not bare.HasField("best_score") and not bare.HasField("added_at")


# ------------------------------------------------------------------------------------ the RPCs


def _vector(seed: int) -> list[float]:
    v = np.random.default_rng(seed).normal(size=DIM)
    return (v / np.linalg.norm(v)).tolist()


def _chunks(
    document_id: str, n: int, *, prov: retriever_pb2.DocumentProvenance | None, **payload: object
) -> list[retriever_pb2.Chunk]:
    out = []
    for i in range(n):
        chunk = retriever_pb2.Chunk(
            vector=_vector(hash((document_id, i)) % 10_000),
            text=f"{document_id} chunk {i} text",
            payload=common_pb2.ChunkPayload(document_id=document_id, chunk_index=i, **payload),  # type: ignore[arg-type]
        )
        if prov is not None:
            chunk.provenance.CopyFrom(prov)
        out.append(chunk)
    return out


@pytest.fixture(params=["edge", "local", "server-api"])
async def servicer(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RetrieverServicer]:
    if request.param == "server-api":
        store = AsyncQdrantStore(AsyncQdrantClient(location=":memory:"), "docs")
    else:
        store = open_store(request.param, path=str(tmp_path), url=None, api_key=None, collection="docs")
    svc = RetrieverServicer(store, max_k=10, max_upsert_batch=100)  # type: ignore[arg-type]
    yield svc
    await svc._store.close()


async def _fill(svc: RetrieverServicer) -> None:
    web = _found_on_the_web("What was Aurora Tidal Power's revenue in fiscal 2025?", 0.61, searched_s_before=2)
    user = retriever_pb2.DocumentProvenance(
        origin=retriever_pb2.DOCUMENT_ORIGIN_USER, added_at=_stamp(T0 + timedelta(1))
    )
    local = retriever_pb2.DocumentProvenance(
        origin=retriever_pb2.DOCUMENT_ORIGIN_LOCAL, added_at=_stamp(T0 + timedelta(2))
    )
    batches = [
        _chunks("aurora", 3, prov=web, title="Aurora FY2025", source="http://x/a.html", origin=common_pb2.ORIGIN_WEB,
                company="AURORA", language="en", year=2025),
        _chunks("saved", 2, prov=user, title="Saved page", source="http://x/s.html", origin=common_pb2.ORIGIN_WEB,
                language="en"),
        _chunks("report", 4, prov=local, title="青松 2024", source="zh.md", company="青松新能源", language="zh"),
        _chunks("legacy", 1, prov=None, title="Old note", source="old.md", language="en"),
    ]  # fmt: skip
    for chunks in batches:
        await svc.Upsert(retriever_pb2.UpsertRequest(chunks=chunks), None)  # type: ignore[arg-type]


async def _list(svc: RetrieverServicer, **request: object) -> retriever_pb2.ListDocumentsResponse:
    return await svc.ListDocuments(retriever_pb2.ListDocumentsRequest(**request), None)  # type: ignore[arg-type]


async def test_list_filter_page_show_and_delete(servicer: RetrieverServicer) -> None:
    empty = await _list(servicer)
    assert list(empty.documents) == [] and empty.total_size == 0  # no collection yet: an empty KB
    await _fill(servicer)

    everything = await _list(servicer)
    assert [d.document_id for d in everything.documents] == ["report", "saved", "aurora", "legacy"]
    assert {d.document_id: d.chunks for d in everything.documents} == {
        "report": 4,
        "saved": 2,
        "aurora": 3,
        "legacy": 1,
    }
    assert everything.total_size == 4 and everything.next_page_token == ""

    web = await _list(servicer, filter=retriever_pb2.DocumentFilter(origin=retriever_pb2.DOCUMENT_ORIGIN_WEB))
    assert [d.document_id for d in web.documents] == ["aurora"]
    zh = await _list(servicer, filter=retriever_pb2.DocumentFilter(language="zh", company="青松新能源"))
    assert [d.document_id for d in zh.documents] == ["report"]
    recent = await _list(servicer, filter=retriever_pb2.DocumentFilter(added_since=_stamp(T0 + timedelta(hours=1))))
    assert [d.document_id for d in recent.documents] == ["report", "saved"]

    pages, token = [], ""
    while True:
        reply = await _list(servicer, page_size=3, page_token=token)
        pages.append([d.document_id for d in reply.documents])
        assert reply.total_size == 4
        token = reply.next_page_token
        if not token:
            break
    assert pages == [["report", "saved", "aurora"], ["legacy"]]

    shown = await servicer.GetDocument(retriever_pb2.GetDocumentRequest(document_id="aurora"), None)  # type: ignore[arg-type]
    doc = shown.document
    assert (doc.title, doc.source, doc.company, doc.year, doc.chunks) == (
        "Aurora FY2025",
        "http://x/a.html",
        "AURORA",
        2025,
        3,
    )
    assert doc.provenance.origin == retriever_pb2.DOCUMENT_ORIGIN_WEB
    assert doc.provenance.question.startswith("What was Aurora")
    assert math.isclose(doc.provenance.best_score, 0.61, rel_tol=1e-6)
    assert doc.provenance.added_at.ToDatetime(tzinfo=UTC) == T0
    assert shown.preview == "aurora chunk 0 text"
    legacy = await servicer.GetDocument(retriever_pb2.GetDocumentRequest(document_id="legacy"), None)  # type: ignore[arg-type]
    assert legacy.document.provenance.origin == retriever_pb2.DOCUMENT_ORIGIN_LOCAL
    assert not legacy.document.provenance.HasField("added_at")

    # Search hits keep their old payload: provenance fields do not leak into ChunkPayload.
    hits = await servicer.Search(retriever_pb2.SearchRequest(vector=_vector(1), k=10), None)  # type: ignore[arg-type]
    assert len(hits.hits) == 10

    deleted = await servicer.DeleteDocument(retriever_pb2.DeleteDocumentRequest(document_id="aurora"), None)  # type: ignore[arg-type]
    assert deleted.deleted == 3
    after = await _list(servicer)
    assert "aurora" not in [d.document_id for d in after.documents] and after.total_size == 3
    with pytest.raises(NotFound, match="aurora"):
        await servicer.GetDocument(retriever_pb2.GetDocumentRequest(document_id="aurora"), None)  # type: ignore[arg-type]


async def test_bad_requests_are_invalid_argument(servicer: RetrieverServicer) -> None:
    with pytest.raises(InvalidArgument, match="page_size"):
        await _list(servicer, page_size=documents.MAX_PAGE_SIZE + 1)
    with pytest.raises(InvalidArgument, match="page_token"):
        await _list(servicer, page_token="not-a-token")
    with pytest.raises(InvalidArgument, match=r"filter\.origin"):
        await _list(servicer, filter=retriever_pb2.DocumentFilter(origin=7))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="document_id"):
        await servicer.GetDocument(retriever_pb2.GetDocumentRequest(document_id=" "), None)  # type: ignore[arg-type]
    bad = _chunks("x", 1, prov=retriever_pb2.DocumentProvenance(best_score=float("nan")), title="x")
    with pytest.raises(InvalidArgument, match=r"chunks\[0\].provenance.best_score"):
        await servicer.Upsert(retriever_pb2.UpsertRequest(chunks=bad), None)  # type: ignore[arg-type]
    far = _chunks("x", 1, prov=retriever_pb2.DocumentProvenance(added_at=timestamp_pb2.Timestamp(seconds=10**13)))
    with pytest.raises(InvalidArgument, match="added_at"):
        await servicer.Upsert(retriever_pb2.UpsertRequest(chunks=far), None)  # type: ignore[arg-type]
