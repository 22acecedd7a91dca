"""gRPC adapter of the retriever: validates requests and calls the vector store."""

from __future__ import annotations

import asyncio
import threading

import grpc
from weaverbird.v1 import retriever_pb2, retriever_pb2_grpc
from weaverbird_common import telemetry
from weaverbird_common.errors import FailedPrecondition, InvalidArgument

from weaverbird_retriever.catalog import read_catalog
from weaverbird_retriever.convert import MODE_VALUES, MODES, chunk_to_record, filter_to_dict, hit_to_proto
from weaverbird_retriever.stores import CollectionMissing, DimensionMismatch, VectorStore
from weaverbird_retriever.stores.base import InvalidInput, LexicalMissing, SearchMode, SearchOptions

# Values listed per field when the request names no limit: more companies than a KB of filings holds.
_CATALOG_LIMIT = 1000


class RetrieverServicer(retriever_pb2_grpc.RetrieverServiceServicer):
    """Serves Upsert, Search, DeleteDocument, CollectionStats and Catalog over one collection."""

    def __init__(
        self,
        store: VectorStore,
        max_k: int,
        max_upsert_batch: int,
        *,
        default_mode: SearchMode = "hybrid",
        fusion: str = "dbsf",
        prefetch: int = 50,
        lexical_weight: float = 1.0,
    ) -> None:
        self._store = store
        self._max_k = max_k
        self._max_upsert_batch = max_upsert_batch
        self._default_mode = default_mode
        self._fusion = fusion
        self._prefetch = prefetch
        self._lexical_weight = lexical_weight
        self._dimension: int | None = None
        self._create_lock = threading.Lock()
        try:
            stats = store.stats()
            self._dimension = stats.dimension or None
            telemetry.RETRIEVER_COLLECTION_POINTS.set(stats.points)
        except CollectionMissing:
            self._dimension = None

    def _ensure(self, dimension: int) -> None:
        with self._create_lock:
            if self._dimension is None:
                self._store.ensure_collection(dimension)
                self._dimension = dimension
        if dimension != self._dimension:
            raise FailedPrecondition(
                f"vector dimension {dimension} does not match the collection's {self._dimension}; "
                "vectors from a different embedding model need a new collection"
            )

    async def Upsert(
        self, request: retriever_pb2.UpsertRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.UpsertResponse:
        if not request.chunks:
            raise InvalidArgument("chunks must not be empty")
        if len(request.chunks) > self._max_upsert_batch:
            raise InvalidArgument(f"at most {self._max_upsert_batch} chunks per call, got {len(request.chunks)}")
        dims = {len(c.vector) for c in request.chunks}
        if len(dims) != 1 or 0 in dims:
            raise InvalidArgument("all chunks need non-empty vectors of one dimension")
        for i, chunk in enumerate(request.chunks):
            if not chunk.payload.document_id:
                raise InvalidArgument(f"chunks[{i}].payload.document_id is required")
        self._ensure(dims.pop())
        records = [chunk_to_record(c) for c in request.chunks]
        try:
            await asyncio.to_thread(self._store.upsert, records)
        except DimensionMismatch as exc:
            raise FailedPrecondition(str(exc)) from exc
        except InvalidInput as exc:
            raise InvalidArgument(str(exc)) from exc
        stats = await asyncio.to_thread(self._store.stats)
        telemetry.RETRIEVER_COLLECTION_POINTS.set(stats.points)
        return retriever_pb2.UpsertResponse(upserted=len(records), collection_points=stats.points)

    async def Search(
        self, request: retriever_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.SearchResponse:
        if not 1 <= request.k <= self._max_k:
            raise InvalidArgument(f"k must be between 1 and {self._max_k}, got {request.k}")
        if not request.vector:
            raise InvalidArgument("vector must not be empty")
        if self._dimension is None:
            return retriever_pb2.SearchResponse()  # nothing stored yet: no hits, not an error
        if len(request.vector) != self._dimension:
            raise InvalidArgument(f"vector has dimension {len(request.vector)}, the collection {self._dimension}")
        filters = filter_to_dict(request.filter) if request.HasField("filter") else None
        options = self._options(request)
        try:
            # HNSW and sparse search take about a millisecond: inline is cheaper than a thread hop.
            hits = self._store.search(list(request.vector), request.k, filters or None, options)
        except InvalidInput as exc:
            raise InvalidArgument(str(exc)) from exc
        except LexicalMissing as exc:
            raise FailedPrecondition(
                f"{exc}: it was created before hybrid search. Re-index it into a new collection "
                "(RETRIEVER_COLLECTION=<new name>, then `weaverbird ingest` the documents again), or search "
                "with mode SEARCH_MODE_DENSE"
            ) from exc
        return retriever_pb2.SearchResponse(hits=[hit_to_proto(h) for h in hits], mode=MODE_VALUES[options.mode])

    def _options(self, request: retriever_pb2.SearchRequest) -> SearchOptions:
        """The mode asked for, else the deployment default; without text only dense is possible."""
        text = request.text.strip()
        if request.mode == retriever_pb2.SEARCH_MODE_UNSPECIFIED:
            mode: SearchMode = self._default_mode if text else "dense"
            if mode != "dense" and not self._store.lexical:
                mode = "dense"  # a collection from before hybrid search keeps answering densely
        elif request.mode in MODES:
            mode = MODES[request.mode]
            if mode != "dense" and not text:
                raise InvalidArgument(f"{mode} search needs the query text in `text`")
        else:
            raise InvalidArgument(f"unknown search mode {request.mode}")
        return SearchOptions(
            mode=mode,
            text=text,
            fusion=self._fusion,  # type: ignore[arg-type]
            prefetch=self._prefetch,
            lexical_weight=self._lexical_weight,
        )

    async def DeleteDocument(
        self, request: retriever_pb2.DeleteDocumentRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.DeleteDocumentResponse:
        if not request.document_id:
            raise InvalidArgument("document_id is required")
        if self._dimension is None:
            return retriever_pb2.DeleteDocumentResponse(deleted=0)
        deleted = await asyncio.to_thread(self._store.delete_document, request.document_id)
        if deleted:
            telemetry.RETRIEVER_COLLECTION_POINTS.set((await asyncio.to_thread(self._store.stats)).points)
        return retriever_pb2.DeleteDocumentResponse(deleted=deleted)

    async def CollectionStats(
        self, request: retriever_pb2.CollectionStatsRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.CollectionStatsResponse:
        try:
            stats = await asyncio.to_thread(self._store.stats)
        except CollectionMissing:
            return retriever_pb2.CollectionStatsResponse(points=0, dimension=0)
        telemetry.RETRIEVER_COLLECTION_POINTS.set(stats.points)
        return retriever_pb2.CollectionStatsResponse(
            collection=stats.name, points=stats.points, dimension=stats.dimension, backend=stats.backend
        )

    async def Catalog(
        self, request: retriever_pb2.CatalogRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.CatalogResponse:
        if request.limit < 0:
            raise InvalidArgument(f"limit must not be negative, got {request.limit}")
        if self._dimension is None:
            return retriever_pb2.CatalogResponse()
        return await asyncio.to_thread(read_catalog, self._store, request.limit or _CATALOG_LIMIT)
