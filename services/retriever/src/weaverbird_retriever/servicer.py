"""gRPC adapter of the retriever: validates requests and calls the vector store.

Every store call is awaited (AsyncQdrantClient for a server, worker threads for the embedded stores),
so calls run concurrently and the event loop stays free for health probes. A store that cannot be
reached answers UNAVAILABLE, which callers (the ingester above all) treat as "retry later".
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from weaverbird.v1 import retriever_pb2, retriever_pb2_grpc
from weaverbird_common.errors import FailedPrecondition, InvalidArgument, NotFound, Unavailable
from weaverbird_common.telemetry import retriever_metrics

from weaverbird_retriever import documents
from weaverbird_retriever.catalog import CatalogReader
from weaverbird_retriever.convert import MODE_VALUES, MODES, chunk_to_record, filter_to_dict, hit_to_proto
from weaverbird_retriever.facts import FactStore
from weaverbird_retriever.lexical import encoder, term_coverage
from weaverbird_retriever.settings import RetrieverSettings
from weaverbird_retriever.stores import AsyncVectorStore, CollectionMissing, DimensionMismatch, VectorStore
from weaverbird_retriever.stores.base import (
    FusionKind,
    Hit,
    InvalidInput,
    LexicalMissing,
    SearchMode,
    SearchOptions,
    StoreClosed,
    StoreUnavailable,
)
from weaverbird_retriever.stores.threaded import as_async
from weaverbird_retriever.validation import (
    validate_catalog,
    validate_delete,
    validate_get_document,
    validate_list_documents,
    validate_lookup_facts,
    validate_search,
    validate_upsert,
    validate_upsert_facts,
)

log = logging.getLogger(__name__)

# Values listed per field when the request names no limit: more companies than a KB of filings holds.
_CATALOG_LIMIT = 1000
# Facts a lookup returns when the request names no limit: every fact of a long annual report.
_FACTS_LIMIT = 5000


@contextmanager
def store_errors() -> Iterator[None]:
    """Store failures as statuses: the caller's data (INVALID_ARGUMENT), the collection's state
    (FAILED_PRECONDITION) or a store that cannot serve now (UNAVAILABLE); anything else stays INTERNAL."""
    try:
        yield
    except InvalidInput as exc:
        raise InvalidArgument(str(exc)) from exc
    except DimensionMismatch as exc:
        raise FailedPrecondition(f"{exc}; vectors from a different embedding model need a new collection") from exc
    except CollectionMissing as exc:
        raise FailedPrecondition(f"{exc}: add documents first") from exc
    except LexicalMissing as exc:
        raise FailedPrecondition(
            f"{exc}: it was created before hybrid search. Re-index it into a new collection "
            "(RETRIEVER_COLLECTION=<new name>, then `weaverbird ingest` the documents again), or search "
            "with mode SEARCH_MODE_DENSE"
        ) from exc
    except StoreClosed as exc:
        raise Unavailable("the retriever is shutting down; retry on another replica") from exc
    except StoreUnavailable as exc:
        log.warning("vector store unavailable: %s", exc)
        raise Unavailable(f"the retriever's vector store is unavailable: {exc}") from exc


class RetrieverServicer(retriever_pb2_grpc.RetrieverServiceServicer):
    """Serves Upsert, Search, DeleteDocument, CollectionStats, Catalog, ListDocuments and GetDocument
    over one collection, and UpsertFacts / LookupFacts over its facts collection."""

    def __init__(
        self,
        store: AsyncVectorStore | VectorStore,
        max_k: int,
        max_upsert_batch: int,
        *,
        default_mode: SearchMode = "hybrid",
        fusion: FusionKind = "dbsf",
        prefetch: int = 50,
        lexical_weight: float = 1.0,
        figure_weight: float = 0.0,
        facts: AsyncVectorStore | VectorStore | None = None,
    ) -> None:
        """store: the asynchronous store to serve from; a synchronous one is run on worker threads.
        facts: the store of the facts collection (facts.facts_collection); without it the fact RPCs
        answer FAILED_PRECONDITION.

        Nothing is read from the store here: a Qdrant server that is down at start-up must not keep
        the retriever from starting (it answers UNAVAILABLE until the server is back)."""
        self._store = as_async(store)
        self._catalog = CatalogReader()  # bounded facet calls per Catalog call (catalog.py)
        self._max_k = max_k
        self._max_upsert_batch = max_upsert_batch
        self._default_mode = default_mode
        # Every search starts from these knobs; only its mode and text are the request's.
        self._search_defaults = SearchOptions(
            fusion=fusion, prefetch=prefetch, lexical_weight=lexical_weight, figure_weight=figure_weight
        )
        # The collection's dimension once known (None: not looked up yet, or no collection yet).
        self._dimension: int | None = None
        # Only creating the collection is serialised; every other call runs concurrently.
        self._create_lock = asyncio.Lock()
        self._facts = FactStore(facts) if facts is not None else None

    @classmethod
    def from_settings(
        cls,
        store: AsyncVectorStore | VectorStore,
        settings: RetrieverSettings,
        *,
        facts: AsyncVectorStore | VectorStore | None = None,
        figure_weight: float | None = None,
    ) -> RetrieverServicer:
        """The servicer with the search knobs of `settings` (figure_weight overrides the settings')."""
        return cls(
            store,
            settings.max_k,
            settings.max_upsert_batch,
            default_mode=settings.search_mode,
            fusion=settings.fusion,
            prefetch=settings.prefetch,
            lexical_weight=settings.lexical_weight,
            figure_weight=settings.figure_weight if figure_weight is None else figure_weight,
            facts=facts,
        )

    async def warm_up(self) -> None:
        """Reads the collection once before serving (dimension, and the points gauge for dashboards);
        a store that cannot be reached yet is logged, not fatal: calls answer UNAVAILABLE until it is."""
        try:
            await self._known_dimension()
        except Unavailable as exc:
            log.warning("starting without the vector store: %s", exc)

    async def _known_dimension(self) -> int | None:
        """The collection's dimension, or None if it does not exist yet. Asked of the store until a
        collection exists, so a collection another replica created is found."""
        if self._dimension is None:
            with store_errors():
                try:
                    stats = await self._store.stats()
                except CollectionMissing:
                    return None
            self._dimension = stats.dimension or None
            if self._dimension:
                # Upgrades a collection an earlier version made (payload indexes, figure densities).
                with store_errors():
                    await self._store.ensure_collection(self._dimension)
            retriever_metrics.RETRIEVER_COLLECTION_POINTS.set(stats.points)
        return self._dimension

    async def _ensure(self, dimension: int) -> None:
        if await self._known_dimension() is None:
            async with self._create_lock:
                if self._dimension is None:
                    with store_errors():
                        await self._store.ensure_collection(dimension)
                    self._dimension = dimension
        if dimension != self._dimension:
            raise FailedPrecondition(
                f"vector dimension {dimension} does not match the collection's {self._dimension}; "
                "vectors from a different embedding model need a new collection"
            )

    @contextmanager
    def _forget_missing(self) -> Iterator[None]:
        """A collection dropped behind our back: forget its dimension, so the next Upsert recreates it."""
        try:
            yield
        except CollectionMissing:
            self._dimension = None
            raise

    async def Upsert(
        self, request: retriever_pb2.UpsertRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.UpsertResponse:
        dimension = validate_upsert(request, max_batch=self._max_upsert_batch)
        await self._ensure(dimension)
        with store_errors(), self._forget_missing():
            records = [chunk_to_record(c) for c in request.chunks]
            await self._store.upsert(records)
            stats = await self._store.stats()
        retriever_metrics.RETRIEVER_COLLECTION_POINTS.set(stats.points)
        return retriever_pb2.UpsertResponse(upserted=len(records), collection_points=stats.points)

    async def Search(
        self, request: retriever_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.SearchResponse:
        known = self._dimension
        # Checked before any store call: a bad request is INVALID_ARGUMENT even while the store is down.
        validate_search(request, max_k=self._max_k, dimension=known)
        if known is None:
            if await self._known_dimension() is None:
                return retriever_pb2.SearchResponse()  # nothing stored yet: no hits, not an error
            validate_search(request, max_k=self._max_k, dimension=self._dimension)  # now with the dimension
        filters = filter_to_dict(request.filter) if request.HasField("filter") else None
        with store_errors(), self._forget_missing():
            options = await self._options(request)
            hits = await self._store.search(list(request.vector), request.k, filters or None, options)
        # Off the event loop: tokenising is CPU work, and Chinese text loads jieba's dictionary on first use.
        coverage = await asyncio.to_thread(_term_coverage, options.text if request.term_coverage else "", hits)
        return retriever_pb2.SearchResponse(
            hits=[hit_to_proto(h, c) for h, c in zip(hits, coverage, strict=True)], mode=MODE_VALUES[options.mode]
        )

    async def _options(self, request: retriever_pb2.SearchRequest) -> SearchOptions:
        """The mode asked for, else the deployment default; without text only dense is possible."""
        text = request.text.strip()
        if request.mode == retriever_pb2.SEARCH_MODE_UNSPECIFIED:
            mode: SearchMode = self._default_mode if text else "dense"
            if mode != "dense" and not await self._store.has_lexical():
                mode = "dense"  # a collection from before hybrid search keeps answering densely
        elif request.mode in MODES:
            mode = MODES[request.mode]
            if mode != "dense" and not text:
                raise InvalidArgument(f"{mode} search needs the query text in `text`")
        else:
            raise InvalidArgument(f"unknown search mode {request.mode}")
        return dataclasses.replace(self._search_defaults, mode=mode, text=text)

    async def DeleteDocument(
        self, request: retriever_pb2.DeleteDocumentRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.DeleteDocumentResponse:
        validate_delete(request)
        facts_deleted = 0
        if self._facts is not None:
            with store_errors():
                facts_deleted = await self._facts.delete(request.document_id)
        if await self._known_dimension() is None:
            return retriever_pb2.DeleteDocumentResponse(deleted=0, facts_deleted=facts_deleted)
        with store_errors(), self._forget_missing():
            deleted = await self._store.delete_document(request.document_id)
            if deleted:
                retriever_metrics.RETRIEVER_COLLECTION_POINTS.set((await self._store.stats()).points)
        return retriever_pb2.DeleteDocumentResponse(deleted=deleted, facts_deleted=facts_deleted)

    def _fact_store(self) -> FactStore:
        if self._facts is None:
            raise FailedPrecondition("this retriever was started without a facts store")
        return self._facts

    async def UpsertFacts(
        self, request: retriever_pb2.UpsertFactsRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.UpsertFactsResponse:
        validate_upsert_facts(request)
        with store_errors():
            written = await self._fact_store().replace(request.document_id, request.facts)
        return retriever_pb2.UpsertFactsResponse(upserted=written)

    async def LookupFacts(
        self, request: retriever_pb2.LookupFactsRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.LookupFactsResponse:
        validate_lookup_facts(request)
        with store_errors():
            facts = await self._fact_store().lookup(
                company=request.company,
                concepts=list(request.concepts),
                fiscal_years=list(request.fiscal_years),
                document_id=request.document_id,
                limit=request.limit or _FACTS_LIMIT,
            )
        return retriever_pb2.LookupFactsResponse(facts=facts)

    async def CollectionStats(
        self, request: retriever_pb2.CollectionStatsRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.CollectionStatsResponse:
        with store_errors():
            try:
                stats = await self._store.stats()
            except CollectionMissing:  # no collection yet: an empty knowledge base, not an error
                self._dimension = None
                return retriever_pb2.CollectionStatsResponse(points=0, dimension=0)
        retriever_metrics.RETRIEVER_COLLECTION_POINTS.set(stats.points)
        return retriever_pb2.CollectionStatsResponse(
            collection=stats.name, points=stats.points, dimension=stats.dimension, backend=stats.backend
        )

    async def Catalog(
        self, request: retriever_pb2.CatalogRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.CatalogResponse:
        validate_catalog(request)
        if await self._known_dimension() is None:
            return retriever_pb2.CatalogResponse()
        with store_errors(), self._forget_missing():
            return await self._catalog.fetch(self._store, request.limit or _CATALOG_LIMIT)

    async def ListDocuments(
        self, request: retriever_pb2.ListDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.ListDocumentsResponse:
        validate_list_documents(request, max_page_size=documents.MAX_PAGE_SIZE)
        if request.page_token:
            documents.decode_token(request.page_token)  # a bad token is INVALID_ARGUMENT even when empty
        if await self._known_dimension() is None:
            return retriever_pb2.ListDocumentsResponse()
        with store_errors(), self._forget_missing():
            return await documents.list_documents(self._store, request)

    async def GetDocument(
        self, request: retriever_pb2.GetDocumentRequest, context: grpc.aio.ServicerContext
    ) -> retriever_pb2.GetDocumentResponse:
        validate_get_document(request)
        if await self._known_dimension() is None:
            raise NotFound(f"document {request.document_id!r} is not in the knowledge base (it is empty)")
        with store_errors(), self._forget_missing():
            return await documents.get_document(self._store, request.document_id)


def _term_coverage(text: str, hits: list[Hit]) -> list[float | None]:
    """Each hit's share of the query's terms, read from its title and text (None when not asked for)."""
    if not text:
        return [None] * len(hits)
    lexical = encoder()
    asked = lexical.terms(text)
    return [term_coverage(asked, lexical.terms(f"{h.payload.get('title', '')}\n{h.text}")) for h in hits]
