"""Lexical and hybrid search, run unchanged on Qdrant Edge and qdrant-client local mode; migration of
collections made before lexical vectors; the catalog read from payload facets. The figure prior is in
test_figure_prior.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
import qdrant_edge as qe
from hybrid_kb import DIM, DOCS, open_hybrid_kb, random_vectors, texts_of
from qdrant_client import QdrantClient, models
from weaverbird.v1 import retriever_pb2
from weaverbird_common.errors import FailedPrecondition, InvalidArgument
from weaverbird_retriever.catalog import read_catalog
from weaverbird_retriever.lexical import encoder
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.stores import ChunkRecord, VectorStore, point_id
from weaverbird_retriever.stores.base import LexicalMissing, SearchOptions
from weaverbird_retriever.stores.edge_store import EdgeStore
from weaverbird_retriever.stores.qdrant_client_store import QdrantClientStore


@pytest.fixture(params=["edge", "local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    s = open_hybrid_kb(request.param, tmp_path)
    yield s
    s.close()


def test_lexical_search_finds_the_words_of_the_query(store: VectorStore) -> None:
    hits = store.search(random_vectors(1)[0], 3, None, SearchOptions(mode="lexical", text="Aurora net sales"))
    assert hits[0].text == DOCS[0][0]
    assert all("Borealis" not in t for t in texts_of(hits)[:2])


def test_lexical_stems_english_words(store: VectorStore) -> None:
    # "repurchasing dividends" shares only stems with "repurchased ... dividend".
    hits = store.search(random_vectors(1)[0], 1, None, SearchOptions(mode="lexical", text="repurchasing dividends"))
    assert hits[0].text == DOCS[1][0]


def test_lexical_segments_chinese(store: VectorStore) -> None:
    hits = store.search(
        random_vectors(1)[0], 1, None, SearchOptions(mode="lexical", text="青松新能源的营业收入是多少？")
    )
    assert hits[0].text == DOCS[4][0]
    hits = store.search(random_vectors(1)[0], 1, None, SearchOptions(mode="lexical", text="华岳银行不良贷款率"))
    assert hits[0].text == DOCS[5][0]


def test_hybrid_ranks_lexical_and_dense_matches(store: VectorStore) -> None:
    vectors = random_vectors(len(DOCS))
    # The query vector is doc 3's own vector; the words are doc 0's: fusion keeps both near the top.
    hits = store.search(vectors[3], 3, None, SearchOptions(mode="hybrid", text="Aurora segment net sales"))
    assert hits[0].text == DOCS[0][0]
    assert DOCS[3][0] in texts_of(hits)
    assert DOCS[3][0] not in texts_of(
        store.search(vectors[3], 3, None, SearchOptions(mode="lexical", text="Aurora segment net sales"))
    )


@pytest.mark.parametrize("fusion", ["rrf", "dbsf"])
def test_hybrid_applies_filters_to_both_legs(store: VectorStore, fusion: str) -> None:
    vectors = random_vectors(len(DOCS))
    options = SearchOptions(mode="hybrid", text="Aurora net sales dividend", fusion=fusion)  # type: ignore[arg-type]
    hits = store.search(vectors[3], 10, {"company": "BOREALIS", "year": 2022}, options)
    assert texts_of(hits) == [DOCS[3][0]]


def test_every_mode_reports_the_cosine_as_score(store: VectorStore) -> None:
    vectors = random_vectors(len(DOCS))
    query = vectors[2]
    expected = {
        DOCS[i][0]: float(vectors[i] @ query / (np.linalg.norm(vectors[i]) * np.linalg.norm(query)))
        for i in range(len(DOCS))
    }
    for mode in ("dense", "lexical", "hybrid"):
        hits = store.search(query, 4, None, SearchOptions(mode=mode, text="Borealis freight operating income"))  # type: ignore[arg-type]
        assert hits
        for hit in hits:
            assert hit.score == pytest.approx(expected[hit.text], abs=1e-4), mode
    hybrid = store.search(query, 4, None, SearchOptions(mode="hybrid", text="Borealis freight"))
    assert [h.rank_score for h in hybrid] == sorted((h.rank_score for h in hybrid), reverse=True)


def test_lexical_mode_needs_text(store: VectorStore) -> None:
    with pytest.raises(Exception, match="needs the query text"):
        store.search(random_vectors(1)[0], 3, None, SearchOptions(mode="hybrid", text="  "))


def test_facets_count_values_and_list_aliases(store: VectorStore) -> None:
    assert dict(store.facet("company", 10)) == {"AURORA": 2, "BOREALIS": 2, "QINGSONG": 1, "HUAYUE": 1}
    assert dict(store.facet("aliases", 10, {"company": "AURORA"})) == {"Aurora": 2, "AUR": 2}


def test_catalog_lists_companies_with_aliases_and_years(store: VectorStore) -> None:
    catalog = read_catalog(store, 100)
    by_company = {c.company: c for c in catalog.companies}
    assert set(by_company) == {"AURORA", "BOREALIS", "QINGSONG", "HUAYUE"}
    assert list(by_company["AURORA"].aliases) == ["AUR", "Aurora"]
    assert list(by_company["AURORA"].years) == [2022, 2023]
    assert [(q.year, q.quarter) for q in by_company["AURORA"].quarters] == [(2022, 2)]
    assert not by_company["BOREALIS"].quarters  # annual documents only
    assert by_company["BOREALIS"].chunks == 2
    assert {f.value: f.chunks for f in catalog.languages} == {"en": 4, "zh": 2}
    assert {f.value: f.chunks for f in catalog.doc_types} == {"10K": 4, "ANNUAL": 2}
    assert catalog.points == len(DOCS)


def test_catalog_lists_every_quarter_beside_the_annual_documents(store: VectorStore) -> None:
    # As the ingester stores them: quarter 0 on annual documents (the most chunks), 1-4 on quarterly ones.
    quarters = [0, 0, 0, 1, 2, 3, 4]
    vectors = random_vectors(len(quarters))
    store.upsert(
        [
            ChunkRecord(
                point_id(f"cirrus-{i}", 0),
                vectors[i],
                "Cirrus results.",
                {"company": "CIRRUS", "year": 2023, "quarter": q},
            )
            for i, q in enumerate(quarters)
        ]
    )
    cirrus = next(c for c in read_catalog(store, 100).companies if c.company == "CIRRUS")
    assert [(q.year, q.quarter) for q in cirrus.quarters] == [(2023, 1), (2023, 2), (2023, 3), (2023, 4)]


def test_catalog_counts_the_chunks_of_a_company_that_carry_no_year(store: VectorStore) -> None:
    # Web pages whose text gives no fiscal year are stored with year 0: they may be about any year.
    pages = [(2023, "Nimbus results for fiscal 2023."), (0, "Nimbus net sales in 2019 rose."), (0, "Nimbus results.")]
    vectors = random_vectors(len(pages))
    store.upsert(
        [
            ChunkRecord(point_id(f"nimbus-{i}", 0), vectors[i], text, {"company": "NIMBUS", "year": y})
            for i, (y, text) in enumerate(pages)
        ]
    )
    by_company = {c.company: c for c in read_catalog(store, 100).companies}
    assert list(by_company["NIMBUS"].years) == [2023]
    assert by_company["NIMBUS"].undated_chunks == 2
    assert by_company["AURORA"].undated_chunks == 0
    # The coverage gate's question: does an undated page of the company mention the year?
    undated = {"company": "NIMBUS", "year": 0}
    assert texts_of(store.search(vectors[0], 1, undated, SearchOptions(mode="lexical", text="2019"))) == [pages[1][1]]
    assert not store.search(vectors[0], 1, undated, SearchOptions(mode="lexical", text="2023"))


# -- collections made before lexical vectors ----------------------------------------------------------


def _legacy_edge_shard(directory: Path, texts: list[str]) -> np.ndarray:
    """A shard as the previous release wrote it: one unnamed dense vector, no sparse vectors."""
    config = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine))
    shard = qe.EdgeShard.create(str(directory), config)
    vectors = random_vectors(len(texts))
    shard.update(
        qe.UpdateOperation.upsert_points(
            [
                qe.Point(point_id("old", i), vectors[i].tolist(), {"text": t, "document_id": "old"})
                for i, t in enumerate(texts)
            ]
        )
    )
    shard.flush()
    shard.close()
    return vectors


def test_edge_migrates_a_shard_made_before_lexical_vectors(tmp_path: Path) -> None:
    directory = tmp_path / "edge" / "kb"
    texts = [t for t, *_ in DOCS]
    vectors = _legacy_edge_shard(directory, texts)
    store = EdgeStore(directory, "kb")
    try:
        assert store.lexical
        hits = store.search(vectors[0], 1, None, SearchOptions(mode="lexical", text="Borealis capital expenditures"))
        assert hits[0].text == DOCS[3][0]
        dense = store.search(vectors[5], 1)
        assert dense[0].text == DOCS[5][0] and dense[0].score == pytest.approx(1.0, abs=1e-4)
        # New writes carry both vectors.
        record = ChunkRecord(point_id("new", 0), vectors[1], "Cobalt Mining royalty income", {"document_id": "n"})
        store.upsert([record])
        hits = store.search(vectors[0], 1, None, SearchOptions(mode="hybrid", text="cobalt royalty"))
        assert hits[0].text == "Cobalt Mining royalty income"
    finally:
        store.close()


def test_client_store_keeps_a_legacy_collection_dense_and_explains_hybrid(tmp_path: Path) -> None:
    # The legacy collection is written by a plain client, then opened by the store from the same files.
    client = QdrantClient(path=str(tmp_path / "local"))
    client.create_collection("kb", vectors_config=models.VectorParams(size=DIM, distance=models.Distance.COSINE))
    vectors = random_vectors(2)
    client.upsert(
        "kb",
        [
            models.PointStruct(
                id=str(uuid.uuid4()), vector=vectors[i].tolist(), payload={"text": f"t{i}", "document_id": "d"}
            )
            for i in range(2)
        ],
    )
    client.close()
    store = QdrantClientStore.local(str(tmp_path / "local"), "kb")
    assert not store.lexical
    assert store.search(vectors[1], 1)[0].text == "t1"
    with pytest.raises(LexicalMissing):
        store.search(vectors[1], 1, None, SearchOptions(mode="hybrid", text="t1"))
    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=10)
    import asyncio

    # Mode left unspecified: the legacy collection still answers, densely.
    reply = asyncio.run(servicer.Search(retriever_pb2.SearchRequest(vector=vectors[1].tolist(), k=1, text="t1"), None))  # type: ignore[arg-type]
    assert reply.mode == retriever_pb2.SEARCH_MODE_DENSE and reply.hits[0].text == "t1"
    with pytest.raises(FailedPrecondition, match="Re-index"):
        asyncio.run(
            servicer.Search(
                retriever_pb2.SearchRequest(
                    vector=vectors[1].tolist(), k=1, text="t1", mode=retriever_pb2.SEARCH_MODE_HYBRID
                ),
                None,
            )
        )  # type: ignore[arg-type]
    store.close()


# -- the gRPC adapter ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [
        ("", retriever_pb2.SEARCH_MODE_UNSPECIFIED, retriever_pb2.SEARCH_MODE_DENSE),
        ("Aurora net sales", retriever_pb2.SEARCH_MODE_UNSPECIFIED, retriever_pb2.SEARCH_MODE_HYBRID),
        ("Aurora net sales", retriever_pb2.SEARCH_MODE_LEXICAL, retriever_pb2.SEARCH_MODE_LEXICAL),
        ("Aurora net sales", retriever_pb2.SEARCH_MODE_DENSE, retriever_pb2.SEARCH_MODE_DENSE),
    ],
)
def test_servicer_picks_the_mode(store: VectorStore, text: str, mode: int, expected: int) -> None:
    import asyncio

    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=10)
    request = retriever_pb2.SearchRequest(vector=random_vectors(1)[0].tolist(), k=3, text=text, mode=mode)  # type: ignore[arg-type]
    reply = asyncio.run(servicer.Search(request, None))  # type: ignore[arg-type]
    assert reply.mode == expected
    # The lexical leg alone returns only chunks sharing a word with the query.
    assert len(reply.hits) == (2 if expected == retriever_pb2.SEARCH_MODE_LEXICAL else 3)
    if expected != retriever_pb2.SEARCH_MODE_DENSE:
        assert reply.hits[0].text == DOCS[0][0]
        assert reply.hits[0].payload.aliases  # list payload survives the round trip


def test_servicer_reports_each_hits_share_of_the_query_terms_when_asked(store: VectorStore) -> None:
    import asyncio

    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=10)
    vector = random_vectors(1)[0].tolist()
    # "sales" and "rose" are in the first chunk, "Borealis" is not; stop words ("of", "the") do not count.
    asked = retriever_pb2.SearchRequest(
        vector=vector, k=6, text="Net sales of the Borealis segment rose", term_coverage=True
    )
    reply = asyncio.run(servicer.Search(asked, None))  # type: ignore[arg-type]
    shares = {h.text: h.term_coverage for h in reply.hits}
    assert all(h.HasField("term_coverage") for h in reply.hits)
    # Terms: net, sale, borea(l)is, segment, rose -> the Aurora chunk holds 4 of 5.
    assert shares[DOCS[0][0]] == pytest.approx(0.8)
    assert shares[DOCS[5][0]] == 0.0  # a Chinese chunk shares no word
    # Chinese is segmented: the question's words 营业收入 / 增长 are in the 青松 chunk, not the 华岳 one.
    zh = retriever_pb2.SearchRequest(vector=vector, k=6, text="青松新能源营业收入增长", term_coverage=True)
    zh_shares = {h.text: h.term_coverage for h in asyncio.run(servicer.Search(zh, None)).hits}  # type: ignore[arg-type]
    assert zh_shares[DOCS[4][0]] > 0.8 > zh_shares.get(DOCS[5][0], 0.0)
    # Not asked for: not measured, so a caller cannot mistake it for "no word in common".
    plain = retriever_pb2.SearchRequest(vector=vector, k=3, text="Net sales")
    assert not any(h.HasField("term_coverage") for h in asyncio.run(servicer.Search(plain, None)).hits)  # type: ignore[arg-type]


def test_term_coverage_counts_content_words_only() -> None:
    lexical = encoder()
    # Question and function words (Chinese and English) are not terms: "the revenue" asks for revenue.
    assert lexical.terms("青松新能源的营业收入是多少？") == lexical.terms("青松新能源 营业收入")
    assert lexical.terms("What was the revenue?") == lexical.terms("revenue")
    assert lexical.terms("的 是 什么") == frozenset()
    # Nor is the question's framing: a request, or where the asker read it.
    assert lexical.terms("根据新闻资讯，请问青松新能源的营业收入是多少？") == lexical.terms("青松新能源 营业收入")
    assert lexical.terms("According to the 10-K, please state the revenue") == lexical.terms("10-K state revenue")
    # Content words that look like framing stay: 提供担保 (guarantees given), reported revenue.
    assert lexical.terms("提供担保") != lexical.terms("担保")
    assert lexical.terms("reported revenue") != lexical.terms("revenue")


def test_servicer_refuses_lexical_without_text(store: VectorStore) -> None:
    import asyncio

    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=10)
    request = retriever_pb2.SearchRequest(
        vector=random_vectors(1)[0].tolist(), k=3, mode=retriever_pb2.SEARCH_MODE_LEXICAL
    )
    with pytest.raises(InvalidArgument, match="needs the query text"):
        asyncio.run(servicer.Search(request, None))  # type: ignore[arg-type]
    assert grpc.StatusCode.INVALID_ARGUMENT == InvalidArgument.code


def test_encoder_weights_are_the_same_for_every_backend() -> None:
    # Both backends index what this encoder returns; one encoder means one set of term ids.
    doc = encoder().document("Revenue revenue grew")
    assert len(doc.indices) == 3 and max(doc.values) > min(doc.values)  # revenue, grew, the revenue concept
    assert encoder().query("revenue grew").values == [1.0, 1.0]


def test_lexical_weight_tilts_the_fusion_towards_the_words(store: VectorStore) -> None:
    vectors = random_vectors(len(DOCS))
    # Dense leg: doc 3's own vector ranks doc 3 first; lexical leg: only docs 0 and 1 hold "Aurora".
    # A heavy lexical leg puts both word matches above doc 3; a light one gives the words less say.
    text = "Aurora dividend repurchased"
    heavy = store.search(vectors[3], 3, None, SearchOptions(mode="hybrid", fusion="rrf", text=text, lexical_weight=5.0))
    light = store.search(
        vectors[3], 3, None, SearchOptions(mode="hybrid", fusion="rrf", text=text, lexical_weight=0.01)
    )
    assert set(texts_of(heavy)[:2]) == {DOCS[0][0], DOCS[1][0]}
    by_text = {h.text: h.rank_score for h in heavy}
    assert all(h.rank_score < by_text[h.text] for h in light if h.text in (DOCS[0][0], DOCS[1][0]))
    with pytest.raises(Exception, match="lexical_weight"):
        store.search(vectors[3], 3, None, SearchOptions(mode="hybrid", fusion="rrf", text=text, lexical_weight=0.0))


def test_dbsf_lexical_weight_counts_the_lexical_leg_that_many_times(store: VectorStore) -> None:
    vectors = random_vectors(len(DOCS))
    text = "Aurora dividend repurchased"
    plain = store.search(vectors[3], 3, None, SearchOptions(mode="hybrid", text=text))
    heavy = store.search(vectors[3], 3, None, SearchOptions(mode="hybrid", text=text, lexical_weight=5.0))
    # Doc 3 matches none of the words: its fused score is its dense share alone, the same in both; the
    # word matches gain four more lexical shares each, so they end above it.
    assert set(texts_of(heavy)[:2]) == {DOCS[0][0], DOCS[1][0]}
    by_text = {h.text: h.rank_score for h in heavy}
    assert all(h.rank_score < by_text[h.text] for h in plain if h.text in (DOCS[0][0], DOCS[1][0]))
    with pytest.raises(Exception, match="whole number"):
        store.search(vectors[3], 3, None, SearchOptions(mode="hybrid", text=text, lexical_weight=2.5))


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_exclude_leaves_matching_points_out_of_every_leg(store: VectorStore, mode: str) -> None:
    vectors = random_vectors(len(DOCS))
    options = SearchOptions(mode=mode, text="Aurora net sales dividend", exclude={"company": "AURORA"})  # type: ignore[arg-type]
    hits = store.search(vectors[0], 6, None, options)
    assert (hits or mode == "lexical") and all(h.payload["company"] != "AURORA" for h in hits)
    both = SearchOptions(mode=mode, text="Borealis freight", exclude={"year": 2022})  # type: ignore[arg-type]
    assert [h.text for h in store.search(vectors[2], 6, {"company": "BOREALIS"}, both)] == [DOCS[2][0]]


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_vector_is_the_callers_error(store: VectorStore, bad: float) -> None:
    import asyncio

    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=10)
    vector = random_vectors(1)[0].tolist()
    vector[3] = bad
    with pytest.raises(InvalidArgument, match="NaN or infinity"):
        asyncio.run(servicer.Search(retriever_pb2.SearchRequest(vector=vector, k=3, text="Aurora"), None))  # type: ignore[arg-type]
    chunk = retriever_pb2.Chunk(vector=vector, text="x")
    chunk.payload.document_id = "doc-x"
    with pytest.raises(InvalidArgument, match="NaN or infinity"):
        asyncio.run(servicer.Upsert(retriever_pb2.UpsertRequest(chunks=[chunk]), None))  # type: ignore[arg-type]


def test_a_point_id_that_is_not_a_uuid_is_the_callers_error(store: VectorStore) -> None:
    import asyncio

    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=10)
    chunk = retriever_pb2.Chunk(id="not-a-uuid", vector=random_vectors(1)[0].tolist(), text="x")
    chunk.payload.document_id = "doc-x"
    with pytest.raises(InvalidArgument, match="not a UUID"):
        asyncio.run(servicer.Upsert(retriever_pb2.UpsertRequest(chunks=[chunk]), None))  # type: ignore[arg-type]


def test_settings_refuse_a_fractional_dbsf_weight_at_start_up() -> None:
    from pydantic import ValidationError
    from weaverbird_retriever.settings import RetrieverSettings

    with pytest.raises(ValidationError, match="whole number with DBSF"):
        RetrieverSettings(lexical_weight=2.5)
    assert RetrieverSettings(lexical_weight=2.5, fusion="rrf").lexical_weight == 2.5
    assert float(RetrieverSettings().lexical_weight).is_integer()


def _catalog_over(store: VectorStore, field: str, chunks: list[tuple[str, str]]) -> dict:
    """The catalog's companies after upserting one chunk per (company, value of `field`; "" leaves it out)."""
    vectors = random_vectors(len(chunks))
    store.upsert(
        [
            ChunkRecord(
                point_id(f"{field}-{i}", 0),
                vectors[i],
                f"{company} results.",
                {"company": company, **({field: value} if value else {})},
            )
            for i, (company, value) in enumerate(chunks)
        ]
    )
    return {c.company: c for c in read_catalog(store, 100).companies}


