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
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka
import pytest
from fixtures.in_process_kb import InProcessKnowledgeBase
from fixtures.kafka_broker import KafkaBroker
from fixtures.kafka_ingest import (
    Crash,
    CrashAfter,
    FlakyKnowledgeBase,
    RecordingWriter,
    Topics,
    committed_offsets,
    ingest_message,
    keyed,
    make_consumer,
    produce,
    read_topic,
    report_text,
    run_until,
)
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.encoders import EmbeddingBackend
from weaverbird_common.ingest_messages import (
    SIGNATURE_HEADER,
    decode_dead_letter,
    decode_ingest_message,
    encode_ingest_message,
)
from weaverbird_common.ingest_publisher import IngestPublisher
from weaverbird_common.kafka_config import KafkaSettings
from weaverbird_ingester.dedupe import DedupeIndex
from weaverbird_retriever.stores import VectorStore, open_store, point_id

pytestmark = pytest.mark.integration

# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path, use_backend: EmbeddingBackend) -> Iterator[VectorStore]:
    s = open_store("local", path=str(tmp_path / "kb"), url=None, api_key=None, collection="t")
    s.ensure_collection(use_backend.dimension)
    yield s
    s.close()


@pytest.fixture
def kb(use_backend: EmbeddingBackend, store: VectorStore) -> InProcessKnowledgeBase:
    return InProcessKnowledgeBase(use_backend, store)


@pytest.fixture
def dedupe(tmp_path: Path) -> Iterator[DedupeIndex]:
    index = DedupeIndex(tmp_path / "data" / "dedupe.sqlite")
    yield index
    index.close()


@pytest.fixture
def topics(kafka_broker: KafkaBroker) -> Topics:
    return Topics(kafka_broker)


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------


async def test_message_from_another_client_becomes_searchable(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings()
    url = "https://news.example.com/zephyrine-results"
    text = "Zephyrine Robotics reported fiscal 2023 revenue of 812 million dollars, driven by warehouse automation."
    produce(topics.broker, settings.ingest_topic, [keyed(ingest_message(url, text, title="Zephyrine results"))])

    writer = RecordingWriter(kb)
    consumer = make_consumer(settings, writer, dedupe)
    await run_until(consumer, lambda: consumer.processed == 1)

    query = kb.backend.embed(["How much revenue did Zephyrine Robotics make in 2023?"], "query")[0]
    best = kb.store.search(query, k=1)[0]
    assert best.payload["document_id"] == document_id_for(url)
    assert "812 million" in best.text
    assert best.payload["origin"] == "web" and best.payload["title"] == "Zephyrine results"
    assert consumer.chunks_upserted == 1 and consumer.dead_lettered == 0
    assert committed_offsets(topics.broker, settings) == 1


async def test_crash_before_commit_redelivers_and_every_document_is_stored_once(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=3, max_poll_records=2)
    messages = [
        ingest_message(f"https://ir.example.com/company-{i}", report_text(f"Company{i}", 2 + i % 3)) for i in range(8)
    ]
    produce(topics.broker, settings.ingest_topic, [keyed(m) for m in messages])

    writer = RecordingWriter(kb)
    first = make_consumer(settings, CrashAfter(writer, survive=5), dedupe)
    with pytest.raises(Crash):
        await asyncio.wait_for(first.run(), 60)
    committed_before_restart = committed_offsets(topics.broker, settings)
    assert writer.writes == 6  # the sixth landed in the store, but its offset was never committed
    assert committed_before_restart < 6

    second = make_consumer(settings, writer, dedupe)
    await run_until(second, lambda: second.processed + second.duplicates == 8 - committed_before_restart)

    # The crashed record is rewritten (dedupe never recorded it), the five before it are skipped as
    # duplicates if they were redelivered, and the two never attempted are written now.
    assert second.processed == 3
    assert second.dead_lettered == 0
    assert committed_offsets(topics.broker, settings) == 8
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
        + "".join(f"<p>{p}</p>" for p in report_text("Fetchco", 3).split("\n\n"))
        + "</article></body></html>"
    )
    fetch_calls: Counter[str] = Counter()

    async def fetch_url(url: str) -> tuple[bytes, str]:
        fetch_calls[url] += 1
        if "unreachable" in url:
            raise ConnectionError("connection refused")
        return fetched_html.encode(), "https://fetch.example.com/reports/q3"  # after a redirect

    oversized = ingest_message("https://big.example.com/a", "x " * 12_000)
    records: list[tuple[bytes | None, bytes]] = [
        (None, b"{not json"),
        (None, json.dumps({"schema_version": 2, "url": "https://v2.example.com/"}).encode()),
        (None, oversized.model_dump_json().encode()),
        (None, json.dumps({"schema_version": 1, "url": "notaurl"}).encode()),
        keyed(ingest_message("https://unreachable.example.com/page")),
        keyed(ingest_message("https://fetch.example.com/q3")),
        keyed(ingest_message("https://text.example.com/q3", report_text("Textco", 2))),
    ]
    produce(topics.broker, settings.ingest_topic, records)

    writer = RecordingWriter(kb)
    consumer = make_consumer(settings, writer, dedupe, fetch_url)
    await run_until(consumer, lambda: consumer.processed + consumer.dead_lettered == 7)

    assert (consumer.processed, consumer.dead_lettered) == (2, 5)
    assert fetch_calls == {"https://unreachable.example.com/page": 3, "https://fetch.example.com/q3": 1}
    assert committed_offsets(topics.broker, settings) == 7

    letters = [(decode_dead_letter(r.value), r) for r in read_topic(topics.broker, settings.dead_letter_topic, 5)]
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
    long_text, short_text = report_text("Dupco", 4), report_text("Dupco", 1)
    records = [
        keyed(ingest_message(url, long_text)),
        keyed(ingest_message(url, long_text)),  # same page found again by another question
        keyed(ingest_message(url, short_text)),  # the page changed
        keyed(ingest_message("HTTPS://BLOG.example.com/post#comments", short_text)),  # same canonical URL
    ]
    produce(topics.broker, settings.ingest_topic, records)

    writer = RecordingWriter(kb)
    consumer = make_consumer(settings, writer, dedupe)
    await run_until(consumer, lambda: consumer.processed + consumer.duplicates == 4)

    assert (consumer.processed, consumer.duplicates, writer.writes) == (2, 2, 2)
    document_id = document_id_for(url)
    # The shorter version replaced every chunk of the longer one, tail included.
    assert sorted(kb.points_of(document_id)) == sorted(
        point_id(document_id, i) for i in range(writer.chunks[document_id])
    )
    assert kb.store.stats().points == writer.chunks[document_id]


