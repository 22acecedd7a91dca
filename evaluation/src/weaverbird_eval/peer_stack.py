"""The serving stack of the PEER evaluation (peer.py), in this process: the embedder (USE), the retriever
over a fresh Qdrant Edge collection holding the whole KB of `weaverbird eval answers`, the generator
servicer in front of the LLM endpoint, and the orchestrator's QuestionFlow with its served defaults."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weaverbird_eval import datasets


def knowledge_base(data: Path) -> tuple[list[dict], Any, list[dict], Any]:
    """(FinanceBench payloads, vectors, Fin-Eva payloads, vectors): the KB of `weaverbird eval answers`
    with nothing held out (its vectors come from the evaluation cache when present)."""
    from weaverbird_eval.answers import chinese_cases
    from weaverbird_eval.financebench_kb import build_corpus, embed_corpus, page_documents

    evalset = datasets.financebench(data)
    kept = {u.id for u in evalset.units}
    documents = list(page_documents(data, keep=lambda doc, page: f"{doc}#p{page}" in kept))
    fb_payloads, fb_texts = build_corpus(documents)
    fb_vectors = embed_corpus("use", fb_texts)
    _, zh_payloads, zh_texts = chinese_cases(data, 0)
    return fb_payloads, fb_vectors, zh_payloads, embed_corpus("use", zh_texts)


@dataclass
class Stack:
    flow: Any  # weaverbird_orchestrator.flow.QuestionFlow
    peers: Any  # its GrpcPeers: the generator the runner hands to run_peer
    settings: Any  # OrchestratorSettings


@asynccontextmanager
async def serving_stack(endpoint: str, data: Path, workdir: Path) -> AsyncIterator[Stack]:
    from weaverbird.v1 import embedder_pb2_grpc, generator_pb2_grpc, retriever_pb2_grpc
    from weaverbird_common.encoders import build_backend
    from weaverbird_common.server import ServiceBinding, start_server
    from weaverbird_embedder.servicer import EmbedderServicer
    from weaverbird_generator.llm_client import ChatClient
    from weaverbird_generator.servicer import GeneratorServicer
    from weaverbird_generator.settings import LOCAL_CONTEXT_BUDGET, GeneratorSettings
    from weaverbird_orchestrator.flow import QuestionFlow
    from weaverbird_orchestrator.peers import GrpcPeers
    from weaverbird_orchestrator.settings import OrchestratorSettings
    from weaverbird_retriever.servicer import RetrieverServicer
    from weaverbird_retriever.settings import RetrieverSettings
    from weaverbird_retriever.stores import open_async_store

    from weaverbird_eval.financebench_kb import upsert_service

    fb_payloads, fb_vectors, zh_payloads, zh_vectors = knowledge_base(data)
    embedder = EmbedderServicer(build_backend("use"), 64, 20_000)  # type: ignore[arg-type]
    rs = RetrieverSettings(data_dir=str(workdir / "qdrant"))
    store = open_async_store(
        rs.store, path=rs.data_dir, url=None, api_key=None, collection=rs.collection, timeout_s=rs.qdrant_timeout_s
    )
    # Figure prior off: the retriever this comparison was measured with.
    retriever = RetrieverServicer.from_settings(store, rs, figure_weight=0.0)
    # The local model's served setting (query-focused context under its token budget), one call at a
    # time at the endpoint: the shared server's other slots belong to other work.
    gs = GeneratorSettings(endpoint=endpoint, context_budget_tokens=LOCAL_CONTEXT_BUDGET, llm_concurrency=1)
    generator = GeneratorServicer(ChatClient(endpoint, timeout_s=gs.request_timeout_s), f"endpoint:{endpoint}", gs)
    servers = [
        await start_server([ServiceBinding(embedder_pb2_grpc.add_EmbedderServiceServicer_to_server, embedder, "e")]),
        await start_server([ServiceBinding(retriever_pb2_grpc.add_RetrieverServiceServicer_to_server, retriever, "r")]),
        await start_server([ServiceBinding(generator_pb2_grpc.add_GeneratorServiceServicer_to_server, generator, "g")]),
    ]
    addr = [f"127.0.0.1:{s.port}" for s in servers]
    settings = OrchestratorSettings(
        embedder_addr=addr[0], retriever_addr=addr[1], generator_addr=addr[2], generate_timeout_s=600.0
    )
    peers = GrpcPeers(settings)
    try:
        started = time.perf_counter()
        await asyncio.to_thread(upsert_service, addr[1], fb_payloads, fb_vectors)
        await asyncio.to_thread(upsert_service, addr[1], zh_payloads, zh_vectors, "zh")
        print(f"KB loaded: {len(fb_payloads)} + {len(zh_payloads)} chunks in {time.perf_counter() - started:.0f} s")
        yield Stack(QuestionFlow(peers, settings), peers, settings)
    finally:
        await peers.close()
        for server in reversed(servers):
            await server.stop(0)
        await embedder.close()
        await store.close()
