"""Vector store contract, run unchanged against Qdrant Edge and qdrant-client local mode (disk and memory)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from weaverbird_retriever.stores import (
    ChunkRecord,
    CollectionMissing,
    DimensionMismatch,
    StoreError,
    VectorStore,
    open_store,
    point_id,
)
from weaverbird_retriever.stores.edge_store import EdgeStore

DIM = 32
BACKENDS = ["edge", "local-path", "local-memory"]
PERSISTENT = ["edge", "local-path"]

Opener = Callable[[], VectorStore]


def _opener(backend: str, root: Path) -> Opener:
    def open_() -> VectorStore:
        if backend == "edge":
            return open_store("edge", path=str(root), url=None, api_key=None, collection="chunks")
        if backend == "local-path":
            return open_store("local", path=str(root), url=None, api_key=None, collection="chunks")
        return open_store("local", path=":memory:", url=None, api_key=None, collection="chunks")

    return open_


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def opener(backend: str, tmp_path: Path) -> Opener:
    return _opener(backend, tmp_path)


@pytest.fixture
def store(opener: Opener) -> Iterator[VectorStore]:
    s = opener()
    s.ensure_collection(DIM)
    yield s
    s.close()


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def _corpus(n: int = 60, seed: int = 0) -> tuple[list[ChunkRecord], np.ndarray]:
    """n records over 3 documents, 2 companies and 2 years, with raw (unnormalised) vectors."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32) * rng.uniform(0.5, 3.0, (n, 1)).astype(np.float32)
    records = []
    for i in range(n):
        doc = f"doc-{i % 3}"
        payload: dict[str, str | int | float] = {
            "document_id": doc,
            "company": "Tencent" if i % 2 else "Apple",
            "year": 2022 + (i % 4 >= 2),
            "chunk_index": i,
            "language": "zh" if i % 2 else "en",
        }
        records.append(ChunkRecord(point_id(doc, i), vectors[i], f"chunk {i} 文本", payload))
    return records, vectors


def _cosine_ranking(vectors: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sims = _unit(vectors) @ _unit(query)
    order = np.argsort(-sims, kind="stable")
    return order, sims


def test_search_orders_by_cosine_with_cosine_scores(store: VectorStore) -> None:
    records, vectors = _corpus()
    store.upsert(records)
    query = np.random.default_rng(7).standard_normal(DIM)
    order, sims = _cosine_ranking(vectors, query)

    hits = store.search(query, k=10)

    assert [h.id for h in hits] == [records[i].id for i in order[:10]]
    assert [h.score for h in hits] == pytest.approx([float(sims[i]) for i in order[:10]], abs=1e-4)
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))
    first = records[order[0]]
    assert hits[0].text == first.text
    assert hits[0].payload == first.payload  # text is not repeated in the payload


def test_search_accepts_lists_and_arrays_alike(store: VectorStore) -> None:
    records, vectors = _corpus()
    store.upsert(records)
    query = vectors[5]
    by_array = store.search(query, k=3)
    by_list = store.search([float(x) for x in query], k=3)
    assert [h.id for h in by_array] == [h.id for h in by_list]
    assert by_array[0].id == records[5].id
    assert by_array[0].score == pytest.approx(1.0, abs=1e-4)


def test_filters_are_exact_and_anded(store: VectorStore) -> None:
    records, vectors = _corpus()
    store.upsert(records)
    query = np.random.default_rng(3).standard_normal(DIM)
    wanted = [i for i, r in enumerate(records) if r.payload["company"] == "Tencent" and r.payload["year"] == 2023]
    assert 0 < len(wanted) < len(records) // 2

    hits = store.search(query, k=len(records), filters={"company": "Tencent", "year": 2023})

    assert sorted(h.id for h in hits) == sorted(records[i].id for i in wanted)
    order, _ = _cosine_ranking(vectors[wanted], query)
    assert hits[0].id == records[wanted[order[0]]].id
    assert all(h.payload["company"] == "Tencent" and h.payload["year"] == 2023 for h in hits)
    # One condition alone matches more than both together.
    assert len(store.search(query, k=len(records), filters={"company": "Tencent"})) > len(hits)
    assert store.search(query, k=5, filters={"company": "Tencent", "year": 1999}) == []
    assert store.search(query, k=5, filters={"company": "tencent"}) == []  # exact, not case-folded


def test_unsupported_filter_values_are_rejected(store: VectorStore) -> None:
    store.upsert(_corpus(5)[0])
    with pytest.raises(StoreError):
        store.search(np.ones(DIM), k=3, filters={"year": 2022.0})  # type: ignore[dict-item]
    with pytest.raises(StoreError):
        store.search(np.ones(DIM), k=0)