async def test_unavailable_embedder_is_retried_without_committing_or_dead_lettering(
    topics: Topics, use_backend: EmbeddingBackend, store: VectorStore, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=1)
    url = "https://flaky.example.com/r"
    produce(topics.broker, settings.ingest_topic, [keyed(ingest_message(url, report_text("Flakyco", 2)))])

    kb = FlakyKnowledgeBase(use_backend, store, failures=3)
    writer = RecordingWriter(kb)
    consumer = make_consumer(settings, writer, dedupe)
    await run_until(consumer, lambda: consumer.processed == 1)

    assert kb.failures == 0 and consumer.failed == 3
    assert consumer.dead_lettered == 0 and writer.writes == 1
    assert committed_offsets(topics.broker, settings) == 1
    assert len(kb.points_of(document_id_for(url))) == writer.chunks[document_id_for(url)]


def test_publish_never_blocks_when_kafka_is_unreachable() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    publisher = IngestPublisher(KafkaSettings(bootstrap_servers=dead, bootstrap_timeout_ms=500))
    started = time.monotonic()
    for i in range(5):
        publisher.publish(ingest_message(f"https://down.example.com/{i}", "text"))
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
    message = ingest_message("https://pub.example.com/a", "Published text about revenue.")
    traceparent = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    publisher.publish(message, headers=[("traceparent", traceparent)])
    publisher.close(timeout=10)
    assert (publisher.published, publisher.failed) == (1, 0)

    (record,) = read_topic(topics.broker, settings.ingest_topic, 1)
    assert record.key == document_id_for(message.url).encode()
    assert ("traceparent", traceparent) in record.headers
    assert decode_ingest_message(record.value) == message


async def test_a_page_seen_untagged_is_rewritten_under_its_company_and_stays_there(
    topics: Topics, kb: InProcessKnowledgeBase, dedupe: DedupeIndex
) -> None:
    settings = topics.settings(partitions=1)
    url = "https://ir.example.com/tagco"
    text = report_text("Tagco", 2)
    records = [
        keyed(ingest_message(url, text)),  # found for a question that named no company
        keyed(ingest_message(url, text, company="TAGCO")),  # found again for a question about Tagco
        keyed(ingest_message(url, text, company="TAGCO")),  # and again: now a duplicate
        keyed(ingest_message(url, text)),  # and untagged again: the tagged copy stays
    ]
    produce(topics.broker, settings.ingest_topic, records)

    writer = RecordingWriter(kb)
    consumer = make_consumer(settings, writer, dedupe)
    await run_until(consumer, lambda: consumer.processed + consumer.duplicates == 4)

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
        ingest_message("https://attacker.example/unsigned", "Forgedco reported revenue of 999 billion dollars."),
        ingest_message("https://attacker.example/wrong-key", "Forgedco reported profit of 777 billion dollars."),
        ingest_message("https://attacker.example/replayed-sig", "Forgedco reported assets of 555 billion dollars."),
    ]
    genuine = ingest_message("https://news.example.com/trusted", "Trustco reported fiscal 2023 revenue of 41 million.")
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
    (signed,) = [r for r in read_topic(topics.broker, settings.ingest_topic, 3) if r.value not in values]
    stolen = dict(signed.headers)[SIGNATURE_HEADER]
    intruder.produce(settings.ingest_topic, value=values[2], headers=[(SIGNATURE_HEADER, stolen)])
    assert intruder.flush(10) == 0

    consumer = make_consumer(settings, RecordingWriter(kb), dedupe)
    await run_until(consumer, lambda: consumer.processed + consumer.dead_lettered == 4)

    assert (consumer.processed, consumer.dead_lettered) == (1, 3)
    assert kb.points_of(document_id_for(genuine.url))
    assert all(not kb.points_of(document_id_for(m.url)) for m in forged)
    letters = [decode_dead_letter(r.value) for r in read_topic(topics.broker, settings.dead_letter_topic, 3)]
    assert [letter.reason for letter in letters] == ["unauthenticated"] * 3
    assert all(SIGNING_KEY not in letter.error for letter in letters)
