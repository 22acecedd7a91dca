"""Vector stores behind the retriever: Qdrant Edge (embedded default), qdrant-client local or server.

open_store gives the synchronous VectorStore (tools, tests, the evaluation); open_async_store gives
what the retriever serves from: AsyncQdrantClient for a server, the embedded stores on worker threads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from weaverbird_retriever.stores.base import (
    INDEXED_FIELDS,
    TEXT_KEY,
    AsyncVectorStore,
    ChunkRecord,
    CollectionMissing,
    CollectionStats,
    DimensionMismatch,
    Hit,
    StoreClosed,
    StoreError,
    StoreUnavailable,
    VectorStore,
    point_id,
)

__all__ = [
    "INDEXED_FIELDS",
    "TEXT_KEY",
    "AsyncVectorStore",
    "ChunkRecord",
    "CollectionMissing",
    "CollectionStats",
    "DimensionMismatch",
    "Hit",
    "StoreClosed",
    "StoreError",
    "StoreUnavailable",
    "VectorStore",
    "open_async_store",
    "open_store",
    "point_id",
]

StoreKind = Literal["edge", "local", "server"]


def open_store(
    kind: StoreKind,
    *,
    path: str | None,
    url: str | None,
    api_key: str | None,
    collection: str,
) -> VectorStore:
    """Open the configured store; the collection itself is created later by ensure_collection.

    edge:   an Edge shard in <path>/edge/<collection>
    local:  qdrant-client local mode in <path>/local, or in memory if path is ":memory:"
    server: a Qdrant server at url, with api_key if given
    Each embedded backend gets its own subdirectory so switching RETRIEVER_STORE never mixes files.
    """
    if not collection:
        raise StoreError("collection name must not be empty")
    # Imported here so a deployment that uses one backend does not load the other's native code.
    if kind == "edge":
        from weaverbird_retriever.stores.edge_store import EdgeStore

        if not path or path == ":memory:":
            raise StoreError("store 'edge' needs a directory path")
        return EdgeStore(Path(path) / "edge" / collection, collection)
    if kind == "local":
        from weaverbird_retriever.stores.qdrant_client_store import QdrantClientStore

        if path == ":memory:":
            return QdrantClientStore.memory(collection)
        if not path:
            raise StoreError("store 'local' needs a directory path (or ':memory:')")
        return QdrantClientStore.local(str(Path(path) / "local"), collection)
    if kind == "server":
        from weaverbird_retriever.stores.qdrant_client_store import QdrantClientStore

        if not url:
            raise StoreError("store 'server' needs a Qdrant URL")
        return QdrantClientStore.server(url, collection, api_key=api_key)
    raise StoreError(f"unknown store kind {kind!r}; expected edge, local or server")


def open_async_store(
    kind: StoreKind,
    *,
    path: str | None,
    url: str | None,
    api_key: str | None,
    collection: str,
    timeout_s: int = 30,
) -> AsyncVectorStore:
    """The configured store for the event loop (arguments as open_store; timeout_s bounds each request
    to a Qdrant server). A server is reached with AsyncQdrantClient, so requests run concurrently; the
    embedded stores run each call on a worker thread."""
    if kind == "server":
        from weaverbird_retriever.stores.qdrant_server_store import AsyncQdrantStore

        if not collection:
            raise StoreError("collection name must not be empty")
        if not url:
            raise StoreError("store 'server' needs a Qdrant URL")
        return AsyncQdrantStore.server(url, collection, api_key=api_key, timeout=timeout_s)
    from weaverbird_retriever.stores.threaded import ThreadedStore

    return ThreadedStore(open_store(kind, path=path, url=url, api_key=api_key, collection=collection))
