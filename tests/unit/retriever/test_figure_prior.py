"""The figure prior: a table of figures ranks before prose sharing the question's words unless the
question asks for a description, and stores made before the prior get the number density added."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import qdrant_edge as qe
from hybrid_kb import DIM, open_hybrid_kb, random_vectors
from qdrant_client import AsyncQdrantClient, QdrantClient
from weaverbird.v1 import retriever_pb2
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.stores import ChunkRecord, VectorStore, edge_migrations, point_id, qdrant_requests
from weaverbird_retriever.stores.base import SearchOptions
from weaverbird_retriever.stores.edge_store import EdgeStore
from weaverbird_retriever.stores.figures import asks_for_description, number_density, spaced_number_density
from weaverbird_retriever.stores.qdrant_client_store import QdrantClientStore
from weaverbird_retriever.stores.qdrant_server_store import AsyncQdrantStore


@pytest.fixture(params=["edge", "local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    s = open_hybrid_kb(request.param, tmp_path)
    yield s
    s.close()


def test_number_density_counts_figures_as_filings_write_them() -> None:
    assert number_density("Net sales 1,284.6 (12.5) $300 -3.1% 2023") == pytest.approx(5 / 7)
    assert number_density("Net sales grew in fiscal 2024.") == pytest.approx(0.0)  # "2024." ends a sentence
    assert number_density("") == 0.0 and number_density("   ") == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "Net sales 1,284.6 (12.5) $300 -3.1% 2023",
        "Revenue grew 12% to $4.2 billion in fiscal 2024, while margins (ex-items) held at 31.5%.",
        "Total assets | 12,345 | 11,002\nLiabilities | (3,210) | 2,998 — see Note 7.",
        "Café Société reported 2023-12-31 balances of €1.2m; ＥＢＩＴＤＡ ½ 12％",  # non-ASCII, no CJK
    ],
)
def test_text_without_cjk_keeps_exactly_its_spaced_density(text: str) -> None:
    # English KBs rank exactly as measured before Chinese figures were read (docs/results/retrieval.md).
    assert number_density(text) == spaced_number_density(text)


def test_unspaced_chinese_figures_count_against_word_equivalents() -> None:
    # 17 characters = 8.5 word-equivalents, plus three figures (11.5, 2019, 11.6%): 3 / 11.5.
    zh = "全国铁路发送旅客11.5亿人次，较2019年同期增长11.6%"
    assert spaced_number_density(zh) == 0.0  # how the prior read it before: no figures at all
    assert number_density(zh) == pytest.approx(3 / 11.5)
    # The same statement in English has about the same share of figures.
    en = "National railways carried 1.15 billion passengers, up 11.6% on 2019"
    assert number_density(zh) == pytest.approx(number_density(en), abs=0.05)
    # A Latin word inside the run is a word; a date is one figure; prose without figures stays 0.
    assert number_density("公司ROE为12%") == pytest.approx(1 / 3.5)  # 1.5 + ROE + 12%
    assert number_density("截至2023-12-31止") == pytest.approx(1 / 2.5)
    assert number_density("公司主要从事铁路运输业务") == 0.0
    # A spaced Chinese table row: the spaced figures count as before, the Chinese words by length.
    assert number_density("营业收入 86.47 亿元 增长 12%") == pytest.approx(2 / 6)


def test_the_figure_prior_puts_the_table_before_prose_sharing_the_questions_words(store: VectorStore) -> None:
    # The prose page repeats the question's words; the statement holds the figure.
    prose = "Net sales discussion: net sales growth, net sales drivers and the net sales outlook of Aurora."
    table = "Net sales 1,284.6 1,100.2 984.0 Cost of sales 700.1 650.3 601.9"
    vectors = random_vectors(2)
    store.upsert(
        [
            ChunkRecord(point_id(f"fig-{i}", 0), vectors[i], text, {"company": "CIRRUS"})
            for i, text in enumerate([prose, table])
        ]
    )
    query = np.zeros(DIM, np.float32)  # no dense preference: the lexical leg and the prior decide
    query[0] = 1.0
    plain = SearchOptions(mode="hybrid", text="Aurora net sales", lexical_weight=4)
    first = [h.text for h in store.search(query, 2, {"company": "CIRRUS"}, plain)]
    assert first == [prose, table]
    figures = SearchOptions(mode="hybrid", text="Aurora net sales", lexical_weight=4, figure_weight=8)
    hits = store.search(query, 2, {"company": "CIRRUS"}, figures)
    assert [h.text for h in hits] == [table, prose]
    assert hits[0].rank_score > hits[1].rank_score
    # Dense and lexical look-ups keep their own order: the prior is part of the hybrid ranking only.
    lexical = SearchOptions(mode="lexical", text="Aurora net sales", figure_weight=8)
    assert store.search(query, 2, {"company": "CIRRUS"}, lexical)[0].text == prose
    # The retriever applies its setting (RETRIEVER_FIGURE_WEIGHT) to the hybrid searches it serves.
    import asyncio

    request = retriever_pb2.SearchRequest(vector=query.tolist(), k=2, text="Aurora net sales")
    request.filter.company = "CIRRUS"
    for weight, expected in ((0.0, [prose, table]), (8.0, [table, prose])):
        servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=10, lexical_weight=4, figure_weight=weight)
        reply = asyncio.run(servicer.Search(request, None))  # type: ignore[arg-type]
        assert [h.text for h in reply.hits] == expected, weight


_PROSE = "Net sales discussion: net sales growth, net sales drivers and the net sales outlook of Aurora."
_TABLE = "Net sales 1,284.6 1,100.2 984.0 Cost of sales 700.1 650.3 601.9"


def _prior_order(store: VectorStore) -> list[str]:
    query = np.zeros(DIM, np.float32)
    query[0] = 1.0
    figures = SearchOptions(mode="hybrid", text="Aurora net sales", lexical_weight=4, figure_weight=8)
    return [h.text for h in store.search(query, 2, {"company": "CIRRUS"}, figures)]


def _prose_and_table() -> list[ChunkRecord]:
    vectors = random_vectors(2)
    return [
        ChunkRecord(point_id(f"fig-{i}", 0), vectors[i], text, {"company": "CIRRUS"})
        for i, text in enumerate([_PROSE, _TABLE])
    ]


def test_edge_adds_the_density_to_points_stored_before_the_store_kept_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge_migrations, "MIGRATE_PAGE", 1)  # one point a page: every page is read
    directory = tmp_path / "edge" / "kb"
    store = EdgeStore(directory, "kb")
    store.ensure_collection(DIM)
    store.upsert(_prose_and_table())
    assert _prior_order(store) == [_TABLE, _PROSE]
    store.close()
    # As an earlier version stored them: the same points without the density field.
    shard = qe.EdgeShard.load(str(directory))
    shard.update(qe.UpdateOperation.delete_payload([point_id(f"fig-{i}", 0) for i in range(2)], ["figure_density"]))
    shard.flush()
    shard.close()
    store = EdgeStore(directory, "kb")
    try:
        assert _prior_order(store) == [_TABLE, _PROSE]
        hit = store.search(np.ones(DIM, np.float32), 1, {"company": "CIRRUS"})[0]
        assert "figure_density" not in hit.payload  # the store's ranking field, not the chunk's metadata
    finally:
        store.close()
    shard = qe.EdgeShard.load(str(directory))
    missing = qe.Filter(must=[qe.IsEmptyCondition("figure_density")])
    assert shard.count(qe.CountRequest(filter=missing)) == 0  # every page was migrated
    shard.close()


def test_the_retriever_adds_the_density_to_a_client_collection_stored_before_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(qdrant_requests, "SCROLL_PAGE", 1)  # one point a page: every page is read
    path = str(tmp_path / "local")
    store = QdrantClientStore.local(path, "kb")
    store.ensure_collection(DIM)
    store.upsert(_prose_and_table())
    store.close()
    # Points as stored before the prior: a plain client on the same files strips their density.
    client = QdrantClient(path=path)
    client.delete_payload("kb", keys=["figure_density"], points=[point_id(f"fig-{i}", 0) for i in range(2)])
    client.close()
    store = QdrantClientStore.local(path, "kb")
    # Without the field the prior has nothing to read: the prose page, richer in the question's words, leads.
    assert _prior_order(store) == [_PROSE, _TABLE]
    import asyncio

    # A retriever that finds the collection already there upgrades it before its first search.
    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=10, lexical_weight=4, figure_weight=8)
    request = retriever_pb2.SearchRequest(vector=[1.0] + [0.0] * (DIM - 1), k=2, text="Aurora net sales")
    request.filter.company = "CIRRUS"
    reply = asyncio.run(servicer.Search(request, None))  # type: ignore[arg-type]
    assert [h.text for h in reply.hits] == [_TABLE, _PROSE]
    store.close()
    client = QdrantClient(path=path)
    assert all("figure_density" in r.payload for r in client.scroll("kb", limit=10)[0])  # every page
    client.close()


def test_the_server_store_ranks_by_the_prior_and_upgrades_old_points(monkeypatch: pytest.MonkeyPatch) -> None:
    # The asynchronous store a Qdrant server deployment uses, over qdrant-client's in-memory engine.
    import asyncio

    monkeypatch.setattr(qdrant_requests, "SCROLL_PAGE", 1)  # one point a page: every page is read
    query = [1.0] + [0.0] * (DIM - 1)
    figures = SearchOptions(mode="hybrid", text="Aurora net sales", lexical_weight=4, figure_weight=8)

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        client = AsyncQdrantClient(location=":memory:")
        store = AsyncQdrantStore(client, "kb")
        await store.ensure_collection(DIM)
        await store.upsert(_prose_and_table())
        fresh = [h.text for h in await store.search(query, 2, {"company": "CIRRUS"}, figures)]
        await client.delete_payload("kb", keys=["figure_density"], points=[point_id(f"fig-{i}", 0) for i in range(2)])
        stripped = [h.text for h in await store.search(query, 2, {"company": "CIRRUS"}, figures)]
        await store.ensure_collection(DIM)  # what the retriever does when it first finds the collection
        upgraded = [h.text for h in await store.search(query, 2, {"company": "CIRRUS"}, figures)]
        assert all("figure_density" in r.payload for r in (await client.scroll("kb", limit=10))[0])
        await store.close()
        return fresh, stripped, upgraded

    fresh, stripped, upgraded = asyncio.run(scenario())
    assert fresh == [_TABLE, _PROSE]
    assert stripped == [_PROSE, _TABLE]
    assert upgraded == [_TABLE, _PROSE]


@pytest.mark.parametrize(
    ("question", "description"),
    [
        ("What was Aurora's net sales in FY2023?", False),
        ("How much did capital expenditure change from 2022 to 2023?", False),
        ("How many stores did Best Buy have?", False),
        ("Which segment had the highest operating income?", False),
        ("Why did gross margin decline in 2023?", True),
        ("How does the company recognise revenue on service contracts?", True),
        ("What was the reason for the increase in deferred revenue?", True),
        ("Explain the nature of the restructuring liability.", True),
        ("What drove gross margin change as of FY2022 for JnJ? If gross margin is not useful, explain why.", True),
        # Instructions after the question do not make a figure question a description.
        ("Does Adobe have an improving operating margin? If it is not a useful metric, explain why.", False),
        ("What is the FY2018 fixed asset turnover ratio? It is defined as revenue / average PP&E.", False),
        ("公司营业收入下降的原因是什么？", True),
        ("公司2023年营业收入是多少？", False),
    ],
)
def test_questions_asking_for_a_description_keep_the_fusions_order(question: str, description: bool) -> None:
    # Their answer is prose, which the figure prior would push below the tables.
    assert asks_for_description(question) is description
