"""Runs the ingester: settings -> KB clients -> writer -> gRPC server, plus the Kafka consumer if configured."""

from __future__ import annotations

import asyncio
from pathlib import Path

from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc
from weaverbird_common.clients import use_client_tls
from weaverbird_common.ingest_publisher import IngestPublisher
from weaverbird_common.logs import configure_logging
from weaverbird_common.server import ServiceBinding, serve_forever, tls_files
from weaverbird_common.web import PageFetcher, UrlGuard

from weaverbird_ingester.consumer import IngestConsumer
from weaverbird_ingester.dedupe import DedupeIndex
from weaverbird_ingester.kb_admin import KnowledgeBaseAdmin
from weaverbird_ingester.metrics import export_forever
from weaverbird_ingester.peers import GrpcKnowledgeBase
from weaverbird_ingester.servicer import IngesterServicer
from weaverbird_ingester.settings import IngesterSettings
from weaverbird_ingester.writer import DocumentWriter


async def main() -> None:
    settings = IngesterSettings()  # type: ignore[call-arg]  # peer addresses come from the env
    configure_logging(settings.log_level, "ingester")
    use_client_tls(tls_files(settings))  # calls to the embedder and retriever present this certificate (mTLS)
    kb = GrpcKnowledgeBase(settings.embedder_addr, settings.retriever_addr, settings.call_timeout_s)
    writer = DocumentWriter(
        kb, settings.chunk_tokens, settings.max_chunk_tokens, settings.embed_batch, facts=settings.facts
    )
    max_bytes = settings.max_document_mb * 1024 * 1024
    # One guard for the fetcher and for the servicer's check before queueing: the same allow-list.
    guard = UrlGuard(settings.fetch_allow_hosts, names_may_resolve_private=settings.fetch_allow_private_names)
    fetcher = PageFetcher(guard, max_bytes=max_bytes)

    async def fetch_url(url: str) -> tuple[bytes, str]:
        page = await fetcher.fetch_one(url, settings.fetch_timeout_s)
        return page.body, page.final_url

    consumer: IngestConsumer | None = None
    publisher: IngestPublisher | None = None
    consumer_task: asyncio.Task[None] | None = None
    metrics_task: asyncio.Task[None] | None = None
    # Loops the ingester is useless without: if one dies, health turns NOT_SERVING and the pod restarts.
    supervised: dict[str, asyncio.Task[None]] = {}
    dedupe: DedupeIndex | None = None
    if settings.kafka is not None:
        data_dir = Path(settings.data_dir)
        dedupe = DedupeIndex(data_dir / "ingest-dedupe.sqlite")
        consumer = IngestConsumer(
            settings.kafka,
            writer,
            fetch_url,
            dedupe=dedupe,
            max_document_bytes=max_bytes,
            concurrency=settings.consume_concurrency,
            # A remembered page whose document was deleted since (on any replica) is stored again.
            stored=kb.document_stored,
        )
        publisher = IngestPublisher(settings.kafka)
        consumer_task = asyncio.create_task(consumer.run(), name="kafka-consumer")
        metrics_task = asyncio.create_task(export_forever(consumer), name="consumer-metrics")
        supervised = {"kafka consumer": consumer_task, "consumer metrics exporter": metrics_task}

    binding = ServiceBinding.of(
        ingester_pb2,
        ingester_pb2_grpc,
        "IngesterService",
        IngesterServicer(
            writer,
            max_bytes,
            fetch_url,
            publisher.publish if publisher else None,
            url_guard=guard,
            admin=KnowledgeBaseAdmin(kb, dedupe),
        ),
    )

    async def stop() -> None:
        if consumer is not None and consumer_task is not None:
            consumer.stop()
            # A consumer that died was logged when it died; its error must not abort the shutdown.
            await asyncio.gather(consumer_task, return_exceptions=True)
        if metrics_task is not None:
            metrics_task.cancel()
        if publisher is not None:
            await asyncio.to_thread(publisher.close, 5.0)
        await kb.close()

    await serve_forever("ingester", settings, [binding], on_stop=stop, supervised=supervised)


if __name__ == "__main__":
    asyncio.run(main())
