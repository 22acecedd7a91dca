"""Each service on its own: health, reflection, validation, idempotent upserts, failure statuses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from fixtures.orchestrator_binding import orchestrator_binding
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from weaverbird.v1 import (
    common_pb2,
    embedder_pb2,
    embedder_pb2_grpc,
    generator_pb2,
    generator_pb2_grpc,
    orchestrator_pb2,
    orchestrator_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from weaverbird_cli import commands
from weaverbird_cli.stack import SERVICES, LocalStack
from weaverbird_common.server import start_server
from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.peers import GrpcPeers
from weaverbird_orchestrator.settings import OrchestratorSettings

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("service", SERVICES)
def test_health_and_reflection(stack: LocalStack, service: str) -> None:
    with grpc.insecure_channel(stack.config.addr(service)) as channel:
        status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        assert status.status == health_pb2.HealthCheckResponse.SERVING
        replies = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
        names = {s.name for r in replies for s in r.list_services_response.service}
    assert f"weaverbird.v1.{service.capitalize()}Service" in names
    assert "grpc.health.v1.Health" in names


def test_embedder_rejects_bad_input_and_describes_its_model(stack: LocalStack) -> None:
    with grpc.insecure_channel(stack.config.addr("embedder")) as channel:
        stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
        info = stub.DescribeModel(embedder_pb2.DescribeModelRequest(), timeout=5)
        assert info.dimension > 0 and info.model_id
        reply = stub.Embed(embedder_pb2.EmbedRequest(texts=["营业收入", "revenue"], kind=1), timeout=10)
        assert len(reply.vectors) == 2 and len(reply.vectors[0].values) == info.dimension
        for request in (
            embedder_pb2.EmbedRequest(texts=["x"]),  # kind missing
            embedder_pb2.EmbedRequest(texts=[""], kind=1),
            embedder_pb2.EmbedRequest(texts=["x"] * (info.max_batch + 1), kind=2),
        ):
            with pytest.raises(grpc.RpcError) as err:
                stub.Embed(request, timeout=5)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_retriever_upserts_are_idempotent_and_filters_apply(stack: LocalStack) -> None:
    with grpc.insecure_channel(stack.config.addr("retriever")) as channel:
        stub = retriever_pb2_grpc.RetrieverServiceStub(channel)
        dim = stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=5).dimension
        vec = [1.0] + [0.0] * (dim - 1)
        chunk = retriever_pb2.Chunk(
            vector=vec,
            text="idempotency probe",
            payload=common_pb2.ChunkPayload(document_id="probe-doc", chunk_index=0, company="PROBE", year=2031),
        )
        first = stub.Upsert(retriever_pb2.UpsertRequest(chunks=[chunk]), timeout=10)
        second = stub.Upsert(retriever_pb2.UpsertRequest(chunks=[chunk]), timeout=10)
        assert second.collection_points == first.collection_points
        hits = stub.Search(
            retriever_pb2.SearchRequest(vector=vec, k=3, filter=common_pb2.PayloadFilter(company="PROBE")), timeout=5
        ).hits
        assert [h.text for h in hits] == ["idempotency probe"]
        assert hits[0].payload.year == 2031
        with pytest.raises(grpc.RpcError) as err:
            stub.Search(retriever_pb2.SearchRequest(vector=vec[:-1], k=3), timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert stub.DeleteDocument(retriever_pb2.DeleteDocumentRequest(document_id="probe-doc"), timeout=5).deleted == 1
        after = stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=5).points
        assert after == first.collection_points - 1


def test_generator_validates_and_streams(stack: LocalStack) -> None:
    with grpc.insecure_channel(stack.config.addr("generator")) as channel:
        stub = generator_pb2_grpc.GeneratorServiceStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            list(stub.GenerateStream(generator_pb2.GenerateRequest(question="q", language="fr"), timeout=10))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        events = list(
            stub.GenerateStream(
                generator_pb2.GenerateRequest(
                    question="What is the revenue?",
                    passages=[generator_pb2.ContextPassage(number=1, title="t", text="Revenue was $5M.", source="s")],
                    sampling=generator_pb2.SamplingParams(max_tokens=8),
                ),
                timeout=120,
            )
        )
        assert events[-1].HasField("done") and sum(e.HasField("done") for e in events) == 1
        assert 0 < events[-1].done.completion_tokens <= 8
        # First the prompt's size, so a client can say what the model is reading.
        prompt = events[0].prompt
        assert events[0].HasField("prompt") and list(prompt.passages_used) == [1]
        assert 0 < prompt.context_tokens <= prompt.context_tokens_full < prompt.prompt_tokens
        # The fixed rules were read at start-up (warm-up), so even this request reuses them from the cache.
        assert events[-1].done.cached_tokens > 0


def test_ingest_reports_unreadable_files_and_loads_the_rest(stack: LocalStack, tmp_path: Path) -> None:
    good = tmp_path / "note.md"
    good.write_text("# Zephyr Mining\n\nZephyr Mining paid a dividend of 0.42 per share in 2029.\n")
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7 this is not really a pdf")
    assert commands.ingest([str(tmp_path)], stack.config.addr("ingester"), quiet=True) == 0
    with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
        reply = orchestrator_pb2_grpc.OrchestratorServiceStub(channel).Retrieve(
            orchestrator_pb2.AskRequest(question="What dividend did Zephyr Mining pay?", top_k=1), timeout=30
        )
    assert reply.passages[0].source.endswith("note.md")


async def test_orchestrator_reports_unavailable_dependency() -> None:
    settings = OrchestratorSettings(
        embedder_addr="127.0.0.1:1", retriever_addr="127.0.0.1:1", generator_addr="127.0.0.1:1", embed_timeout_s=2
    )
    peers = GrpcPeers(settings)
    flow = QuestionFlow(peers, settings)
    running = await start_server([orchestrator_binding(flow)])
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await asyncio.wait_for(stub.Ask(orchestrator_pb2.AskRequest(question="revenue?")), 30)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "embedder" in err.value.details()
    finally:
        await running.stop(0)
        await flow.aclose()
        await peers.close()
