"""qdrant-client backend, synchronous: the client's pure-Python local mode (disk or memory).

The retriever reaches a Qdrant server through qdrant_server_store (AsyncQdrantClient); .server() here
serves offline tools and benchmarks that want a plain blocking client.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager

from qdrant_client import QdrantClient, models
from qdrant_client.common.client_exceptions import QdrantException
from qdrant_client.http.exceptions import ApiException

from weaverbird_retriever.stores import qdrant_requests as rq
from weaverbird_retriever.stores.base import (
    ChunkRecord,
    CollectionMissing,
    CollectionStats,
    DimensionMismatch,
    FilterValue,
    Hit,
    LexicalMissing,
    SearchOptions,
    StoreClosed,
    StoredPoint,
    StoreError,
    Vector,
    as_vector,
    check_filters,
    check_search,
)


class QdrantClientStore:
    """One collection through QdrantClient; build it with .local(), .memory() or .server()."""

    def __init__(
        self, client: QdrantClient, collection: str, *, backend: str, server: bool, url: str | None = None
    ) -> None:
        self._client = client
        self._name = collection
        self.backend = backend
        self._server = server
        self._url = url
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
        """A Qdrant server at url (REST), blocking; the retriever uses AsyncQdrantStore instead."""
        client = QdrantClient(url=url, api_key=api_key, timeout=timeout)
        return cls(client, collection, backend="server", server=True, url=url)

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
                    self._client.create_collection(self._name, **rq.collection_config(dimension))
                except (ValueError, ApiException) as exc:
                    if rq.outage(exc, self._url):
                        raise
                    # Another replica created it between our check and create: fall through and
                    # compare dimensions like any existing collection.
                    if not self._client.collection_exists(self._name):
                        raise
                else:
                    if self._server:  # local mode ignores payload indexes (and warns); it scans anyway
                        for name, schema in rq.PAYLOAD_SCHEMAS.items():
                            self._client.create_payload_index(
                                self._name, field_name=name, field_schema=schema, wait=True
                            )
                    self._dim, self._lexical = dimension, True
                    return
            info = self._client.get_collection(self._name)
            existing, self._lexical = rq.read_params(info, self._name)
            if existing != dimension:
                raise DimensionMismatch(f"collection {self._name!r} has dimension {existing}, not {dimension}")
            self._dim = existing
            if self._server:
                for name in rq.missing_indexes(info):
                    self._client.create_payload_index(
                        self._name, field_name=name, field_schema=rq.PAYLOAD_SCHEMAS[name], wait=True
                    )
            self._add_figure_densities()

    def _add_figure_densities(self) -> None:
        """Migrates points stored before the payload kept their number density (the figure prior)."""
        offset = None
        while True:
            # Pages in id order: a point whose field is set has an id before the next page's offset.
            records, offset = self._client.scroll(
                self._name, scroll_filter=rq.MISSING_DENSITY, limit=rq.SCROLL_PAGE, offset=offset, with_payload=True
            )
            if records:
                self._client.batch_update_points(self._name, rq.density_updates(records), wait=True)
            if offset is None:
                return

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
            batch = rq.points(records, self._dimension(), bool(self._lexical))
            for start in range(0, len(batch), rq.UPSERT_BATCH):
                self._client.upsert(self._name, points=batch[start : start + rq.UPSERT_BATCH], wait=True)

    def delete_document(self, document_id: str) -> int:
        flt = rq.to_filter(check_filters({"document_id": document_id}))
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
        flt = rq.to_filter(check_filters(filters), check_filters(options.exclude))
        with self._guard():
            dense = as_vector(vector, self._dimension())
            if options.mode != "dense" and not self._lexical:
                raise LexicalMissing(f"collection {self._name!r} has no lexical vectors")
            result = self._client.query_points(self._name, **rq.query_args(dense, k, flt, options))
        return rq.hits(result, dense, options)

    def facet(self, key: str, limit: int, filters: Mapping[str, FilterValue] | None = None) -> list[tuple[object, int]]:
        flt = rq.to_filter(check_filters(filters))
        with self._guard():
            self._dimension()
            response = self._client.facet(self._name, key=key, limit=limit, exact=True, facet_filter=flt)
        return [(h.value, int(h.count)) for h in response.hits]

    def scroll(
        self, filters: Mapping[str, FilterValue] | None, limit: int, *, with_text: bool = False
    ) -> list[StoredPoint]:
        flt = rq.to_filter(check_filters(filters))
        out: list[StoredPoint] = []
        offset = None
        with self._guard():
            self._dimension()
            while len(out) < limit:
                records, offset = self._client.scroll(
                    self._name, **rq.scroll_args(flt, limit - len(out), offset, with_text)
                )
                out.extend(rq.stored_points(records))
                if offset is None:
                    break
        return out

    def stats(self) -> CollectionStats:
        with self._guard():
            dim = self._dimension()
            points = self._client.count(self._name, exact=True).count
        return CollectionStats(name=self._name, points=int(points), dimension=dim, backend=self.backend)

    # -- internals ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Hold the lock and turn client errors into store errors: StoreUnavailable for an outage,
        CollectionMissing when the collection is gone, StoreError otherwise."""
        with self._lock:
            if self._closed:
                raise StoreClosed("the store is closed")
            try:
                yield
            except StoreError:
                raise
            except (ValueError, ApiException, QdrantException) as exc:
                unavailable = rq.outage(exc, self._url)
                if unavailable is not None:
                    raise unavailable from exc
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

    def _read_dimension(self) -> int:
        dim, self._lexical = rq.read_params(self._client.get_collection(self._name), self._name)
        return dim
