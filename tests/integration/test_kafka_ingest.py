"""Ingest over Kafka end to end: real broker (Tansu), real USE embedder and qdrant-client store, in process.

The knowledge base is the real embedding backend and vector store behind a small adapter instead of the
gRPC services, so these tests exercise the consumer's delivery guarantees without the rest of the stack.
Each test gets its own topics and consumer group on the session broker.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from fixtures.in_process_kb import InProcessKnowledgeBase
from fixtures.kafka_broker import KafkaBroker
from kafka import KafkaConsumer, TopicPartition
from weaverbird_common.docs.documents import Document
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.encoders import EmbeddingBackend, build_backend
from weaverbird_common.errors import Unavailable
from weaverbird_common.ingest_messages import (
    SIGNATURE_HEADER,
    IngestMessage,
    decode_dead_letter,
    decode_ingest_message,
    encode_ingest_message,
)
from weaverbird_common.ingest_publisher import IngestPublisher
from weaverbird_common.kafka_config import KafkaSettings
from weaverbird_ingester.consumer import IngestConsumer
from weaverbird_ingester.dedupe import DedupeIndex
from weaverbird_ingester.writer import DocumentWriter, WriteResult
from weaverbird_retriever.stores import VectorStore, open_store, point_id

pytestmark = pytest.mark.integration


# ---------------------------------------------------------------------------------------------
# An in-process knowledge base and helpers
# ---------------------------------------------------------------------------------------------


class RecordingWriter(DocumentWriter):
    """A DocumentWriter that remembers the chunk count of each document's latest write."""

    def __init__(self, kb: InProcessKnowledgeBase) -> None:
        super().__init__(kb, chunk_tokens=40, max_chunk_tokens=80, embed_batch=8)
        self.chunks: dict[str, int] = {}
        self.writes = 0

    async def write(self, doc: Document) -> WriteResult:
        result = await super().write(doc)
        self.chunks[doc.document_id] = result.chunks
        self.writes += 1
        return result


class _Crash(BaseException):
    """Stands in for the process dying: no handler in the consumer catches it."""


class CrashAfter:
    """Lets `survive` writes through, then lets one more land in the store and 'dies' before the commit."""

    def __init__(self, writer: RecordingWriter, survive: int) -> None:
        self._writer = writer
        self._survive = survive

    async def write(self, doc: Document) -> WriteResult:
        result = await self._writer.write(doc)
        if self._writer.writes > self._survive:
            raise _Crash()
        return result


class FlakyKnowledgeBase(InProcessKnowledgeBase):
    """Reports the embedder as unavailable for the first `failures` embedding calls."""

    def __init__(self, backend: EmbeddingBackend, store: VectorStore, failures: int) -> None:
        super().__init__(backend, store)
        self.failures = failures

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        if self.failures > 0:
            self.failures -= 1
            raise Unavailable("embedder is unavailable: connection refused")
        return await super().embed_passages(texts)


def _report(company: str, paragraphs: int) -> str:
    facts = [
        f"{company} reported fiscal 2023 revenue of {812 + i} million dollars, up {7 + i} percent year over year, "
        f"driven by demand for warehouse automation in region {i}. Operating margin reached {12 + i} percent "
        f"while the company kept investing in research and development across its {3 + i} factories."
        for i in range(paragraphs)
    ]
    return "\n\n".join(facts)


def _message(url: str, text: str = "", **fields: Any) -> IngestMessage:
    return IngestMessage(url=url, text=text, title=fields.pop("title", ""), best_score=0.71, question="q", **fields)


def _produce(broker: KafkaBroker, topic: str, values: Sequence[tuple[bytes | None, bytes]]) -> None:
    """Publishes (key, value) records with confluent-kafka, an independent client implementation."""
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers, "message.max.bytes": 2_000_000})
    for key, value in values:
        producer.produce(topic, value=value, key=key)
    assert producer.flush(10) == 0


def _keyed(message: IngestMessage) -> tuple[bytes, bytes]:
    return document_id_for(message.url).encode(), encode_ingest_message(message)


