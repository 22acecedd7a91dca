"""The embedded stores (Qdrant Edge, qdrant-client local mode) behind the asynchronous interface.

Their calls are synchronous, so each runs on a worker thread: the event loop keeps answering health
probes and other requests meanwhile. The stores lock internally (see each store's docstring), so
calls from many threads at once are safe.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence

from weaverbird_retriever.stores.base import (
    AsyncVectorStore,
    ChunkRecord,
    CollectionStats,
    Filters,
    Hit,
    SearchOptions,
    StoredPoint,
    Vector,
    VectorStore,
)


class ThreadedStore:
    """A VectorStore whose every call runs in asyncio's default thread pool; satisfies AsyncVectorStore."""

    def __init__(self, store: VectorStore) -> None:
        self.sync = store
        self.backend: str = getattr(store, "backend", type(store).__name__)

    async def ensure_collection(self, dimension: int) -> None:
        await asyncio.to_thread(self.sync.ensure_collection, dimension)

    async def upsert(self, records: Sequence[ChunkRecord]) -> None:
        await asyncio.to_thread(self.sync.upsert, records)

    async def has_lexical(self) -> bool:
        # A property, but qdrant-client's reads the collection on first use.
        return await asyncio.to_thread(lambda: self.sync.lexical)

    async def search(
        self, vector: Vector, k: int, filters: Filters = None, options: SearchOptions | None = None
    ) -> list[Hit]:
        # A thread hop costs tens of microseconds next to a millisecond search: worth it so that a
        # slow search (a cold page cache, a big local-mode scan) never stalls the loop.
        return await asyncio.to_thread(self.sync.search, vector, k, filters, options)

    async def facet(self, key: str, limit: int, filters: Filters = None) -> list[tuple[object, int]]:
        return await asyncio.to_thread(self.sync.facet, key, limit, filters)

    async def delete_document(self, document_id: str) -> int:
        return await asyncio.to_thread(self.sync.delete_document, document_id)

    async def scroll(self, filters: Filters, limit: int, *, with_text: bool = False) -> list[StoredPoint]:
        return await asyncio.to_thread(self.sync.scroll, filters, limit, with_text=with_text)

    async def stats(self) -> CollectionStats:
        return await asyncio.to_thread(self.sync.stats)

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)


def as_async(store: VectorStore | AsyncVectorStore) -> AsyncVectorStore:
    """store itself if its methods are coroutines, else the synchronous store run on threads."""
    if inspect.iscoroutinefunction(type(store).search):
        return store  # type: ignore[return-value]
    return ThreadedStore(store)  # type: ignore[arg-type]
