"""Runs the ingester service: settings -> knowledge-base clients -> document writer -> gRPC server."""

from __future__ import annotations

import asyncio

from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc
from weaverbird_common.logs import configure_logging
from weaverbird_common.server import ServiceBinding, serve_forever

from weaverbird_ingester.peers import GrpcKnowledgeBase
from weaverbird_ingester.servicer import IngesterServicer
from weaverbird_ingester.settings import IngesterSettings
from weaverbird_ingester.writer import DocumentWriter


async def main() -> None:
    settings = IngesterSettings()  # type: ignore[call-arg]  # peer addresses come from the env
    configure_logging(settings.log_level, "ingester")
    kb = GrpcKnowledgeBase(settings.embedder_addr, settings.retriever_addr, settings.call_timeout_s)
    writer = DocumentWriter(kb, settings.chunk_tokens, settings.max_chunk_tokens, settings.embed_batch)
    binding = ServiceBinding(
        ingester_pb2_grpc.add_IngesterServiceServicer_to_server,
        IngesterServicer(writer, settings.max_document_mb * 1024 * 1024),
        ingester_pb2.DESCRIPTOR.services_by_name["IngesterService"].full_name,
    )
    await serve_forever(settings, [binding], on_stop=kb.close)


if __name__ == "__main__":
    asyncio.run(main())
