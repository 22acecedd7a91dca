"""A Kafka consumer loop that dies takes the ingester's health down with it (real broker, real gRPC).

The failure is real, not simulated: the consumer is built (through IngestConsumer's consumer_factory)
with auto_offset_reset="none", so on a fresh group with no committed offset kafka-python's poll()
raises NoOffsetForPartitionError, which the loop does not survive. The ingester is hosted and
supervised as serve_forever does it, and its health is read with the standard gRPC health client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fixtures.health import NOT_SERVING, SERVING, health_statuses, until_not_serving
from fixtures.kafka_broker import KafkaBroker, isolated_settings
from kafka import KafkaConsumer
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc
from weaverbird_common.kafka_config import KafkaSettings
from weaverbird_common.server import RunningServer, ServiceBinding, start_server
from weaverbird_ingester.consumer import IngestConsumer
from weaverbird_ingester.dedupe import DedupeIndex
from weaverbird_ingester.peers import GrpcKnowledgeBase
from weaverbird_ingester.servicer import IngesterServicer
from weaverbird_ingester.writer import DocumentWriter

pytestmark = pytest.mark.integration

INGESTER = ingester_pb2.DESCRIPTOR.services_by_name["IngesterService"].full_name


def _strict_consumer(settings: KafkaSettings) -> Any:
    """The production consumer, except that a group without committed offsets is an error."""
    consumer = KafkaConsumer(**{**settings.consumer_kwargs(), "auto_offset_reset": "none"})
    consumer.subscribe([settings.ingest_topic])
    return consumer


def _settings(broker: KafkaBroker) -> KafkaSettings:
    return isolated_settings(broker, "supervision")


async def _no_fetch(url: str) -> tuple[bytes, str]:
    raise AssertionError(f"unexpected fetch of {url}")


@pytest.fixture
async def ingester() -> AsyncIterator[tuple[RunningServer, DocumentWriter]]:
    # Peers nobody calls here: channels connect lazily, so nothing needs to listen there.
    kb = GrpcKnowledgeBase("127.0.0.1:9", "127.0.0.1:9", 5.0)
    writer = DocumentWriter(kb, 250, 400, 32)
    binding = ServiceBinding(
        ingester_pb2_grpc.add_IngesterServiceServicer_to_server, IngesterServicer(writer, 1 << 20, _no_fetch), INGESTER
    )
    running = await start_server([binding])
    try:
        yield running, writer
    finally:
        await running.stop(0)
        await kb.close()


async def test_a_dead_consumer_loop_turns_the_ingester_not_serving(
    kafka_broker: KafkaBroker,
    ingester: tuple[RunningServer, DocumentWriter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    running, writer = ingester
    consumer = IngestConsumer(
        _settings(kafka_broker),
        writer,
        _no_fetch,
        dedupe=DedupeIndex(":memory:"),
        poll_timeout_s=0.2,
        consumer_factory=_strict_consumer,
    )
    assert await health_statuses(running.port, INGESTER) == {"": SERVING, INGESTER: SERVING}
    with caplog.at_level(logging.ERROR, logger="weaverbird_common.server"):
        task = asyncio.create_task(consumer.run())
        running.supervise(task, "kafka consumer")
        # Bounded only so a regression fails instead of hanging; the group join takes a few seconds.
        await asyncio.wait_for(until_not_serving(running.port), 120)

    assert task.done() and type(task.exception()).__name__ == "NoOffsetForPartitionError"
    assert await health_statuses(running.port, INGESTER) == {"": NOT_SERVING, INGESTER: NOT_SERVING}
    (record,) = [r for r in caplog.records if "kafka consumer died" in r.getMessage()]
    assert record.exc_info is not None and record.exc_info[1] is task.exception()


async def test_a_consumer_stopped_at_shutdown_leaves_health_alone(
    kafka_broker: KafkaBroker, ingester: tuple[RunningServer, DocumentWriter]
) -> None:
    running, writer = ingester
    consumer = IngestConsumer(
        _settings(kafka_broker), writer, _no_fetch, dedupe=DedupeIndex(":memory:"), poll_timeout_s=0.2
    )
    task = asyncio.create_task(consumer.run())
    running.supervise(task, "kafka consumer")
    await asyncio.sleep(0.5)  # let it connect; not a measurement
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    for _ in range(5):
        await asyncio.sleep(0)  # the done-callback, and anything it scheduled
    assert task.cancelled()
    assert await health_statuses(running.port, INGESTER) == {"": SERVING, INGESTER: SERVING}
