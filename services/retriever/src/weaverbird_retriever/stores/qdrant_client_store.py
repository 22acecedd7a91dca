"""The Qdrant store for synchronous callers: qdrant-client's local mode (disk or memory) or a server.

There is one Qdrant store, the asynchronous AsyncQdrantStore (qdrant_server_store); this class runs
its coroutines on an event loop of its own, on a thread of its own, and waits for them. It exists
because open_store() is synchronous (tests, benchmarks, the evaluation and offline tools call it),
and because the retriever serves local mode through it on worker threads (stores.threaded): local
mode searches by brute force in Python, which would stall the retriever's event loop if run there.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from qdrant_client import AsyncQdrantClient

from weaverbird_retriever.stores.base import (
    ChunkRecord,
    CollectionStats,
    Filters,
    Hit,
    SearchOptions,
    StoreClosed,
    StoredPoint,
    Vector,
)
from weaverbird_retriever.stores.qdrant_server_store import AsyncQdrantStore

T = TypeVar("T")


class QdrantClientStore:
    """One collection through AsyncQdrantStore, called synchronously; build it with .local(), .memory()
    or .server(). Satisfies VectorStore."""

    def __init__(self, store: AsyncQdrantStore, *, serialize: bool) -> None:
        """serialize: one call at a time, each whole (local mode: delete_document's count and delete see
        no upsert between them); a server orders concurrent requests itself."""
        self.store = store
        self.backend = store.backend
        self._lock: AbstractContextManager[object] = threading.RLock() if serialize else contextlib.nullcontext()
        self._state = threading.Lock()  # guards _closed against a call submitted while closing
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"qdrant-{self.backend}", daemon=True)
        self._thread.start()

    @classmethod
    def server(cls, url: str, collection: str, api_key: str | None = None, timeout: int = 30) -> QdrantClientStore:
        """A Qdrant server at url (REST), blocking; the retriever uses AsyncQdrantStore itself."""
        return cls(AsyncQdrantStore.server(url, collection, api_key=api_key, timeout=timeout), serialize=False)

    @classmethod
    def local(cls, path: str, collection: str) -> QdrantClientStore:
        """Local mode persisted under path: brute-force numpy search, one sqlite commit per point."""
        return cls._local(AsyncQdrantClient(path=path, force_disable_check_same_thread=True), collection, "local")

    @classmethod
    def memory(cls, collection: str) -> QdrantClientStore:
        """Local mode held in memory only (tests, throwaway runs)."""
        return cls._local(AsyncQdrantClient(location=":memory:"), collection, "local-memory")

    @classmethod
    def _local(cls, client: AsyncQdrantClient, collection: str, backend: str) -> QdrantClientStore:
        # Local mode ignores payload indexes (and warns about each): it scans anyway. The client is
        # made on this thread and used on the loop's, hence no same-thread check for its sqlite file.
        return cls(AsyncQdrantStore(client, collection, backend=backend, payload_indexes=False), serialize=True)

    @property
    def lexical(self) -> bool:
        return self._run(self.store.has_lexical())

    def ensure_collection(self, dimension: int) -> None:
        self._run(self.store.ensure_collection(dimension))

    def upsert(self, records: Sequence[ChunkRecord]) -> None:
        self._run(self.store.upsert(records))

    def delete_document(self, document_id: str) -> int:
        return self._run(self.store.delete_document(document_id))

    def search(
        self, vector: Vector, k: int, filters: Filters = None, options: SearchOptions | None = None
    ) -> list[Hit]:
        return self._run(self.store.search(vector, k, filters, options))

    def facet(self, key: str, limit: int, filters: Filters = None) -> list[tuple[object, int]]:
        return self._run(self.store.facet(key, limit, filters))

    def scroll(self, filters: Filters, limit: int, *, with_text: bool = False) -> list[StoredPoint]:
        return self._run(self.store.scroll(filters, limit, with_text=with_text))

    def stats(self) -> CollectionStats:
        return self._run(self.store.stats())

    def close(self) -> None:
        """Lets calls in flight finish, closes the client, then stops the loop and its thread."""
        with self._lock, self._state:
            if self._closed:
                return
            self._closed = True
            done = asyncio.run_coroutine_threadsafe(self._close_after_calls(), self._loop)
        try:
            done.result()
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    async def _close_after_calls(self) -> None:
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        await asyncio.gather(*others, return_exceptions=True)
        await self.store.close()

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            with self._state:
                if self._closed:
                    call.close()
                    raise StoreClosed("the store is closed")
                future = asyncio.run_coroutine_threadsafe(call, self._loop)
            return future.result()
