"""An outage behind the ingester pauses ingestion; it never empties the ingest topic into the dead letters.

Everything is real: the Tansu broker, the ingester's consumer, writer and gRPC knowledge-base client,
an embedder gRPC server (USE) and retriever gRPC servers on 127.0.0.1. The outage goes through every
stage a deployment sees: the embedder not started yet, the retriever up but its Qdrant server down
(RETRIEVER_STORE=server at a closed port), the retriever itself gone, and finally a healthy retriever
on the same address. Good messages produced at the start must all be stored at the end, none
dead-lettered, and no offset may be committed before its document is stored.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import confluent_kafka
import pytest
from fixtures.kafka_broker import KafkaBroker, isolated_settings
from kafka import KafkaConsumer, TopicPartition
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.encoders import EmbeddingBackend
from weaverbird_common.ingest_messages import IngestMessage, encode_ingest_message
from weaverbird_common.server import RunningServer, ServiceBinding, start_server
from weaverbird_embedder.servicer import EmbedderServicer
from weaverbird_ingester.consumer import IngestConsumer
from weaverbird_ingester.dedupe import DedupeIndex
from weaverbird_ingester.peers import GrpcKnowledgeBase
from weaverbird_ingester.writer import DocumentWriter
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.stores import AsyncVectorStore, open_async_store

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore:Failed to obtain server version:UserWarning"),
]

EMBEDDER = embedder_pb2.DESCRIPTOR.services_by_name["EmbedderService"].full_name
RETRIEVER = retriever_pb2.DESCRIPTOR.services_by_name["RetrieverService"].full_name
# Bounds every wait so a regression fails instead of hanging; nothing is measured with it.
GUARD_S = 120.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _report(company: str) -> str:
    return (
        f"{company} reported fiscal 2023 revenue of 812 million dollars, up 7 percent year over year, "
        f"driven by demand for warehouse automation. Operating margin reached 12 percent while {company} "
        "kept investing in research and development across its three factories."
    )


def _produce(broker: KafkaBroker, topic: str, messages: list[IngestMessage]) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})
    for message in messages:
        producer.produce(topic, value=encode_ingest_message(message), key=document_id_for(message.url).encode())
    assert producer.flush(10) == 0


def _offsets(broker: KafkaBroker, topic: str, group: str | None = None) -> int:
    """Records in topic (group None), or the group's committed offsets summed over its partitions."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=group, enable_auto_commit=False)
    try:
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or set()]
        if group is None:
            return sum(consumer.end_offsets(partitions).values())
        return sum(consumer.committed(tp) or 0 for tp in partitions)
    finally:
        consumer.close(autocommit=False)


async def _until(condition: Callable[[], bool], consumer_task: asyncio.Task[None], what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not condition():
        if consumer_task.done():
            consumer_task.result()
            pytest.fail("the consumer stopped on its own")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def _retriever(store: AsyncVectorStore, port: int) -> RunningServer:
    servicer = RetrieverServicer(store, max_k=100, max_upsert_batch=256)
    return await start_server(
        [ServiceBinding(retriever_pb2_grpc.add_RetrieverServiceServicer_to_server, servicer, RETRIEVER)], port=port
    )


@pytest.fixture
async def embedder_servicer(use_backend: EmbeddingBackend) -> AsyncIterator[EmbedderServicer]:
    servicer = EmbedderServicer(use_backend, max_batch=64, max_text_chars=8000)
    yield servicer
    await servicer.close()


async def test_an_outage_pauses_ingest_and_nothing_is_dead_lettered(
    kafka_broker: KafkaBroker,
    use_backend: EmbeddingBackend,
    embedder_servicer: EmbedderServicer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = isolated_settings(kafka_broker, "outage", partitions=2)
    messages = [
        IngestMessage(url=f"https://ir.example.com/{name.lower()}", text=_report(name), best_score=0.7, question="q")
        for name in ("Zephyrine", "Quillon", "Marlowe")
    ]
    _produce(kafka_broker, settings.ingest_topic, messages)

    embedder_port, retriever_port = _free_port(), _free_port()
    dead_qdrant = f"http://127.0.0.1:{_free_port()}"
    kb = GrpcKnowledgeBase(f"127.0.0.1:{embedder_port}", f"127.0.0.1:{retriever_port}", timeout_s=30)
    writer = DocumentWriter(kb, chunk_tokens=250, max_chunk_tokens=400, embed_batch=32)
    consumer = IngestConsumer(
        settings,
        writer,
        _no_fetch,
        dedupe=DedupeIndex(tmp_path / "dedupe.sqlite"),
        retry_backoff_s=0.05,
        max_backoff_s=0.3,
        poll_timeout_s=0.2,
    )
    servers: list[RunningServer] = []
    qdrant_down = open_async_store("server", path=None, url=dead_qdrant, api_key=None, collection="kb", timeout_s=5)
    healthy = open_async_store("local", path=str(tmp_path / "qdrant"), url=None, api_key=None, collection="kb")

    def paused(peer: str) -> int:
        return sum(
            1
            for r in caplog.records
            if r.getMessage().startswith("ingest paused") and f"{peer} is unavailable" in r.getMessage()
        )

    def nothing_lost() -> None:
        assert consumer.dead_lettered == 0 and consumer.processed == 0
        assert _offsets(kafka_broker, settings.dead_letter_topic) == 0
        assert _offsets(kafka_broker, settings.ingest_topic, settings.group_id) == 0

    task = asyncio.create_task(consumer.run())
    try:
        with caplog.at_level(logging.WARNING, logger="weaverbird_ingester.consumer"):
            # 1. The embedder is not up yet: every attempt pauses on it.
            await _until(lambda: paused("embedder") >= 3, task, "pauses on the missing embedder")
            nothing_lost()

            # 2. The embedder is up, the retriever too, but its Qdrant server is down.
            binding = ServiceBinding(
                embedder_pb2_grpc.add_EmbedderServiceServicer_to_server, embedder_servicer, EMBEDDER
            )
            servers.append(await start_server([binding], port=embedder_port))
            retriever = await _retriever(qdrant_down, retriever_port)
            await _until(lambda: paused("retriever") >= 3, task, "pauses on the retriever's dead Qdrant")
            assert any(f"Qdrant server at {dead_qdrant} is unreachable" in r.getMessage() for r in caplog.records)
            nothing_lost()

            # 3. The retriever itself goes away.
            await retriever.stop(0)
            before = paused("retriever")
            await _until(lambda: paused("retriever") >= before + 3, task, "pauses on the missing retriever")
            nothing_lost()

            # 4. A healthy retriever comes back on the same address: everything is stored, once.
            servers.append(await _retriever(healthy, retriever_port))
            await _until(lambda: consumer.processed == len(messages), task, "the backlog to be stored")
        assert consumer.dead_lettered == 0
        await _until(
            lambda: _offsets(kafka_broker, settings.ingest_topic, settings.group_id) == len(messages),
            task,
            "the offsets to be committed",
        )
    finally:
        consumer.stop()
        await asyncio.wait_for(task, 30)
        for server in servers:
            await server.stop(0)
        await kb.close()
        await qdrant_down.close()

    assert _offsets(kafka_broker, settings.dead_letter_topic) == 0
    for message in messages:
        probe = use_backend.embed([f"{message.url} revenue"], "query")[0]
        hits = await healthy.search(probe, 10, {"document_id": document_id_for(message.url)})
        assert hits and all(message.url.rsplit("/", 1)[-1].title() in hit.text for hit in hits)
    await healthy.close()


async def _no_fetch(url: str) -> tuple[bytes, str]:
    raise AssertionError(f"unexpected fetch of {url}")
