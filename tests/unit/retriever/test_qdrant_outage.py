"""The retriever when its Qdrant server is down, hanging or failing, and the asynchronous server store.

A real retriever gRPC server (start_server, as serve_forever hosts it) over RETRIEVER_STORE=server is
pointed at what a Qdrant outage looks like from the client: a port nothing listens on, a TCP peer
that accepts and never answers, a proxy answering 503. There is no Qdrant server binary on this
machine, so the server store's happy path runs on AsyncQdrantClient's local mode instead (same store
code, every request but the HTTP transport) and is compared with the synchronous local-mode store.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from pathlib import Path

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from qdrant_client import AsyncQdrantClient
from weaverbird.v1 import retriever_pb2, retriever_pb2_grpc
from weaverbird_common.server import ServiceBinding, start_server
from weaverbird_retriever.catalog import read_catalog
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.stores import (
    AsyncVectorStore,
    ChunkRecord,
    DimensionMismatch,
    StoreError,
    StoreUnavailable,
    VectorStore,
    open_async_store,
    open_store,
    point_id,
)
from weaverbird_retriever.stores.base import SearchOptions
from weaverbird_retriever.stores.edge_store import EdgeStore
from weaverbird_retriever.stores.qdrant_client_store import QdrantClientStore
from weaverbird_retriever.stores.qdrant_server_store import AsyncQdrantStore

DIM = 8
SERVICE = retriever_pb2.DESCRIPTOR.services_by_name["RetrieverService"].full_name
SERVING = health_pb2.HealthCheckResponse.SERVING
# Bounds every wait so a regression fails instead of hanging; no test measures time with it.
GUARD_S = 30

# Qdrant's client warns when it cannot read the server version, which is the point of these tests.
pytestmark = pytest.mark.filterwarnings("ignore:Failed to obtain server version:UserWarning")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _vector(seed: int = 0) -> list[float]:
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32).tolist()


def _chunk(document_id: str = "doc-1", seed: int = 0) -> retriever_pb2.Chunk:
    chunk = retriever_pb2.Chunk(vector=_vector(seed), text="Aurora net sales rose to 812 million dollars.")
    chunk.payload.document_id = document_id
    chunk.payload.company = "AURORA"
    return chunk


@asynccontextmanager
async def _retriever(
    store: AsyncVectorStore | VectorStore,
) -> AsyncIterator[tuple[retriever_pb2_grpc.RetrieverServiceStub, health_pb2_grpc.HealthStub]]:
    """A real retriever gRPC server on 127.0.0.1 over store, and stubs of it and its health service."""
    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=16)
    binding = ServiceBinding(retriever_pb2_grpc.add_RetrieverServiceServicer_to_server, servicer, SERVICE)
    running = await start_server([binding])
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        yield retriever_pb2_grpc.RetrieverServiceStub(channel), health_pb2_grpc.HealthStub(channel)
    finally:
        await channel.close()
        await running.stop(0)


async def _status(call: Awaitable[object]) -> tuple[grpc.StatusCode, str]:
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details() or ""
    return grpc.StatusCode.OK, ""


def _calls(stub: retriever_pb2_grpc.RetrieverServiceStub) -> dict[str, Callable[[], Awaitable[object]]]:
    """One valid request per RPC."""
    return {
        "Upsert": lambda: stub.Upsert(retriever_pb2.UpsertRequest(chunks=[_chunk()]), timeout=GUARD_S),
        "Search": lambda: stub.Search(
            retriever_pb2.SearchRequest(vector=_vector(), k=3, text="Aurora"), timeout=GUARD_S
        ),
        "CollectionStats": lambda: stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=GUARD_S),
        "DeleteDocument": lambda: stub.DeleteDocument(
            retriever_pb2.DeleteDocumentRequest(document_id="doc-1"), timeout=GUARD_S
        ),
        "Catalog": lambda: stub.Catalog(retriever_pb2.CatalogRequest(), timeout=GUARD_S),
    }


# -- a Qdrant server that is not there --------------------------------------------------------------


async def test_every_rpc_answers_unavailable_when_qdrant_is_unreachable() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    store = open_async_store("server", path=None, url=url, api_key=None, collection="kb", timeout_s=5)
    async with _retriever(store) as (stub, health):
        for name, call in _calls(stub).items():
            code, details = await _status(call())
            assert code == grpc.StatusCode.UNAVAILABLE, (name, code, details)
            assert f"Qdrant server at {url} is unreachable" in details, (name, details)
            assert "Traceback" not in details
        # A bad request is still the caller's error, not an outage: it is refused before any store call.
        code, details = await _status(stub.Search(retriever_pb2.SearchRequest(vector=_vector(), k=0)))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "k" in details
        reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=GUARD_S)
        assert reply.status == SERVING
    await store.close()


class _SilentPeer:
    """A TCP server that accepts connections and reads requests but never answers, as a hung Qdrant
    (or a half-dead node behind a load balancer) does."""

    def __init__(self) -> None:
        self.requests = 0
        self.changed = asyncio.Event()
        self._writers: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        for writer in self._writers:
            writer.close()
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        await reader.readuntil(b"\r\n\r\n")  # the request line and headers arrived
        self.requests += 1
        self.changed.set()

    async def wait_for_requests(self, n: int) -> None:
        async with asyncio.timeout(GUARD_S):
            while self.requests < n:
                self.changed.clear()
                await self.changed.wait()


async def test_calls_to_a_hung_qdrant_run_concurrently_and_health_still_answers() -> None:
    peer = _SilentPeer()
    async with peer as url:
        store = open_async_store("server", path=None, url=url, api_key=None, collection="kb", timeout_s=1)
        async with _retriever(store) as (stub, health):
            searches = [asyncio.ensure_future(_status(_calls(stub)["Search"]())) for _ in range(3)]
            # All three reach Qdrant at once: no lock serialises them behind one another.
            await peer.wait_for_requests(3)
            reply = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=GUARD_S)
            assert reply.status == SERVING
            assert not any(s.done() for s in searches)  # health answered while every search was stuck
            for code, details in await asyncio.gather(*searches):
                assert code == grpc.StatusCode.UNAVAILABLE
                assert f"Qdrant server at {url} did not answer in time" in details
        await store.close()


class _HttpStatusServer:
    """An HTTP server answering every request with one status, as a proxy in front of Qdrant may."""

    def __init__(self, status: int, reason: str) -> None:
        self._line = f"HTTP/1.1 {status} {reason}\r\n".encode()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = b'{"status":{"error":"nope"}}'
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                await reader.readexactly(length)
                writer.write(
                    self._line + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


@pytest.mark.parametrize(
    ("status", "reason", "expected"),
    [
        (503, "Service Unavailable", "cannot serve requests now (HTTP 503 Service Unavailable)"),
        (502, "Bad Gateway", "cannot serve requests now (HTTP 502 Bad Gateway)"),
        (401, "Unauthorized", "refused the credentials (HTTP 401 Unauthorized); check RETRIEVER_QDRANT_API_KEY"),
    ],
)
async def test_a_failing_qdrant_is_unavailable_for_both_clients(status: int, reason: str, expected: str) -> None:
    async with _HttpStatusServer(status, reason) as url:
        store = AsyncQdrantStore.server(url, "kb", timeout=5)
        with pytest.raises(StoreUnavailable, match=expected.replace("(", r"\(").replace(")", r"\)")):
            await store.search(_vector(), 3)
        await store.close()
        sync = QdrantClientStore.server(url, "kb", timeout=5)
        with pytest.raises(StoreUnavailable, match="HTTP"):
            await asyncio.to_thread(sync.stats)
        sync.close()


async def test_a_rejected_request_is_not_an_outage() -> None:
    # 400 is Qdrant refusing this request: retrying will not help, so it must not look like an outage.
    async with _HttpStatusServer(400, "Bad Request") as url:
        store = AsyncQdrantStore.server(url, "kb", timeout=5)
        with pytest.raises(StoreError) as raised:
            await store.stats()
        assert not isinstance(raised.value, StoreUnavailable)
        async with _retriever(store) as (stub, _):
            code, _details = await _status(_calls(stub)["CollectionStats"]())
            assert code == grpc.StatusCode.INTERNAL
        await store.close()


# -- embedded stores: synchronous, but off the event loop -----------------------------------------------


@contextmanager
def _busy(store: VectorStore) -> Iterator[None]:
    """Holds the store's own exclusive lock on a thread of its own, as a long call (a big upsert, an
    optimise) does; a dedicated thread, because local mode's lock is re-entrant for its owner."""
    lock: AbstractContextManager[object] = (
        store._lock.write() if isinstance(store, EdgeStore) else store._lock  # type: ignore[attr-defined]
    )
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            release.wait(GUARD_S)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(GUARD_S)
    try:
        yield
    finally:
        release.set()
        holder.join()


