"""The ingester's kafka-python clients: the group consumer and the dead-letter producer.

kafka-python clients are not safe to share across threads, so every call to them runs on one
thread of their own; the consumer awaits these calls from the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata
from weaverbird_common.ingest_messages import DeadLetter, encode_dead_letter
from weaverbird_common.kafka_config import KafkaSettings

log = logging.getLogger(__name__)

_T = TypeVar("_T")


def kafka_consumer(settings: KafkaSettings) -> Any:
    consumer = KafkaConsumer(**settings.consumer_kwargs())
    consumer.subscribe([settings.ingest_topic])
    return consumer


def kafka_producer(settings: KafkaSettings) -> Any:
    return KafkaProducer(**settings.producer_kwargs())


class KafkaLink:
    """The consumer (made by connect) and the producer (made on the first dead letter), on one thread.

    Open between start() and close(); the factories build the kafka-python clients (fakes in tests).
    """

    def __init__(
        self,
        settings: KafkaSettings,
        consumer_factory: Callable[[KafkaSettings], Any] = kafka_consumer,
        producer_factory: Callable[[KafkaSettings], Any] = kafka_producer,
    ) -> None:
        self._settings = settings
        self._consumer_factory = consumer_factory
        self._producer_factory = producer_factory
        self._executor: ThreadPoolExecutor | None = None
        self._consumer: Any = None
        self._producer: Any = None
        # The next offset committed per partition: the lag is measured from it.
        self._next_offsets: dict[TopicPartition, int] = {}

    def start(self) -> None:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="ingest-kafka")

    async def close(self) -> None:
        """Closes the clients (committing nothing more) and their thread."""
        await self._call(self._close_clients)
        assert self._executor is not None
        self._executor.shutdown(wait=False)
        self._executor = None

    async def connect(self) -> None:
        """Builds the consumer and joins the group; raises what the client raises (no brokers, TLS...)."""
        self._consumer = await self._call(self._consumer_factory, self._settings)

    async def poll(self, timeout_ms: int) -> dict[TopicPartition, list[Any]]:
        batch: dict[TopicPartition, list[Any]] = await self._call(self._consumer.poll, timeout_ms)
        return batch

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        await self._call(self._commit, offsets)

    async def seek(self, offsets: dict[TopicPartition, int]) -> None:
        await self._call(self._seek, offsets)

    async def lag(self) -> int | None:
        """Records behind the high watermarks of the assigned partitions, or None if not known yet."""
        return await self._call(self._measure_lag)

    async def send_dead_letter(self, letter: DeadLetter, key: bytes | None, headers: list[tuple[str, bytes]]) -> None:
        """Publishes letter and waits until it is durable; raises if the topic cannot take it."""
        await self._call(self._send_dead_letter, letter, key, headers)

    # -- on the clients' thread ---------------------------------------------------------------------

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        assert self._executor is not None, "KafkaLink used outside start() / close()"
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def _commit(self, offsets: dict[TopicPartition, int]) -> None:
        if not offsets:
            return
        try:
            self._consumer.commit({tp: OffsetAndMetadata(off, "", -1) for tp, off in offsets.items()})
        except KafkaError as exc:
            # Typically a rebalance took the partition away; its new owner re-reads these records,
            # which only repeats idempotent work.
            log.warning("offset commit failed (records will be redelivered): %s: %s", type(exc).__name__, exc)
            return
        self._next_offsets.update(offsets)

    def _seek(self, offsets: dict[TopicPartition, int]) -> None:
        for tp, offset in offsets.items():
            try:
                self._consumer.seek(tp, offset)
            except KafkaError as exc:  # partition revoked meanwhile: its committed offset applies
                log.debug("seek %s to %d skipped: %s", tp, offset, exc)

    def _measure_lag(self) -> int | None:
        total, known = 0, False
        for tp in self._consumer.assignment():
            high = self._consumer.highwater(tp)
            done = self._next_offsets.get(tp)
            if high is not None and done is not None:
                total += max(0, high - done)
                known = True
        return total if known else None

    def _send_dead_letter(self, letter: DeadLetter, key: bytes | None, headers: list[tuple[str, bytes]]) -> None:
        if self._producer is None:
            self._producer = self._producer_factory(self._settings)
        future = self._producer.send(
            self._settings.dead_letter_topic, value=encode_dead_letter(letter), key=key, headers=headers
        )
        # Waiting here is the point: the source offset may be committed only once this is durable.
        future.get(timeout=self._settings.bootstrap_timeout_ms / 1000)

    def _close_clients(self) -> None:
        if self._producer is not None:
            try:
                self._producer.close(timeout=5)
            except Exception as exc:
                log.warning("dead-letter producer close failed: %s", exc)
            self._producer = None
        if self._consumer is not None:
            try:
                # Offsets were committed explicitly; closing must not commit anything else.
                self._consumer.close(autocommit=False)
            except Exception as exc:
                log.warning("consumer close failed: %s", exc)
            self._consumer = None
