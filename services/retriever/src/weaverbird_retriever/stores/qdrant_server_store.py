"""The Qdrant store: a Qdrant server (or qdrant-client's local mode) through AsyncQdrantClient; requests
run concurrently on the event loop, none blocks it. Synchronous callers use it through
qdrant_client_store.QdrantClientStore, so there is one implementation of each operation.

No lock: the server orders concurrent writes itself, and the only local state (the collection's
dimension and whether it has lexical vectors) is read once and cached. An unreachable, slow or
failing server raises StoreUnavailable, which the retriever answers as UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from qdrant_client import AsyncQdrantClient, models
from qdrant_client.common.client_exceptions import QdrantException
from qdrant_client.http.exceptions import ApiException

from weaverbird_retriever.stores import qdrant_requests as rq
from weaverbird_retriever.stores.base import (
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
    check_filters,
    check_search,
)


class AsyncQdrantStore:
    """One collection on a Qdrant server (REST) or in local mode; satisfies AsyncVectorStore."""

    def __init__(
        self,
        client: AsyncQdrantClient,
        collection: str,
        *,
        url: str | None = None,
        backend: str = "server",
        payload_indexes: bool = True,
    ) -> None:
        """Use .server() for a Qdrant server; any AsyncQdrantClient works (tests pass local mode).
        url only names the server in error messages; backend is what stats() reports; payload_indexes:
        create the INDEXED_FIELDS indexes (a server needs them to facet; local mode ignores them)."""
        self._client = client
        self._url = url
        self._name = collection
        self.backend = backend
        self._payload_indexes = payload_indexes
        self._dim: int | None = None
        self._lexical = False
        self._closed = False

    @classmethod
    def server(cls, url: str, collection: str, *, api_key: str | None = None, timeout: int = 30) -> AsyncQdrantStore:
        """A Qdrant server at url (REST). Nothing is sent until the first call, so a server that is
        down at start-up only makes calls answer UNAVAILABLE until it is back."""
        return cls(AsyncQdrantClient(url=url, api_key=api_key, timeout=timeout), collection, url=url)

    # -- lifecycle ---------------------------------------------------------------------------------

    async def ensure_collection(self, dimension: int) -> None:
        if dimension < 1:
            raise StoreError(f"dimension must be positive, got {dimension}")
        async with self._errors():
            if not await self._client.collection_exists(self._name):
                try:
                    await self._client.create_collection(self._name, **rq.collection_config(dimension))
                except (ApiException, ValueError) as exc:
                    # Another replica created it between our check and create: compare dimensions
                    # below like any existing collection. An outage is reported as one.
                    if rq.outage(exc, self._url) or not await self._client.collection_exists(self._name):
                        raise
                else:
                    await self._create_indexes(list(rq.PAYLOAD_SCHEMAS))
                    self._dim, self._lexical = dimension, True
                    return
            info = await self._client.get_collection(self._name)
            existing, self._lexical = rq.read_params(info, self._name)
            if existing != dimension:
                raise DimensionMismatch(f"collection {self._name!r} has dimension {existing}, not {dimension}")
            self._dim = existing
            await self._create_indexes(rq.missing_indexes(info))
            await self._add_figure_densities()

    async def _create_indexes(self, names: list[str]) -> None:
        for name in names if self._payload_indexes else []:
            await self._client.create_payload_index(
                self._name, field_name=name, field_schema=rq.PAYLOAD_SCHEMAS[name], wait=True
            )

    async def _add_figure_densities(self) -> None:
        """Migrates points stored before the payload kept their number density (the figure prior)."""
        offset = None
        while True:
            # Pages in id order: a point whose field is set has an id before the next page's offset.
            records, offset = await self._client.scroll(
                self._name, scroll_filter=rq.MISSING_DENSITY, limit=rq.SCROLL_PAGE, offset=offset, with_payload=True
            )
            if records:
                await self._client.batch_update_points(self._name, rq.density_updates(records), wait=True)
            if offset is None:
                return

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._client.close()

    # -- writes ------------------------------------------------------------------------------------

    async def upsert(self, records: Sequence[ChunkRecord]) -> None:
        if not records:
            return
        async with self._errors():
            dim = await self._dimension()
            # BM25-encoding a batch of chunks is CPU work: a worker thread keeps the loop answering.
            batch = await asyncio.to_thread(rq.points, records, dim, self._lexical)
            for start in range(0, len(batch), rq.UPSERT_BATCH):
                await self._client.upsert(self._name, points=batch[start : start + rq.UPSERT_BATCH], wait=True)

    async def delete_document(self, document_id: str) -> int:
        flt = rq.to_filter(check_filters({"document_id": document_id}))
        async with self._errors():
            await self._dimension()
            # Count and delete are two requests; a concurrent upsert of the same document can make
            # the count off by its points (the ingester writes one document's versions in order).
            count = (await self._client.count(self._name, count_filter=flt, exact=True)).count
            if count:
                await self._client.delete(self._name, points_selector=models.FilterSelector(filter=flt), wait=True)
        return int(count)

    # -- reads -------------------------------------------------------------------------------------

    async def has_lexical(self) -> bool:
        async with self._errors():
            await self._dimension()
        return self._lexical

    async def search(
        self, vector: Vector, k: int, filters: Filters = None, options: SearchOptions | None = None
    ) -> list[Hit]:
        options = check_search(k, options)
        flt = rq.to_filter(check_filters(filters), check_filters(options.exclude))
        async with self._errors():
            dense = as_vector(vector, await self._dimension())
            if options.mode != "dense" and not self._lexical:
                raise LexicalMissing(f"collection {self._name!r} has no lexical vectors")
            result = await self._client.query_points(self._name, **rq.query_args(dense, k, flt, options))
        return rq.hits(result, dense, options)

    async def facet(self, key: str, limit: int, filters: Filters = None) -> list[tuple[object, int]]:
        flt = rq.to_filter(check_filters(filters))
        async with self._errors():
            await self._dimension()
            response = await self._client.facet(self._name, key=key, limit=limit, exact=True, facet_filter=flt)
        return [(h.value, int(h.count)) for h in response.hits]

    async def scroll(self, filters: Filters, limit: int, *, with_text: bool = False) -> list[StoredPoint]:
        flt = rq.to_filter(check_filters(filters))
        out: list[StoredPoint] = []
        offset = None
        async with self._errors():
            await self._dimension()
            while len(out) < limit:
                records, offset = await self._client.scroll(
                    self._name, **rq.scroll_args(flt, limit - len(out), offset, with_text)
                )
                out.extend(rq.stored_points(records))
                if offset is None:
                    break
        return out

    async def stats(self) -> CollectionStats:
        async with self._errors():
            dim = await self._dimension()
            points = (await self._client.count(self._name, exact=True)).count
        return CollectionStats(name=self._name, points=int(points), dimension=dim, backend=self.backend)

    # -- internals ---------------------------------------------------------------------------------

    @asynccontextmanager
    async def _errors(self) -> AsyncIterator[None]:
        """Client errors as store errors: StoreUnavailable for an outage, CollectionMissing when the
        collection is gone (and the cached dimension with it), StoreError otherwise."""
        if self._closed:
            raise StoreClosed("the store is closed")
        try:
            yield
        except StoreError:
            raise
        except (ApiException, QdrantException, ValueError) as exc:
            unavailable = rq.outage(exc, self._url)
            if unavailable is not None:
                raise unavailable from exc
            if await self._collection_gone():
                self._dim = None
                raise CollectionMissing(f"collection {self._name!r} does not exist") from exc
            raise StoreError(f"qdrant: {exc}") from exc

    async def _collection_gone(self) -> bool:
        try:
            return not await self._client.collection_exists(self._name)
        except Exception:  # an unreachable server is reported by the original error
            return False

    async def _dimension(self) -> int:
        # Cached after the first look, so a search is one request; a failing call on a dropped
        # collection clears it (see _errors).
        if self._dim is None:
            if not await self._client.collection_exists(self._name):
                raise CollectionMissing(f"collection {self._name!r} does not exist yet")
            self._dim = await self._read_dimension()
        return self._dim

    async def _read_dimension(self) -> int:
        dim, self._lexical = rq.read_params(await self._client.get_collection(self._name), self._name)
        return dim