@pytest.fixture(params=["edge", "local"])
def embedded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    store = open_store(request.param, path=str(tmp_path), url=None, api_key=None, collection="kb")
    store.ensure_collection(DIM)
    yield store
    store.close()


async def test_a_busy_embedded_store_does_not_stall_health(embedded: VectorStore) -> None:
    async with _retriever(embedded) as (stub, health):
        assert (await stub.Upsert(retriever_pb2.UpsertRequest(chunks=[_chunk()]), timeout=GUARD_S)).upserted == 1
        with _busy(embedded):
            search = asyncio.ensure_future(_calls(stub)["Search"]())
            reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=GUARD_S)
            assert reply.status == SERVING
            await asyncio.sleep(0)
            assert not search.done()  # waiting for the store on a worker thread, not on the loop
        hits = (await search).hits  # type: ignore[attr-defined]
        assert [h.payload.document_id for h in hits] == ["doc-1"]


# -- the server store's own code, on AsyncQdrantClient's local mode ------------------------------------------


def _records(n: int = 24) -> list[ChunkRecord]:
    rng = np.random.default_rng(3)
    companies = ["AURORA", "BOREALIS", "CIRRUS"]
    words = ["revenue grew", "dividend paid", "capital expenditure", "net sales fell"]
    return [
        ChunkRecord(
            point_id(f"doc-{i % 4}", i),
            rng.standard_normal(DIM).astype(np.float32),
            f"{companies[i % 3].title()} {words[i % 4]} in {2020 + i % 3}",
            {
                "document_id": f"doc-{i % 4}",
                "company": companies[i % 3],
                "year": 2020 + i % 3,
                "aliases": ["A", "B"],
                **({"quarter": 1 + i % 4} if i % 2 else {}),  # every other chunk from a quarterly report
            },
        )
        for i in range(n)
    ]


