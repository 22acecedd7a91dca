"""Runs the embedder service: settings -> model backend -> gRPC server."""

from __future__ import annotations

import asyncio

from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc
from weaverbird_common.encoders import build_backend
from weaverbird_common.logs import configure_logging
from weaverbird_common.server import ServiceBinding, serve_forever

from weaverbird_embedder.servicer import EmbedderServicer
from weaverbird_embedder.settings import EmbedderSettings


async def main() -> None:
    settings = EmbedderSettings()
    configure_logging(settings.log_level, "embedder")
    backend = build_backend(settings.backend, model_path=settings.model_path, device=settings.device)
    servicer = EmbedderServicer(backend, settings.max_batch, settings.max_text_chars)
    binding = ServiceBinding.of(embedder_pb2, embedder_pb2_grpc, "EmbedderService", servicer)
    await serve_forever("embedder", settings, [binding], on_stop=servicer.close)


if __name__ == "__main__":
    asyncio.run(main())
