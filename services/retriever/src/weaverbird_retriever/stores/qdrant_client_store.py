"""qdrant-client backend: a Qdrant server for production, or the client's pure-Python local mode."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from weaverbird_retriever.lexical import LEXICAL_VECTOR, encoder
from weaverbird_retriever.stores.base import (
    INDEXED_FIELDS,
    RRF_K,
    ChunkRecord,
    CollectionMissing,
    CollectionStats,
    DimensionMismatch,
    FilterValue,
    Hit,
    LexicalMissing,
    SearchOptions,
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

# Points per request: keeps a server request well under its 32 MB body limit at 1024-d with text.
_UPSERT_BATCH = 256

_SCHEMAS = {"keyword": models.PayloadSchemaType.KEYWORD, "integer": models.PayloadSchemaType.INTEGER}


class QdrantClientStore:
    """One collection through QdrantClient; build it with .server(), .local() or .memory()."""

    def __init__(self, client: QdrantClient, collection: str, *, backend: str, server: bool) -> None:
        self._client = client
        self._name = collection
        self.backend = backend
        self._server = server
        # Local mode mutates numpy arrays and a sqlite handle with no locking of its own, so calls
        # are serialised; the server client is thread-safe (pooled HTTP) and needs none.
        self._lock: AbstractContextManager[object] = contextlib.nullcontext() if server else threading.RLock()
        self._dim: int | None = None
        self._lexical: bool | None = None  # read from the collection on first use
        self._closed = False

    @property
    def lexical(self) -> bool:
        with self._guard():
            self._dimension()
            return bool(self._lexical)

    @classmethod
    def server(cls, url: str, collection: str, api_key: str | None = None, timeout: int = 30) -> QdrantClientStore:
        """A Qdrant server at url (REST)."""
        return cls(QdrantClient(url=url, api_key=api_key, timeout=timeout), collection, backend="server", server=True)

    @classmethod
    def local(cls, path: str, collection: str) -> QdrantClientStore:
        """Local mode persisted under path: brute-force numpy search, one sqlite commit per point."""
        # Calls come from worker threads (asyncio.to_thread) other than the opener; the lock above
        # makes sharing the sqlite connection safe, so skip sqlite's same-thread check.
        client = QdrantClient(path=path, force_disable_check_same_thread=True)
        return cls(client, collection, backend="local", server=False)

    @classmethod
    def memory(cls, collection: str) -> QdrantClientStore:
        """Local mode held in memory only (tests, throwaway runs)."""
        client = QdrantClient(location=":memory:", force_disable_check_same_thread=True)
        return cls(client, collection, backend="local-memory", server=False)

    # -- lifecycle ---------------------------------------------------------------------------------

    def ensure_collection(self, dimension: int) -> None:
        if dimension < 1:
            raise StoreError(f"dimension must be positive, got {dimension}")
        with self._guard():
            if not self._client.collection_exists(self._name):
                try:
                    self._client.create_collection(
                        self._name,
                        vectors_config=models.VectorParams(size=dimension, distance=models.Distance.COSINE),
                        # BM25 term weights; the IDF half is computed by Qdrant from the collection.
                        sparse_vectors_config={LEXICAL_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                    )
                except (ValueError, UnexpectedResponse):
                    # Another replica created it between our check and create: fall through and
                    # compare dimensions like any existing collection.
                    if not self._client.collection_exists(self._name):
                        raise
                else:
                    self._create_payload_indexes()
                    self._dim, self._lexical = dimension, True
                    return
            existing = self._read_dimension()
            if existing != dimension:
                raise DimensionMismatch(f"collection {self._name!r} has dimension {existing}, not {dimension}")
            self._dim = existing

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._client.close()

    # -- writes ------------------------------------------------------------------------------------

    def upsert(self, records: Sequence[ChunkRecord]) -> None:
        if not records:
            return
        with self._guard():
            dim = self._dimension()
            points = [
                models.PointStruct(id=canonical_id(r.id), vector=self._vectors(r, dim), payload=record_payload(r))
                for r in records
            ]
            for start in range(0, len(points), _UPSERT_BATCH):
                self._client.upsert(self._name, points=points[start : start + _UPSERT_BATCH], wait=True)

    def delete_document(self, document_id: str) -> int:
        flt = _filter(check_filters({"document_id": document_id}))
        with self._guard():
            self._dimension()
            # On a server, count and delete are two requests; a concurrent upsert of the same
            # document can make the count off by its points. Local mode holds the lock across both.
            count = self._client.count(self._name, count_filter=flt, exact=True).count
            if count:
                self._client.delete(self._name, points_selector=models.FilterSelector(filter=flt), wait=True)
        return int(count)

    # -- reads -------------------------------------------------------------------------------------

    def search(
        self,
        vector: Vector,
        k: int,
        filters: Mapping[str, FilterValue] | None = None,
        options: SearchOptions | None = None,
    ) -> list[Hit]:
        options = check_search(k, options)
        flt = _filter(check_filters(filters), check_filters(options.exclude))
        with self._guard():
            dense = as_vector(vector, self._dimension())
            if options.mode != "dense" and not self._lexical:
                raise LexicalMissing(f"collection {self._name!r} has no lexical vectors")
            result = self._client.query_points(
                self._name,
                limit=k,
                query_filter=flt,
                with_payload=True,
                # Dense vectors come back so every hit carries its cosine, the scale c is set on.
                with_vectors=[""] if options.mode != "dense" else False,
                **self._query(dense, k, flt, options),
            )
        hits = []
        for p in result.points:
            text, payload = split_payload(p.payload)
            score = float(p.score)
            if options.mode != "dense":
                stored = p.vector.get("") if isinstance(p.vector, dict) else p.vector
                score = cosine(dense, stored if isinstance(stored, list) else None)
            hits.append(Hit(id=str(p.id), score=score, text=text, payload=payload, rank_score=float(p.score)))
        return hits

    def _query(self, dense: list[float], k: int, flt: models.Filter | None, options: SearchOptions) -> dict:
        """query / using / prefetch arguments of query_points for the mode."""
        if options.mode == "dense":
            return {"query": dense}
        lex = encoder().query(options.text)
        sparse = models.SparseVector(indices=lex.indices, values=lex.values)
        if options.mode == "lexical":
            return {"query": sparse, "using": LEXICAL_VECTOR}
        limit = max(k, options.prefetch)
        fusion: models.Query = (
            # k and weights spelled out so local mode and a server rank exactly as Qdrant Edge does.
            models.RrfQuery(rrf=models.Rrf(k=RRF_K, weights=[1.0, options.lexical_weight]))
            if options.fusion == "rrf"
            else models.FusionQuery(fusion=models.Fusion.DBSF)
        )
        return {
            "prefetch": [
                models.Prefetch(query=dense, limit=limit, filter=flt),
                models.Prefetch(query=sparse, using=LEXICAL_VECTOR, limit=limit, filter=flt),
            ],
            "query": fusion,
        }

    def facet(self, key: str, limit: int, filters: Mapping[str, FilterValue] | None = None) -> list[tuple[object, int]]:
        flt = _filter(check_filters(filters))
        with self._guard():
            self._dimension()
            response = self._client.facet(self._name, key=key, limit=limit, exact=True, facet_filter=flt)
        return [(h.value, int(h.count)) for h in response.hits]

    def stats(self) -> CollectionStats:
        with self._guard():
            dim = self._dimension()
            points = self._client.count(self._name, exact=True).count
        return CollectionStats(name=self._name, points=int(points), dimension=dim, backend=self.backend)

    # -- internals ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Hold the lock and turn client errors into store errors (CollectionMissing when it is gone)."""
        with self._lock:
            if self._closed:
                raise StoreError("the store is closed")
            try:
                yield
            except StoreError:
                raise
            except (ValueError, UnexpectedResponse, ResponseHandlingException) as exc:
                if self._collection_gone():
                    self._dim = None
                    raise CollectionMissing(f"collection {self._name!r} does not exist") from exc
                raise StoreError(f"qdrant: {exc}") from exc

    def _collection_gone(self) -> bool:
        try:
            return not self._client.collection_exists(self._name)
        except Exception:  # the server being unreachable is reported by the original error
            return False

    def _dimension(self) -> int:
        # Cached after the first look so the hot path makes one request, not two; if someone drops
        # the collection, the next failing call clears the cache via _guard.
        if self._dim is None:
            if not self._client.collection_exists(self._name):
                raise CollectionMissing(f"collection {self._name!r} does not exist yet")
            self._dim = self._read_dimension()
        return self._dim

    def _vectors(self, record: ChunkRecord, dim: int) -> list[float] | dict[str, object]:
        dense = as_vector(record.vector, dim)
        if not self._lexical:
            return dense
        sparse = encoder().document(lexical_text(record.text, record.payload))
        return {"": dense, LEXICAL_VECTOR: models.SparseVector(indices=sparse.indices, values=sparse.values)}

    def _read_dimension(self) -> int:
        params = self._client.get_collection(self._name).config.params
        # A collection made before lexical vectors keeps working densely; hybrid asks get a clear error.
        self._lexical = LEXICAL_VECTOR in (params.sparse_vectors or {})
        vectors = params.vectors
        if isinstance(vectors, models.VectorParams):
            return int(vectors.size)
        raise StoreError(f"collection {self._name!r} uses named vectors; expected one unnamed dense vector")

    def _create_payload_indexes(self) -> None:
        if not self._server:
            return  # local mode ignores payload indexes (and warns); it filters by scanning anyway
        for name, kind in INDEXED_FIELDS.items():
            self._client.create_payload_index(self._name, field_name=name, field_schema=_SCHEMAS[kind], wait=True)


def _filter(
    filters: Mapping[str, FilterValue], exclude: Mapping[str, FilterValue] | None = None
) -> models.Filter | None:
    if not filters and not exclude:
        return None
    return models.Filter(
        must=[models.FieldCondition(key=k, match=models.MatchValue(value=v)) for k, v in filters.items()] or None,
        must_not=[models.FieldCondition(key=k, match=models.MatchValue(value=v)) for k, v in (exclude or {}).items()]
        or None,
    )
