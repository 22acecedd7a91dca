"""Runs the generator service: settings -> LLM server (external, or local llama.cpp) -> gRPC server."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

from weaverbird.v1 import generator_pb2, generator_pb2_grpc
from weaverbird_common.logs import configure_logging
from weaverbird_common.server import ServiceBinding, serve_forever

from weaverbird_generator.llama_server import LlamaServer
from weaverbird_generator.llm_client import ChatClient
from weaverbird_generator.model_files import ensure_model
from weaverbird_generator.servicer import GeneratorServicer
from weaverbird_generator.settings import GeneratorSettings


async def main() -> None:
    settings = GeneratorSettings()
    configure_logging(settings.log_level, "generator")
    llama: LlamaServer | None = None
    if settings.endpoint:
        base_url, model_id = settings.endpoint, f"endpoint:{settings.endpoint}"
    else:
        model_path = ensure_model(settings.model, Path(settings.model_dir))
        # A child process keeps llama.cpp's native threads and crashes apart from the gRPC server.
        llama = LlamaServer(
            model_path,
            port=settings.llama_port,
            ctx_size=settings.llama_ctx,
            n_threads=settings.llama_threads,
            parallel=settings.llama_parallel,
            in_process=False,
            repack_weights=settings.llama_repack,
            # Minted per start and held only here: no other local process can use the model (issue 34).
            api_key=secrets.token_urlsafe(32),
        )
        await asyncio.to_thread(llama.start)
        base_url, model_id = llama.base_url, f"llama.cpp:{model_path.name}"
    client = ChatClient(
        base_url,
        api_key=llama.api_key if llama is not None else settings.api_key,
        timeout_s=settings.request_timeout_s,
        cache_prompt=None if settings.prompt_cache else False,
    )
    servicer = GeneratorServicer(client, model_id, settings)
    if llama is not None and settings.prompt_cache:
        # Before serving: the health check then also means "the rules are read", and a 2-core box is
        # not asked to read them while it answers a first question.
        await servicer.warm_up()
    binding = ServiceBinding.of(generator_pb2, generator_pb2_grpc, "GeneratorService", servicer)

    async def stop_llama() -> None:
        if llama is not None:
            await asyncio.to_thread(llama.stop)

    try:
        await serve_forever("generator", settings, [binding], on_stop=stop_llama)
    finally:
        await stop_llama()


if __name__ == "__main__":
    asyncio.run(main())