def test_catalog_gives_a_companys_newest_document_date_only_when_every_chunk_is_dated(store: VectorStore) -> None:
    # What the KB can know about a company ends at its newest document, unless some page carries no
    # date (it may be about anything later); a date that is not ISO counts as none.
    chunks = [
        ("CIRRUS", "2023-05-05"),
        ("CIRRUS", "2023-04-25"),
        ("CIRRUS", "2022-12-31"),
        ("NIMBUS", "2023-08-30"),
        ("NIMBUS", ""),
        ("STRATUS", "2023-01-10"),
        ("STRATUS", "last Tuesday"),
    ]
    by_company = _catalog_over(store, "published_date", chunks)
    assert by_company["CIRRUS"].latest_date == "2023-05-05"
    assert by_company["NIMBUS"].latest_date == ""
    assert by_company["STRATUS"].latest_date == ""
    assert by_company["AURORA"].latest_date == ""  # no dates at all


def test_catalog_lists_each_companys_document_kinds_with_their_chunks(store: VectorStore) -> None:
    # The orchestrator trusts a company's kinds only when they account for all its chunks.
    chunks = [("CIRRUS", "10K"), ("CIRRUS", "10K"), ("CIRRUS", "10Q"), ("NIMBUS", "EARNINGS"), ("NIMBUS", "")]
    by_company = _catalog_over(store, "doc_type", chunks)
    assert {k.value: k.chunks for k in by_company["CIRRUS"].doc_types} == {"10K": 2, "10Q": 1}
    nimbus = by_company["NIMBUS"]
    assert {k.value: k.chunks for k in nimbus.doc_types} == {"EARNINGS": 1} and nimbus.chunks == 2
