"""The per-server call limit on a real gRPC server: one call too many is RESOURCE_EXHAUSTED at once with
a message to retry, health checks are never refused, and permits come back when calls end or are cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc, generator_pb2, generator_pb2_grpc
from weaverbird_common.server import RunningServer, ServiceBinding, start_server
from weaverbird_common.settings import BaseServiceSettings


class HeldEmbedder(embedder_pb2_grpc.EmbedderServiceServicer):
    """Each Embed call holds its permit until `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.two_started = asyncio.Event()
        self.started = 0

    async def Embed(
        self, request: embedder_pb2.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> embedder_pb2.EmbedResponse:
        self.started += 1
        if self.started == 2:
            self.two_started.set()
        await self.release.wait()
        return embedder_pb2.EmbedResponse()


class EndlessGenerator(generator_pb2_grpc.GeneratorServiceServicer):
    """A stream that never ends by itself (ended by the client's cancel)."""

    async def GenerateStream(self, request: generator_pb2.GenerateRequest, context: grpc.aio.ServicerContext) -> None:
        while True:
            await context.write(generator_pb2.GenerateEvent(token="x"))
            await asyncio.sleep(0.05)


@pytest.fixture
async def server() -> AsyncIterator[tuple[RunningServer, HeldEmbedder]]:
    embedder = HeldEmbedder()
    running = await start_server(
        [
            ServiceBinding(
                embedder_pb2_grpc.add_EmbedderServiceServicer_to_server, embedder, "weaverbird.v1.EmbedderService"
            ),
            ServiceBinding(
                generator_pb2_grpc.add_GeneratorServiceServicer_to_server,
                EndlessGenerator(),
                "weaverbird.v1.GeneratorService",
            ),
        ],
        max_concurrent_rpcs=2,
        service="embedder",
    )
    try:
        yield running, embedder
    finally:
        embedder.release.set()
        await running.stop(0)


async def _embed(stub: embedder_pb2_grpc.EmbedderServiceStub) -> embedder_pb2.EmbedResponse:
    return await stub.Embed(embedder_pb2.EmbedRequest(texts=["x"]), timeout=10)


async def test_the_call_over_the_limit_is_refused_with_a_retry_message_and_health_still_answers(
    server: tuple[RunningServer, HeldEmbedder],
) -> None:
    running, embedder = server
    async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
        held = [asyncio.ensure_future(_embed(stub)) for _ in range(2)]
        await asyncio.wait_for(embedder.two_started.wait(), 10)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await _embed(stub)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "retry" in err.value.details() and "embedder" in err.value.details()
        assert embedder.started == 2  # the refused call never reached the servicer
        for _ in range(5):  # probes are not counted against the limit
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        embedder.release.set()
        await asyncio.gather(*held)
        await _embed(stub)  # the permits came back
        assert embedder.started == 3


async def test_a_cancelled_stream_gives_its_permit_back(server: tuple[RunningServer, HeldEmbedder]) -> None:
    running, embedder = server
    async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        stub = generator_pb2_grpc.GeneratorServiceStub(channel)
        streams = [stub.GenerateStream(generator_pb2.GenerateRequest(question="q")) for _ in range(2)]
        for call in streams:
            assert (await call.read()).token == "x"
        refused = stub.GenerateStream(generator_pb2.GenerateRequest(question="q"))
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await refused.read()
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        for call in streams:
            call.cancel()
        embedder.release.set()
        for _ in range(100):  # the server learns of the cancellations asynchronously
            try:
                await _embed(embedder_pb2_grpc.EmbedderServiceStub(channel))
                break
            except grpc.aio.AioRpcError as exc:
                assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                await asyncio.sleep(0.05)
        else:
            pytest.fail("permits of cancelled streams were not given back")


def test_every_service_has_a_limit_and_the_generator_a_small_one() -> None:
    from weaverbird_generator.settings import GeneratorSettings

    assert BaseServiceSettings().max_concurrent_rpcs == 64
    assert GeneratorSettings().max_concurrent_rpcs < BaseServiceSettings().max_concurrent_rpcs
