"""Every hop the orchestrator makes gets min(its fixed timeout, the caller's remaining deadline), seen by
a real gRPC peer as the deadline it must answer by."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc, generator_pb2, generator_pb2_grpc
from weaverbird_common.errors import DeadlineExceeded
from weaverbird_common.server import RunningServer, ServiceBinding, start_server
from weaverbird_orchestrator.deadline import caller_deadline, time_left
from weaverbird_orchestrator.peers import GrpcPeers
from weaverbird_orchestrator.settings import OrchestratorSettings


class DeadlineRecorder(embedder_pb2_grpc.EmbedderServiceServicer, generator_pb2_grpc.GeneratorServiceServicer):
    """Records the time each call had left when it arrived."""

    def __init__(self) -> None:
        self.remaining: list[float | None] = []

    async def Embed(
        self, request: embedder_pb2.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> embedder_pb2.EmbedResponse:
        self.remaining.append(context.time_remaining())
        return embedder_pb2.EmbedResponse(vectors=[embedder_pb2.Vector(values=[1.0])])

    async def GenerateStream(self, request: generator_pb2.GenerateRequest, context: grpc.aio.ServicerContext) -> None:
        self.remaining.append(context.time_remaining())
        await context.write(generator_pb2.GenerateEvent(token="ok"))


@pytest.fixture
async def peers() -> AsyncIterator[tuple[GrpcPeers, DeadlineRecorder]]:
    recorder = DeadlineRecorder()
    running: RunningServer = await start_server(
        [
            ServiceBinding(embedder_pb2_grpc.add_EmbedderServiceServicer_to_server, recorder, "e"),
            ServiceBinding(generator_pb2_grpc.add_GeneratorServiceServicer_to_server, recorder, "g"),
        ]
    )
    addr = f"127.0.0.1:{running.port}"
    settings = OrchestratorSettings(
        embedder_addr=addr, retriever_addr=addr, generator_addr=addr, embed_timeout_s=5.0, generate_timeout_s=300.0
    )
    grpc_peers = GrpcPeers(settings)
    try:
        yield grpc_peers, recorder
    finally:
        await grpc_peers.close()
        await running.stop(0)


async def test_without_a_caller_deadline_each_hop_keeps_its_own(peers: tuple[GrpcPeers, DeadlineRecorder]) -> None:
    grpc_peers, recorder = peers
    assert time_left() is None
    await grpc_peers.embed_query("q")
    _ = [item async for item in grpc_peers.generate("q", [], "en", 0.0, 8)]
    embed, generate = recorder.remaining
    # grpc rounds the deadline it sends up to its unit, so a peer may see up to a second more.
    assert embed is not None and 4.0 < embed <= 6.0
    assert generate is not None and 290.0 < generate <= 301.0


async def test_the_callers_remaining_deadline_bounds_every_hop(peers: tuple[GrpcPeers, DeadlineRecorder]) -> None:
    grpc_peers, recorder = peers
    with caller_deadline(2.0):
        await grpc_peers.embed_query("q")
        _ = [item async for item in grpc_peers.generate("q", [], "en", 0.0, 8)]
    assert all(r is not None and 0 < r <= 3.0 for r in recorder.remaining) and len(recorder.remaining) == 2


async def test_no_call_is_made_once_the_deadline_passed(peers: tuple[GrpcPeers, DeadlineRecorder]) -> None:
    grpc_peers, recorder = peers
    with caller_deadline(0.0), pytest.raises(DeadlineExceeded, match="deadline passed before embedding"):
        await grpc_peers.embed_query("q")
    assert recorder.remaining == []
