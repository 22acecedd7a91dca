"""The one interceptor chain every server runs, on a real gRPC server: its order decides that refusals
(authentication, the call limit) are traced and counted with their final code, and that the shared call
wrapping serves unary and streaming calls, generator and context.write() handlers alike."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from prometheus_client.parser import text_string_to_metric_families
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc
from weaverbird_common import telemetry
from weaverbird_common.auth import CALLER, Authenticator, token_digest
from weaverbird_common.server import RunningServer, ServiceBinding, interceptor_chain, start_server

SERVICE = f"chain-{uuid.uuid4().hex[:8]}"  # a label of its own in the shared default registry
EMBED = "weaverbird.v1.EmbedderService/Embed"
TOKEN = "chain-test-token"
# Streams on raw bytes, one per way a handler can stream.
YIELDING = "test.Chain/Yielding"
WRITING = "test.Chain/Writing"


class _HeldEmbedder(embedder_pb2_grpc.EmbedderServiceServicer):
    """Embed answers with the caller the auth interceptor admitted; "hold" waits until `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.holding = asyncio.Event()

    async def Embed(self, request: embedder_pb2.EmbedRequest, context: Any) -> embedder_pb2.EmbedResponse:
        if request.texts and request.texts[0] == "hold":
            self.holding.set()
            await self.release.wait()
        return embedder_pb2.EmbedResponse(model_id=CALLER.get() or "")


async def _yielding(request: bytes, context: Any) -> AsyncIterator[bytes]:
    for i in range(request[0]):
        yield bytes([i])


async def _writing(request: bytes, context: grpc.aio.ServicerContext) -> None:
    for i in range(request[0]):
        await context.write(bytes([i]))


def _add_streams(servicer: object, server: grpc.aio.Server) -> None:
    handlers = {
        "Yielding": grpc.unary_stream_rpc_method_handler(_yielding),
        "Writing": grpc.unary_stream_rpc_method_handler(_writing),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Chain", handlers),))


@pytest.fixture(scope="module")
def embedder() -> _HeldEmbedder:
    return _HeldEmbedder()


@pytest.fixture(scope="module")
async def server(provider: TracerProvider, embedder: _HeldEmbedder) -> AsyncIterator[RunningServer]:
    # The test streams are missing from the role table, so they need admin; admin also grants service (Embed).
    authenticator = Authenticator({token_digest(TOKEN): ("chain-tester", ["admin"])}, {})
    bindings = [
        ServiceBinding(
            embedder_pb2_grpc.add_EmbedderServiceServicer_to_server, embedder, "weaverbird.v1.EmbedderService"
        ),
        ServiceBinding(_add_streams, None, "test.Chain"),
    ]
    running = await start_server(
        bindings,
        observed=True,
        tracer_provider=provider,
        service=SERVICE,
        authenticator=authenticator,
        max_concurrent_rpcs=1,
    )
    yield running
    await running.stop(0)


@pytest.fixture
async def channel(server: RunningServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        yield ch


def _calls(method: str, code: str) -> float:
    """weaverbird_grpc_server_requests_total for this test's server, `method` and `code`."""
    for family in text_string_to_metric_families(telemetry.metrics_text()):
        for sample in family.samples:
            wanted = {"service": SERVICE, "method": method, "code": code}
            if sample.name == "weaverbird_grpc_server_requests_total" and sample.labels == wanted:
                return sample.value
    return 0.0


async def _eventually(check: Any) -> None:
    """The server records a call just after the client saw its status: wait for it, bounded."""
    for _ in range(100):
        if check():
            return
        await asyncio.sleep(0.02)


AUTH = (("authorization", f"Bearer {TOKEN}"),)


def test_the_chain_runs_in_one_order() -> None:
    everything = interceptor_chain(
        "embedder", observed=True, authenticator=Authenticator({}, {}), max_concurrent_rpcs=4
    )
    assert [type(i).__name__ for i in everything] == [
        "OpenTelemetryAioServerInterceptor",  # opentelemetry-instrumentation-grpc
        "MetricsInterceptor",
        "AuthInterceptor",
        "ConcurrencyLimitInterceptor",
        "ErrorInterceptor",
    ]
    assert [type(i).__name__ for i in interceptor_chain("embedder")] == ["ErrorInterceptor"]


async def test_refused_calls_are_counted_and_traced_with_their_code(
    channel: grpc.aio.Channel, spans: InMemorySpanExporter
) -> None:
    spans.clear()
    stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.Embed(embedder_pb2.EmbedRequest(texts=["x"]))
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert (await stub.Embed(embedder_pb2.EmbedRequest(texts=["x"]), metadata=AUTH)).model_id == "chain-tester"

    await _eventually(lambda: _calls(EMBED, "OK") == 1)
    assert _calls(EMBED, "UNAUTHENTICATED") == 1
    assert _calls(EMBED, "OK") == 1
    codes = sorted(
        s.attributes["rpc.grpc.status_code"] for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER
    )
    assert codes == [grpc.StatusCode.OK.value[0], grpc.StatusCode.UNAUTHENTICATED.value[0]]


async def test_the_call_over_the_limit_is_counted_as_resource_exhausted(
    channel: grpc.aio.Channel, embedder: _HeldEmbedder
) -> None:
    stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
    held = asyncio.ensure_future(stub.Embed(embedder_pb2.EmbedRequest(texts=["hold"]), metadata=AUTH))
    await asyncio.wait_for(embedder.holding.wait(), 5)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.Embed(embedder_pb2.EmbedRequest(texts=["x"]), metadata=AUTH)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    embedder.release.set()
    assert (await held).model_id == "chain-tester"
    await _eventually(lambda: _calls(EMBED, "RESOURCE_EXHAUSTED") == 1)
    assert _calls(EMBED, "RESOURCE_EXHAUSTED") == 1


@pytest.mark.parametrize("method", [YIELDING, WRITING])
async def test_both_kinds_of_stream_pass_the_whole_chain(channel: grpc.aio.Channel, method: str) -> None:
    stream = channel.unary_stream(f"/{method}")
    assert [item async for item in stream(bytes([3]), metadata=AUTH)] == [b"\x00", b"\x01", b"\x02"]
    with pytest.raises(grpc.aio.AioRpcError) as info:
        [item async for item in stream(bytes([3]))]
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    await _eventually(lambda: _calls(method, "UNAUTHENTICATED") == 1)
    assert _calls(method, "OK") == 1
    assert _calls(method, "UNAUTHENTICATED") == 1
