"""Qdrant Edge backend: an embedded, on-disk Qdrant shard with HNSW, int8 quantization and a WAL."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import qdrant_edge as qe

from weaverbird_retriever.lexical import LEXICAL_VECTOR, encoder
from weaverbird_retriever.stores.base import (
    INDEXED_FIELDS,
    TEXT_KEY,
    ChunkRecord,
    CollectionMissing,
    CollectionStats,
    DimensionMismatch,
    Filters,
    Hit,
    LexicalMissing,
    SearchOptions,
    StoreClosed,
    StoredPoint,
    StoreError,
    Vector,
    as_vector,
    canonical_id,
    check_filters,
    check_search,
    cosine,
    lexical_text,
    record_payload,
    split_payload,
)
from weaverbird_retriever.stores.edge_migrations import add_figure_densities, add_lexical_vectors, add_missing_indexes
from weaverbird_retriever.stores.edge_requests import (
    call,
    dense_of,
    index_schema,
    query_parts,
    shard_config,
    to_filter,
)
from weaverbird_retriever.stores.rw_lock import RWLock

log = logging.getLogger(__name__)

# Optimise once this many points sit outside any HNSW index. Measured at 512-d on 2 cores: an
# unindexed point costs ~0.1 µs per query (100k unindexed = 11 ms p50), so 20k adds ~2 ms to every
# search, about the cost of the HNSW search itself; below that a multi-second optimise stall that
# blocks the whole process (see _optimize_now) is not worth paying.
DEFAULT_OPTIMIZE_THRESHOLD = 20_000

# Points per engine call. Each call holds the GIL throughout, so slicing a large upsert lets
# searches on other threads run between slices instead of waiting for the whole batch.
_UPSERT_SLICE = 512

_CONFIG_FILE = "edge_config.json"

# Search beam width. On clustered 512-d data at 100k points recall@10 was 0.93 at the engine default
# (100) and 0.96 at 256, for about 0.6 ms more per search (benchmarks/vector_stores.py).
DEFAULT_HNSW_EF = 256
# Points per scroll call when reading payloads back (listing documents).
_SCROLL_PAGE = 1024


class EdgeStore:
    """One Qdrant Edge shard in its own directory; the directory is the collection.

    Concurrency: qdrant-edge-py 0.9 holds the GIL for the whole of every call, so engine calls never
    overlap anyway; the locks make the wrapper correct without relying on that. Searches and stats
    take the shared side of a reader-writer lock; upserts, deletes and optimise also take a writer
    mutex (so delete_document's count matches what it deletes); create and close take the exclusive
    side so no call can meet a half-created or closed shard.
    """

    backend = "edge"

    def __init__(
        self,
        directory: str | Path,
        collection: str,
        *,
        optimize_threshold: int | None = DEFAULT_OPTIMIZE_THRESHOLD,
        hnsw_ef: int | None = DEFAULT_HNSW_EF,
        quantize: bool = True,
        indexing_threshold_kb: int | None = None,
    ) -> None:
        """Open the shard in directory if there is one; otherwise it is created by ensure_collection.

        optimize_threshold: unindexed points that trigger an optimise after an upsert (None: only
        when optimize() is called). hnsw_ef: search beam width (None: engine default, ef_construct).
        quantize: int8 scalar quantization; it made the 100k HNSW build 6x faster (20 s vs 124 s) at equal recall.
        indexing_threshold_kb: segment size from which the optimiser builds HNSW (None: 10 MB).
        """
        self._dir = Path(directory)
        self._name = collection
        self._optimize_threshold = optimize_threshold
        self._quantize = quantize
        self._indexing_threshold_kb = indexing_threshold_kb
        self.hnsw_ef = hnsw_ef
        self._lock = RWLock()
        self._write = threading.Lock()
        self._shard: qe.EdgeShard | None = None
        self._dim: int | None = None
        self._lexical = False
        self._closed = False
        if self._shard_exists():
            shard = self._load()
            add_missing_indexes(shard)
            if not self._lexical:
                add_lexical_vectors(shard, self._name)
                self._lexical = True
            add_figure_densities(shard, self._name)
            # A crash between a bulk load and its optimise leaves points unindexed; pay for it at
            # start-up, before serving, rather than on the first searches.
            self._maybe_optimize_locked(shard)

    @property
    def lexical(self) -> bool:
        return self._lexical

    @property
    def hnsw_ef(self) -> int | None:
        """HNSW search beam width; None means the engine default. Larger: better recall, slower."""
        return self._hnsw_ef

    @hnsw_ef.setter
    def hnsw_ef(self, value: int | None) -> None:
        self._hnsw_ef = value
        # Swapped as one object, so a concurrent search sees either the old or the new parameters.
        self._search_params = qe.SearchParams(
            hnsw_ef=value,
            # Quantized candidates are re-scored with the original vectors, so scores are exact cosines.
            quantization=qe.QuantizationSearchParams(rescore=True) if self._quantize else None,
        )

    # -- lifecycle ---------------------------------------------------------------------------------

    def ensure_collection(self, dimension: int) -> None:
        if dimension < 1:
            raise StoreError(f"dimension must be positive, got {dimension}")
        with self._lock.write():
            self._check_open()
            if self._shard is None and self._shard_exists():
                self._load()  # left by an earlier attempt whose index creation failed
            if self._shard is not None:
                if self._dim != dimension:
                    raise DimensionMismatch(f"collection {self._name!r} has dimension {self._dim}, not {dimension}")
                return
            try:
                shard = qe.EdgeShard.create(
                    str(self._dir), shard_config(dimension, self._quantize, self._indexing_threshold_kb)
                )
            except Exception as exc:
                raise StoreError(f"cannot create edge shard at {self._dir}: {exc}") from exc
            try:
                for name, kind in INDEXED_FIELDS.items():
                    call(shard.update, qe.UpdateOperation.create_field_index(name, index_schema(name, kind)))
            except StoreError:
                shard.close()  # release the WAL lock so a retry can load what was created
                raise
            self._shard, self._dim, self._lexical = shard, dimension, True

    def close(self) -> None:
        with self._lock.write():
            if self._closed:
                return
            self._closed = True
            shard, self._shard = self._shard, None
            if shard is not None:
                try:
                    shard.flush()
                finally:
                    shard.close()

    # -- writes ------------------------------------------------------------------------------------

    def upsert(self, records: Sequence[ChunkRecord]) -> None:
        if not records:
            return
        with self._lock.read():
            shard, dim = self._require()
            # Build and check every point first, so a bad record fails the call before anything is written.
            points = [qe.Point(canonical_id(r.id), self._vectors(r, dim), record_payload(r)) for r in records]
            with self._write:
                for start in range(0, len(points), _UPSERT_SLICE):
                    call(shard.update, qe.UpdateOperation.upsert_points(points[start : start + _UPSERT_SLICE]))
                # The writer pays for indexing, not the next searcher: search runs inline on the
                # retriever's event loop, and an optimise there would stall every request.
                self._maybe_optimize_locked(shard)

    def delete_document(self, document_id: str) -> int:
        flt = to_filter(check_filters({"document_id": document_id}))
        with self._lock.read():
            shard, _ = self._require()
            with self._write:
                # Under the writer mutex no upsert can add matching points between count and delete.
                count = int(call(shard.count, qe.CountRequest(exact=True, filter=flt)))
                if count:
                    call(shard.update, qe.UpdateOperation.delete_points_by_filter(flt))
        return count

    def optimize(self) -> bool:
        """Build HNSW for unindexed segments, merge small ones, vacuum deletions; blocks until done.

        Call after a bulk load. Returns whether anything changed.
        """
        with self._lock.read():
            shard, _ = self._require()
            with self._write:
                return self._optimize_now(shard)

    # -- reads -------------------------------------------------------------------------------------

    def search(
        self, vector: Vector, k: int, filters: Filters = None, options: SearchOptions | None = None
    ) -> list[Hit]:
        options = check_search(k, options)
        flt = to_filter(check_filters(filters), check_filters(options.exclude))
        with self._lock.read():
            shard, dim = self._require()
            dense = as_vector(vector, dim)
            if options.mode != "dense" and not self._lexical:
                raise LexicalMissing(f"collection {self._name!r} has no lexical vectors")
            lexical = encoder().query(options.text, options.expands_concepts) if options.mode != "dense" else None
            request = qe.QueryRequest(
                limit=k,
                filter=flt,
                params=self._search_params,
                with_payload=True,
                # Dense vectors come back so every hit carries its cosine, the scale c is set on.
                with_vector=[""] if options.mode != "dense" else False,
                **query_parts(dense, lexical, k, flt, options, self._search_params),
            )
            points = call(shard.query, request)
        hits = []
        for p in points:
            text, payload = split_payload(p.payload)
            score = float(p.score) if options.mode == "dense" else cosine(dense, dense_of(p.vector))
            hits.append(Hit(id=str(p.id), score=score, text=text, payload=payload, rank_score=float(p.score)))
        return hits

    def facet(self, key: str, limit: int, filters: Filters = None) -> list[tuple[object, int]]:
        flt = to_filter(check_filters(filters))
        with self._lock.read():
            shard, _ = self._require()
            response = call(shard.facet, qe.FacetRequest(key, limit=limit, exact=True, filter=flt))
        return [(h.value, int(h.count)) for h in response.hits]

    def scroll(self, filters: Filters, limit: int, *, with_text: bool = False) -> list[StoredPoint]:
        flt = to_filter(check_filters(filters))
        payload = True if with_text else qe.PayloadSelector.Exclude([TEXT_KEY])
        out: list[StoredPoint] = []
        offset = None
        with self._lock.read():
            shard, _ = self._require()
            while len(out) < limit:
                request = qe.ScrollRequest(
                    offset=offset,
                    limit=min(_SCROLL_PAGE, limit - len(out)),
                    filter=flt,
                    with_payload=payload,
                    with_vector=False,
                )
                records, offset = call(shard.scroll, request)
                for r in records:
                    text, fields = split_payload(r.payload)
                    out.append(StoredPoint(id=str(r.id), text=text, payload=fields))
                if offset is None:
                    break
        return out

    def stats(self) -> CollectionStats:
        with self._lock.read():
            shard, dim = self._require()
            info = call(shard.info)
        return CollectionStats(name=self._name, points=int(info.points_count), dimension=dim, backend=self.backend)

    def unindexed_points(self) -> int:
        """Points not covered by an HNSW index (small segments stay brute-force by design)."""
        with self._lock.read():
            shard, _ = self._require()
            info = call(shard.info)
        return self._unindexed(info)

    # -- internals ---------------------------------------------------------------------------------

    def _vectors(self, record: ChunkRecord, dim: int) -> list[float] | dict[str, object]:
        dense = as_vector(record.vector, dim)
        if not self._lexical:
            return dense
        sparse = encoder().document(lexical_text(record.text, record.payload))
        return {"": dense, LEXICAL_VECTOR: qe.SparseVector(sparse.indices, sparse.values)}

    def _shard_exists(self) -> bool:
        return (self._dir / _CONFIG_FILE).exists() or (self._dir / "segments").is_dir()

    def _load(self) -> qe.EdgeShard:
        try:
            shard = qe.EdgeShard.load(str(self._dir))
        except Exception as exc:
            raise StoreError(f"cannot open edge shard at {self._dir}: {exc}") from exc
        try:
            dimension = self._read_dimension(shard)
        except StoreError:
            shard.close()
            raise
        self._shard, self._dim = shard, dimension
        self._lexical = LEXICAL_VECTOR in self._read_sparse_names()
        return shard

    def _read_sparse_names(self) -> set[str]:
        try:
            config = json.loads((self._dir / _CONFIG_FILE).read_text(encoding="utf-8"))
            return set((config.get("sparse_vectors") or {}).keys())
        except (OSError, ValueError, AttributeError):
            return set()

    def _read_dimension(self, shard: qe.EdgeShard) -> int:
        # The binding has no config getter; edge_config.json is the documented persisted config.
        try:
            config = json.loads((self._dir / _CONFIG_FILE).read_text(encoding="utf-8"))
            return int(config["vectors"][""]["size"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        records, _ = call(shard.scroll, qe.ScrollRequest(limit=1, with_vector=True, with_payload=False))
        if records and isinstance(records[0].vector, list):
            return len(records[0].vector)
        raise StoreError(f"cannot tell the vector dimension of the edge shard at {self._dir}")

    def _maybe_optimize_locked(self, shard: qe.EdgeShard) -> None:
        if self._optimize_threshold is None:
            return
        info = call(shard.info)
        unindexed = self._unindexed(info)
        if unindexed >= self._optimize_threshold:
            self._optimize_now(shard)

    def _unindexed(self, info: object) -> int:
        # indexed_vectors_count counts every named vector; sparse vectors are always indexed, so what
        # is left unindexed is the dense vectors outside HNSW.
        per_point = 2 if self._lexical else 1
        return max(0, int(info.points_count) * per_point - int(info.indexed_vectors_count))  # type: ignore[attr-defined]

    def _optimize_now(self, shard: qe.EdgeShard) -> bool:
        # optimize() holds the GIL until it returns (measured: no other Python thread ran during a
        # 20 s build), so it freezes the whole process, event loop included. That is why it runs
        # only on the write path, past a threshold, or when asked.
        started = time.perf_counter()
        changed = bool(call(shard.optimize))
        if changed:
            call(shard.flush)
            log.info("edge shard %s optimised in %.1f s", self._name, time.perf_counter() - started)
        return changed

    def _require(self) -> tuple[qe.EdgeShard, int]:
        self._check_open()
        if self._shard is None or self._dim is None:
            raise CollectionMissing(f"collection {self._name!r} does not exist yet")
        return self._shard, self._dim

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosed("the store is closed")