def test_reupsert_same_ids_replaces_instead_of_duplicating(store: VectorStore) -> None:
    records, _ = _corpus()
    store.upsert(records)
    assert store.stats().points == len(records)

    changed = [ChunkRecord(r.id, r.vector, r.text + " v2", r.payload) for r in records]
    store.upsert(changed)

    assert store.stats().points == len(records)
    hit = store.search(records[0].vector, k=1)[0]
    assert hit.id == records[0].id
    assert hit.text.endswith(" v2")


def test_point_id_is_deterministic_uuid5() -> None:
    a = point_id("10-K-2023", 4)
    assert a == point_id("10-K-2023", 4)
    assert a != point_id("10-K-2023", 5)
    assert a != point_id("10-K-2024", 4)
    assert uuid.UUID(a).version == 5


def test_ids_must_be_uuids_and_spellings_are_canonicalised(store: VectorStore) -> None:
    with pytest.raises(StoreError):
        store.upsert([ChunkRecord("chunk-1", np.ones(DIM), "x", {"document_id": "d"})])
    raw = uuid.uuid4()
    store.upsert([ChunkRecord(raw.hex, np.ones(DIM), "x", {"document_id": "d"})])  # no hyphens
    store.upsert([ChunkRecord(str(raw).upper(), np.ones(DIM), "y", {"document_id": "d"})])
    assert store.stats().points == 1
    assert store.search(np.ones(DIM), k=1)[0].id == str(raw)


def test_delete_document_removes_only_that_document(store: VectorStore) -> None:
    records, _ = _corpus()
    store.upsert(records)
    doc1 = sum(1 for r in records if r.payload["document_id"] == "doc-1")

    assert store.delete_document("doc-1") == doc1

    assert store.stats().points == len(records) - doc1
    assert store.search(np.ones(DIM), k=5, filters={"document_id": "doc-1"}) == []
    assert all(h.payload["document_id"] != "doc-1" for h in store.search(np.ones(DIM), k=len(records)))
    assert store.delete_document("doc-1") == 0
    assert store.delete_document("never-ingested") == 0


def test_stats_reports_name_size_dimension_backend(store: VectorStore, backend: str) -> None:
    empty = store.stats()
    assert (empty.name, empty.points, empty.dimension) == ("chunks", 0, DIM)
    assert empty.backend == {"edge": "edge", "local-path": "local", "local-memory": "local-memory"}[backend]
    store.upsert(_corpus(17)[0])
    assert store.stats().points == 17


def test_dimension_mismatch(store: VectorStore) -> None:
    store.ensure_collection(DIM)  # same size again: a no-op
    with pytest.raises(DimensionMismatch):
        store.ensure_collection(DIM * 2)
    with pytest.raises(DimensionMismatch):
        store.upsert([ChunkRecord(point_id("d", 0), np.ones(DIM + 1), "x", {"document_id": "d"})])
    with pytest.raises(DimensionMismatch):
        store.search(np.ones(DIM - 1), k=1)
    assert store.stats().points == 0  # the bad upsert wrote nothing


def test_a_bad_record_fails_the_whole_batch(store: VectorStore) -> None:
    records, _ = _corpus(10)
    bad = ChunkRecord(point_id("d", 99), np.ones(DIM + 3), "bad", {"document_id": "d"})
    with pytest.raises(DimensionMismatch):
        store.upsert([*records, bad])
    assert store.stats().points == 0


def test_missing_collection_until_ensured(opener: Opener) -> None:
    s = opener()
    try:
        with pytest.raises(CollectionMissing):
            s.stats()
        with pytest.raises(CollectionMissing):
            s.search(np.ones(DIM), k=1)
        with pytest.raises(CollectionMissing):
            s.upsert(_corpus(2)[0])
        s.ensure_collection(DIM)
        assert s.stats().points == 0
    finally:
        s.close()


def test_closed_store_refuses_calls(opener: Opener) -> None:
    s = opener()
    s.ensure_collection(DIM)
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreError):
        s.search(np.ones(DIM), k=1)