def _read_topic(broker: KafkaBroker, topic: str, expected: int, timeout_s: float = 15.0) -> list[Any]:
    """All records of `topic` from the beginning, without joining a group; waits for `expected`."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, enable_auto_commit=False, group_id=None)
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        records: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while len(records) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                records.extend(batch)
        return sorted(records, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close(autocommit=False)


def _committed(broker: KafkaBroker, settings: KafkaSettings) -> int:
    """Sum of the group's committed offsets over the ingest topic's partitions."""
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap_servers, group_id=settings.group_id, enable_auto_commit=False
    )
    try:
        partitions = consumer.partitions_for_topic(settings.ingest_topic) or set()
        return sum(consumer.committed(TopicPartition(settings.ingest_topic, p)) or 0 for p in partitions)
    finally:
        consumer.close(autocommit=False)


async def _run_until(consumer: IngestConsumer, done: Callable[[], bool], timeout_s: float = 60.0) -> None:
    """Runs the consumer until `done()` holds, then stops it gracefully (which commits)."""
    task = asyncio.create_task(consumer.run())
    try:
        deadline = time.monotonic() + timeout_s
        while not done():
            if task.done():
                task.result()
                pytest.fail("consumer stopped on its own")
            assert time.monotonic() < deadline, "timed out waiting for the consumer"
            await asyncio.sleep(0.05)
    finally:
        consumer.stop()
        await asyncio.wait_for(task, 30)


async def _no_fetch(url: str) -> tuple[bytes, str]:
    raise AssertionError(f"unexpected fetch of {url}")


# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> EmbeddingBackend:
    return build_backend("use")


@pytest.fixture
def store(tmp_path: Path, embedder: EmbeddingBackend) -> Iterator[VectorStore]:
    s = open_store("local", path=str(tmp_path / "kb"), url=None, api_key=None, collection="t")
    s.ensure_collection(embedder.dimension)
    yield s
    s.close()


@pytest.fixture
def kb(embedder: EmbeddingBackend, store: VectorStore) -> InProcessKnowledgeBase:
    return InProcessKnowledgeBase(embedder, store)


@pytest.fixture
def dedupe(tmp_path: Path) -> Iterator[DedupeIndex]:
    index = DedupeIndex(tmp_path / "data" / "dedupe.sqlite")
    yield index
    index.close()


@dataclass
class Topics:
    broker: KafkaBroker

    def settings(self, partitions: int = 3, **overrides: Any) -> KafkaSettings:
        """Settings on fresh topics and a fresh group, with timeouts short enough for tests."""
        values: dict[str, Any] = {
            "bootstrap_servers": self.broker.bootstrap_servers,
            "ingest_topic": self.broker.new_topic("ingest", partitions),
            "dead_letter_topic": self.broker.new_topic("dlq", 1),
            "group_id": f"g-{time.monotonic_ns()}",
            "session_timeout_ms": 6000,
            "heartbeat_interval_ms": 500,
            "bootstrap_timeout_ms": 5000,
            "max_poll_records": 5,
        }
        values.update(overrides)
        return KafkaSettings(**values)


@pytest.fixture
def topics(kafka_broker: KafkaBroker) -> Topics:
    return Topics(kafka_broker)


def _consumer(
    settings: KafkaSettings,
    writer: Any,
    dedupe: DedupeIndex,
    fetch_url: Callable[[str], Awaitable[tuple[bytes, str]]] = _no_fetch,
) -> IngestConsumer:
    return IngestConsumer(
        settings, writer, fetch_url, dedupe=dedupe, retry_backoff_s=0.05, max_backoff_s=0.5, poll_timeout_s=0.2
    )


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------


async def test_message_from_another_client_becomes_searchable(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings()
    url = "https://news.example.com/zephyrine-results"
    text = "Zephyrine Robotics reported fiscal 2023 revenue of 812 million dollars, driven by warehouse automation."
    _produce(topics.broker, settings.ingest_topic, [_keyed(_message(url, text, title="Zephyrine results"))])

    writer = RecordingWriter(kb)
    consumer = _consumer(settings, writer, dedupe)
    await _run_until(consumer, lambda: consumer.processed == 1)

    query = kb.backend.embed(["How much revenue did Zephyrine Robotics make in 2023?"], "query")[0]
    best = kb.store.search(query, k=1)[0]
    assert best.payload["document_id"] == document_id_for(url)
    assert "812 million" in best.text
    assert best.payload["origin"] == "web" and best.payload["title"] == "Zephyrine results"
    assert consumer.chunks_upserted == 1 and consumer.dead_lettered == 0
    assert _committed(topics.broker, settings) == 1


async def test_crash_before_commit_redelivers_and_every_document_is_stored_once(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=3, max_poll_records=2)
    messages = [_message(f"https://ir.example.com/company-{i}", _report(f"Company{i}", 2 + i % 3)) for i in range(8)]
    _produce(topics.broker, settings.ingest_topic, [_keyed(m) for m in messages])

    writer = RecordingWriter(kb)
    first = _consumer(settings, CrashAfter(writer, survive=5), dedupe)
    with pytest.raises(_Crash):
        await asyncio.wait_for(first.run(), 60)
    committed_before_restart = _committed(topics.broker, settings)
    assert writer.writes == 6  # the sixth landed in the store, but its offset was never committed
    assert committed_before_restart < 6

    second = _consumer(settings, writer, dedupe)
    await _run_until(second, lambda: second.processed + second.duplicates == 8 - committed_before_restart)

    # The crashed record is rewritten (dedupe never recorded it), the five before it are skipped as
    # duplicates if they were redelivered, and the two never attempted are written now.
    assert second.processed == 3
    assert second.dead_lettered == 0
    assert _committed(topics.broker, settings) == 8
    assert sorted(writer.chunks) == sorted(document_id_for(m.url) for m in messages)
    for document_id, chunks in writer.chunks.items():
        assert chunks >= 2
        ids = kb.points_of(document_id)
        assert sorted(ids) == sorted(point_id(document_id, i) for i in range(chunks))
    assert kb.store.stats().points == sum(writer.chunks.values())


async def test_bad_records_are_dead_lettered_and_later_records_still_processed(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=1, max_message_bytes=16 * 1024)
    fetched_html = (
        "<html><head><title>Quarterly report</title></head><body><article><h1>Quarterly report</h1>"
        + "".join(f"<p>{p}</p>" for p in _report("Fetchco", 3).split("\n\n"))
        + "</article></body></html>"
    )
    fetch_calls: Counter[str] = Counter()

    async def fetch_url(url: str) -> tuple[bytes, str]:
        fetch_calls[url] += 1
        if "unreachable" in url:
            raise ConnectionError("connection refused")
        return fetched_html.encode(), "https://fetch.example.com/reports/q3"  # after a redirect

    oversized = _message("https://big.example.com/a", "x " * 12_000)
    records: list[tuple[bytes | None, bytes]] = [
        (None, b"{not json"),
        (None, json.dumps({"schema_version": 2, "url": "https://v2.example.com/"}).encode()),
        (None, oversized.model_dump_json().encode()),
        (None, json.dumps({"schema_version": 1, "url": "notaurl"}).encode()),
        _keyed(_message("https://unreachable.example.com/page")),
        _keyed(_message("https://fetch.example.com/q3")),
        _keyed(_message("https://text.example.com/q3", _report("Textco", 2))),
    ]
    _produce(topics.broker, settings.ingest_topic, records)

    writer = RecordingWriter(kb)
    consumer = _consumer(settings, writer, dedupe, fetch_url)
    await _run_until(consumer, lambda: consumer.processed + consumer.dead_lettered == 7)

    assert (consumer.processed, consumer.dead_lettered) == (2, 5)
    assert fetch_calls == {"https://unreachable.example.com/page": 3, "https://fetch.example.com/q3": 1}
    assert _committed(topics.broker, settings) == 7

    letters = [(decode_dead_letter(r.value), r) for r in _read_topic(topics.broker, settings.dead_letter_topic, 5)]
    by_offset = {letter.source_offset: (letter, record) for letter, record in letters}
    assert [by_offset[i][0].reason for i in range(5)] == [
        "bad_json",
        "unsupported_version",
        "oversized",
        "invalid_schema",
        "fetch_failed",
    ]
    assert by_offset[0][0].original_bytes() == b"{not json"
    assert by_offset[2][0].original_size == len(records[2][1]) and not by_offset[2][0].original_truncated
    assert "url" in by_offset[3][0].error
    fetch_failed, fetch_record = by_offset[4]
    assert fetch_failed.attempts == 3 and fetch_failed.error_class == "ConnectionError"
    assert fetch_failed.url == "https://unreachable.example.com/page"
    assert ("weaverbird-dlq-reason", b"fetch_failed") in fetch_record.headers
    assert all(letter.source_topic == settings.ingest_topic for letter, _ in letters)
    probe = kb.backend.embed(["quarterly revenue"], "query")[0]
    # A fetched page is keyed by its final URL; untitled text falls back to its URL as the title.
    fetched = "https://fetch.example.com/reports/q3"
    for url, title in ((fetched, "Quarterly report"), ("https://text.example.com/q3", None)):
        hits = kb.store.search(probe, k=100, filters={"document_id": document_id_for(url)})
        assert hits and {hit.payload["title"] for hit in hits} == {title or url}
    assert not kb.points_of(document_id_for("https://fetch.example.com/q3"))


async def test_same_url_and_content_is_ingested_once_and_new_content_replaces_it(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=1)
    url = "https://blog.example.com/post"
    long_text, short_text = _report("Dupco", 4), _report("Dupco", 1)
    records = [
        _keyed(_message(url, long_text)),
        _keyed(_message(url, long_text)),  # same page found again by another question
        _keyed(_message(url, short_text)),  # the page changed
        _keyed(_message("HTTPS://BLOG.example.com/post#comments", short_text)),  # same canonical URL
    ]
    _produce(topics.broker, settings.ingest_topic, records)

    writer = RecordingWriter(kb)
    consumer = _consumer(settings, writer, dedupe)
    await _run_until(consumer, lambda: consumer.processed + consumer.duplicates == 4)

    assert (consumer.processed, consumer.duplicates, writer.writes) == (2, 2, 2)
    document_id = document_id_for(url)
    # The shorter version replaced every chunk of the longer one, tail included.
    assert sorted(kb.points_of(document_id)) == sorted(
        point_id(document_id, i) for i in range(writer.chunks[document_id])
    )
    assert kb.store.stats().points == writer.chunks[document_id]


async def test_unavailable_embedder_is_retried_without_committing_or_dead_lettering(
    topics: Topics, embedder: EmbeddingBackend, store: VectorStore, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=1)
    url = "https://flaky.example.com/r"
    _produce(topics.broker, settings.ingest_topic, [_keyed(_message(url, _report("Flakyco", 2)))])

    kb = FlakyKnowledgeBase(embedder, store, failures=3)
    writer = RecordingWriter(kb)
    consumer = _consumer(settings, writer, dedupe)
    await _run_until(consumer, lambda: consumer.processed == 1)

    assert kb.failures == 0 and consumer.failed == 3
    assert consumer.dead_lettered == 0 and writer.writes == 1
    assert _committed(topics.broker, settings) == 1
    assert len(kb.points_of(document_id_for(url))) == writer.chunks[document_id_for(url)]


def test_publish_never_blocks_when_kafka_is_unreachable() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    publisher = IngestPublisher(KafkaSettings(bootstrap_servers=dead, bootstrap_timeout_ms=500))
    started = time.monotonic()
    for i in range(5):
        publisher.publish(_message(f"https://down.example.com/{i}", "text"))
    assert time.monotonic() - started < 0.2

    deadline = time.monotonic() + 10
    while publisher.failed < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (publisher.published, publisher.failed) == (0, 5)
    started = time.monotonic()
    publisher.close(timeout=2)
    assert time.monotonic() - started < 3.5


def test_publisher_round_trip_with_trace_headers(topics: Topics) -> None:
    settings = topics.settings(partitions=3)
    publisher = IngestPublisher(settings)
    message = _message("https://pub.example.com/a", "Published text about revenue.")
    traceparent = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    publisher.publish(message, headers=[("traceparent", traceparent)])
    publisher.close(timeout=10)
    assert (publisher.published, publisher.failed) == (1, 0)

    (record,) = _read_topic(topics.broker, settings.ingest_topic, 1)
    assert record.key == document_id_for(message.url).encode()
    assert ("traceparent", traceparent) in record.headers
    assert decode_ingest_message(record.value) == message


async def test_a_page_seen_untagged_is_rewritten_under_its_company_and_stays_there(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=1)
    url = "https://ir.example.com/tagco"
    text = _report("Tagco", 2)
    records = [
        _keyed(_message(url, text)),  # found for a question that named no company
        _keyed(_message(url, text, company="TAGCO")),  # found again for a question about Tagco
        _keyed(_message(url, text, company="TAGCO")),  # and again: now a duplicate
        _keyed(_message(url, text)),  # and untagged again: the tagged copy stays
    ]
    _produce(topics.broker, settings.ingest_topic, records)

    writer = RecordingWriter(kb)
    consumer = _consumer(settings, writer, dedupe)
    await _run_until(consumer, lambda: consumer.processed + consumer.duplicates == 4)

    assert (consumer.processed, consumer.duplicates) == (2, 2)
    probe = kb.backend.embed(["Tagco revenue"], "query")[0]
    hits = kb.store.search(probe, k=100, filters={"company": "TAGCO"})
    assert hits and {h.payload["document_id"] for h in hits} == {document_id_for(url)}


# The local broker (Tansu) takes records from anyone on the machine, so the ingester trusts only records
# signed with the stack's producer key (issue 34): forged, unsigned or re-signed records are dead-lettered
# as "unauthenticated" and never enter the knowledge base; confluent-kafka plays the intruder.
SIGNING_KEY = "stack-minted-signing-key-" + "x" * 20


async def test_only_records_signed_by_a_trusted_producer_enter_the_kb(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=1, signing_key=SIGNING_KEY)
    forged = [
        _message("https://attacker.example/unsigned", "Forgedco reported revenue of 999 billion dollars."),
        _message("https://attacker.example/wrong-key", "Forgedco reported profit of 777 billion dollars."),
        _message("https://attacker.example/replayed-sig", "Forgedco reported assets of 555 billion dollars."),
    ]
    genuine = _message("https://news.example.com/trusted", "Trustco reported fiscal 2023 revenue of 41 million.")
    # The intruder: another client on the same broker, without the key.
    intruder = confluent_kafka.Producer({"bootstrap.servers": topics.broker.bootstrap_servers})
    values = [encode_ingest_message(m) for m in forged]
    wrong = hmac.new(b"guessed-key", values[1], hashlib.sha256).hexdigest().encode()
    intruder.produce(settings.ingest_topic, value=values[0])
    intruder.produce(settings.ingest_topic, value=values[1], headers=[(SIGNATURE_HEADER, wrong)])
    # A valid signature copied from another record does not sign this one.
    publisher = IngestPublisher(settings)
    publisher.publish(genuine)
    publisher.close(timeout=10)
    assert (publisher.published, publisher.failed) == (1, 0)
    assert intruder.flush(10) == 0
    (signed,) = [r for r in _read_topic(topics.broker, settings.ingest_topic, 3) if r.value not in values]
    stolen = dict(signed.headers)[SIGNATURE_HEADER]
    intruder.produce(settings.ingest_topic, value=values[2], headers=[(SIGNATURE_HEADER, stolen)])
    assert intruder.flush(10) == 0

    consumer = _consumer(settings, RecordingWriter(kb), dedupe)
    await _run_until(consumer, lambda: consumer.processed + consumer.dead_lettered == 4)

    assert (consumer.processed, consumer.dead_lettered) == (1, 3)
    assert kb.points_of(document_id_for(genuine.url))
    assert all(not kb.points_of(document_id_for(m.url)) for m in forged)
    letters = [decode_dead_letter(r.value) for r in _read_topic(topics.broker, settings.dead_letter_topic, 3)]
    assert [letter.reason for letter in letters] == ["unauthenticated"] * 3
    assert all(SIGNING_KEY not in letter.error for letter in letters)