@pytest.fixture
async def async_local() -> AsyncIterator[AsyncQdrantStore]:
    store = AsyncQdrantStore(AsyncQdrantClient(location=":memory:"), "kb")
    yield store
    await store.close()


async def test_async_store_answers_like_the_synchronous_store(async_local: AsyncQdrantStore) -> None:
    sync = QdrantClientStore.memory("kb")
    records = _records()
    sync.ensure_collection(DIM)
    sync.upsert(records)
    await async_local.ensure_collection(DIM)
    await async_local.ensure_collection(DIM)  # idempotent
    await async_local.upsert(records)
    assert await async_local.has_lexical()

    query = records[5].vector
    cases = [
        (None, SearchOptions()),
        ({"company": "AURORA"}, SearchOptions(mode="lexical", text="dividend revenue")),
        (None, SearchOptions(mode="hybrid", text="net sales", fusion="rrf", lexical_weight=2.0)),
        ({"year": 2021}, SearchOptions(mode="hybrid", text="capital", exclude={"company": "CIRRUS"})),
    ]
    for filters, options in cases:
        expected = sync.search(query, 5, filters, options)
        got = await async_local.search(query, 5, filters, options)
        assert got, (filters, options)
        assert [(h.id, h.text, h.payload) for h in got] == [(h.id, h.text, h.payload) for h in expected]
        assert [h.score for h in got] == pytest.approx([h.score for h in expected], abs=1e-5)

    assert await async_local.facet("company", 10) == sync.facet("company", 10)
    assert (await async_local.stats()).points == sync.stats().points == len(records)
    with pytest.raises(DimensionMismatch):
        await async_local.ensure_collection(DIM + 1)
    assert await async_local.delete_document("doc-1") == sync.delete_document("doc-1") == 6
    assert (await async_local.stats()).points == len(records) - 6
    sync.close()


async def test_servicer_over_the_async_store_serves_every_rpc(async_local: AsyncQdrantStore) -> None:
    sync = QdrantClientStore.memory("kb")
    async with _retriever(async_local) as (stub, _):
        stats = await stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=GUARD_S)
        assert stats.points == 0  # no collection yet: empty, not an error
        chunks = [_chunk(f"doc-{i % 2}", seed=i) for i in range(4)]
        for i, chunk in enumerate(chunks):
            chunk.payload.chunk_index = i
        reply = await stub.Upsert(retriever_pb2.UpsertRequest(chunks=chunks), timeout=GUARD_S)
        assert (reply.upserted, reply.collection_points) == (4, 4)
        search = await stub.Search(retriever_pb2.SearchRequest(vector=_vector(2), k=2, text="Aurora sales"))
        assert search.mode == retriever_pb2.SEARCH_MODE_HYBRID and len(search.hits) == 2
        catalog = await stub.Catalog(retriever_pb2.CatalogRequest(), timeout=GUARD_S)
        assert [(c.company, c.chunks) for c in catalog.companies] == [("AURORA", 4)]
        assert (await stub.DeleteDocument(retriever_pb2.DeleteDocumentRequest(document_id="doc-0"))).deleted == 2
        stats = await stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=GUARD_S)
        assert (stats.points, stats.dimension, stats.backend) == (2, DIM, "server")

        # The concurrent catalog reads what the synchronous one (the evaluation's) reads.
        sync.ensure_collection(DIM)
        sync.upsert(_records())
        async_store = AsyncQdrantStore(AsyncQdrantClient(location=":memory:"), "kb")
        await async_store.ensure_collection(DIM)
        await async_store.upsert(_records())
        async with _retriever(async_store) as (other, _):
            catalog = await other.Catalog(retriever_pb2.CatalogRequest(limit=50), timeout=GUARD_S)
            assert catalog == read_catalog(sync, 50)
            assert all(c.quarters for c in catalog.companies)
        await async_store.close()
    sync.close()