def test_concurrent_upserts_and_searches(store: VectorStore) -> None:
    """Threads as the gRPC server uses them: writers and readers at once; nothing lost, nothing raised."""
    rng = np.random.default_rng(11)
    batches = [
        [
            ChunkRecord(point_id(f"w{w}", i), rng.standard_normal(DIM), f"w{w}-{i}", {"document_id": f"w{w}"})
            for i in range(j * 10, j * 10 + 10)
        ]
        for w in range(2)
        for j in range(6)
    ]
    store.upsert(batches[0])
    errors: list[BaseException] = []
    searched = [0]

    def write(chunks: list[list[ChunkRecord]]) -> None:
        try:
            for batch in chunks:
                store.upsert(batch)
        except BaseException as exc:  # collected so the main thread can fail the test
            errors.append(exc)

    def read() -> None:
        try:
            for _ in range(30):
                hits = store.search(rng.standard_normal(DIM), k=5)
                assert 1 <= len(hits) <= 5
                store.stats()
                searched[0] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(batches[1:6],)),
        threading.Thread(target=write, args=(batches[6:],)),
        threading.Thread(target=read),
        threading.Thread(target=read),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert searched[0] == 60
    assert store.stats().points == 120
    assert store.delete_document("w1") == 60


@pytest.mark.parametrize("backend", PERSISTENT)
def test_data_survives_close_and_reopen(opener: Opener) -> None:
    records, vectors = _corpus()
    s = opener()
    s.ensure_collection(DIM)
    s.upsert(records)
    s.delete_document("doc-2")
    query = vectors[1] + 0.1
    before = s.search(query, k=5, filters={"company": "Tencent"})
    points = s.stats().points
    s.close()

    reopened = opener()
    try:
        assert reopened.stats().points == points  # usable without ensure_collection
        assert reopened.stats().dimension == DIM
        after = reopened.search(query, k=5, filters={"company": "Tencent"})
        assert [(h.id, h.text) for h in after] == [(h.id, h.text) for h in before]
        assert [h.score for h in after] == pytest.approx([h.score for h in before], abs=1e-5)
        with pytest.raises(DimensionMismatch):
            reopened.ensure_collection(DIM + 1)
        reopened.ensure_collection(DIM)
        assert reopened.delete_document("doc-2") == 0
    finally:
        reopened.close()


# -- Qdrant Edge only: the optimiser and crash recovery --------------------------------------------


def test_edge_auto_optimize_builds_hnsw_and_keeps_scores_exact(tmp_path: Path) -> None:
    # A 1 KB indexing threshold makes a few hundred 32-d points large enough to get an HNSW index.
    s = EdgeStore(tmp_path / "shard", "chunks", optimize_threshold=300, indexing_threshold_kb=1)
    s.ensure_collection(DIM)
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((1000, DIM)).astype(np.float32)
    records = [ChunkRecord(point_id("d", i), vectors[i], str(i), {"document_id": "d"}) for i in range(1000)]
    s.upsert(records[:200])
    assert s.unindexed_points() == 200  # under the threshold: nothing built yet
    s.upsert(records[200:])
    assert s.unindexed_points() < 300  # the upsert that crossed it ran the optimiser

    for i in (0, 500, 999):
        hit = s.search(vectors[i], k=1)[0]
        assert (hit.id, hit.text) == (records[i].id, str(i))
        assert hit.score == pytest.approx(1.0, abs=1e-4)  # re-scored, not an int8 estimate
    s.close()

    reopened = EdgeStore(tmp_path / "shard", "chunks")
    try:
        assert reopened.stats().points == 1000
        assert reopened.unindexed_points() < 300  # the index was persisted, not rebuilt
        assert reopened.search(vectors[42], k=1)[0].id == records[42].id
    finally:
        reopened.close()


def test_edge_recovers_unflushed_writes_after_a_crash(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os
        import numpy as np
        from weaverbird_retriever.stores import ChunkRecord, open_store, point_id
        s = open_store("edge", path={str(tmp_path)!r}, url=None, api_key=None, collection="chunks")
        s.ensure_collection({DIM})
        rng = np.random.default_rng(0)
        s.upsert([ChunkRecord(point_id("d", i), rng.standard_normal({DIM}), "t", {{"document_id": "d"}})
                  for i in range(50)])
        os._exit(0)  # no close(), no flush: only the write-ahead log has the points
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    s = open_store("edge", path=str(tmp_path), url=None, api_key=None, collection="chunks")
    try:
        assert s.stats().points == 50
        assert s.delete_document("d") == 50
    finally:
        s.close()


def test_open_store_validates_its_arguments(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        open_store("edge", path=None, url=None, api_key=None, collection="c")
    with pytest.raises(StoreError):
        open_store("server", path=str(tmp_path), url=None, api_key=None, collection="c")
    with pytest.raises(StoreError):
        open_store("edge", path=str(tmp_path), url=None, api_key=None, collection="")
