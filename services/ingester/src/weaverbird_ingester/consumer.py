"""Consumes the ingest topic: decode, fetch if needed, load, skip duplicates, write, then commit.

Delivery is at-least-once. An offset is committed only once every record before it was either
written to the knowledge base or published to the dead-letter topic, so a crash at any point means
redelivery, never loss. Redelivery is harmless: point ids are document id + chunk index and the
writer replaces a document's chunks, and the DedupeIndex skips a page whose content was stored.

Failures split three ways:
- the record is bad (JSON, schema, size, unreadable, unfetchable, or a write that keeps failing for
  a non-transient reason): dead-letter it and move on, so one poison record cannot stall a partition;
- a dependency is down (embedder/retriever Unavailable, DeadlineExceeded, Overloaded, or the DLQ
  itself): commit what is done, seek back to the first unfinished record, back off and poll again;
- the process stops: stop() finishes the current record, commits and leaves the group.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from kafka import TopicPartition
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from weaverbird_common.docs.documents import Document
from weaverbird_common.docs.loaders import UnreadableDocument, document_id_for
from weaverbird_common.errors import InvalidArgument
from weaverbird_common.ingest_messages import (
    DeadLetter,
    DeadLetterReason,
    IngestMessage,
    IngestMessageError,
    check_record_signature,
    decode_ingest_message,
)
from weaverbird_common.kafka_config import KafkaSettings
from weaverbird_common.telemetry.tracing import extract_headers

from weaverbird_ingester.backoff import Backoff
from weaverbird_ingester.dedupe import DedupeIndex
from weaverbird_ingester.kafka_link import KafkaLink, kafka_consumer, kafka_producer
from weaverbird_ingester.record_outcomes import TRANSIENT_ERRORS, Permanent, Stopping, Transient
from weaverbird_ingester.web_pages import filename_for_text, filename_for_url, page_document
from weaverbird_ingester.writer import DocumentWriter, WriteResult

log = logging.getLogger(__name__)

FetchUrl = Callable[[str], Awaitable[tuple[bytes, str]]]
"""Fetches a URL (with the web fetcher's SSRF checks); returns (body, final URL after redirects)."""

DocumentStored = Callable[[str], Awaitable[bool]]
"""Whether the knowledge base still holds any chunk of the document with this id."""

_TRACER = trace.get_tracer("weaverbird.ingester")


class IngestConsumer:
    """One member of the ingester consumer group; run several (up to the partition count) to scale.

    Counters for metrics: processed, duplicates, dead_lettered, failed (attempts that raised,
    including transient ones), chunks_upserted, and lag (records behind the high watermark, or None).
    """

    def __init__(
        self,
        settings: KafkaSettings,
        writer: DocumentWriter,
        fetch_url: FetchUrl,
        *,
        dedupe: DedupeIndex,
        max_attempts: int = 3,
        retry_backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        poll_timeout_s: float = 1.0,
        max_document_bytes: int = 50 * 1024 * 1024,
        concurrency: int = 4,
        consumer_factory: Callable[[KafkaSettings], Any] = kafka_consumer,
        producer_factory: Callable[[KafkaSettings], Any] = kafka_producer,
        stored: DocumentStored | None = None,
    ) -> None:
        """Creates the consumer; it connects when run() starts.

        Args:
            settings: cluster, topics, group and max_message_bytes.
            writer: chunks, embeds and stores one document.
            fetch_url: used for messages that carry a URL but no text.
            dedupe: index of stored (URL, content) pairs.
            max_attempts: tries for fetching a URL, and for a write failing with a non-transient
                error, before the record is dead-lettered. Default 3.
            retry_backoff_s: first back-off; doubles per consecutive failure. Default 1 s.
            max_backoff_s: back-off ceiling; keep it well under max_poll_interval_ms. Default 30 s.
            poll_timeout_s: longest wait in one poll, which bounds how fast stop() takes effect.
            max_document_bytes: largest fetched body accepted. Default 50 MiB.
            consumer_factory, producer_factory: build the kafka-python clients (fakes in tests).
            stored: asked before a remembered page is skipped; when its document was deleted since
                (on another replica, or straight from the retriever) the page is stored again.
                None trusts the dedupe index alone.
        """
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._settings = settings
        self._writer = writer
        self._fetch_url = fetch_url
        self._dedupe = dedupe
        self._max_attempts = max_attempts
        self._poll_timeout_ms = int(poll_timeout_s * 1000)
        self._max_document_bytes = max_document_bytes
        # Documents processed at once (see _process_partition); the semaphore binds to the loop on first use.
        self._slots = asyncio.Semaphore(concurrency)
        self._kafka = KafkaLink(settings, consumer_factory, producer_factory)
        self._stored = stored
        self._stop = threading.Event()
        self._backoff = Backoff(retry_backoff_s, max_backoff_s, self._stop)
        self.processed = 0
        self.duplicates = 0
        self.dead_lettered = 0
        self.failed = 0
        self.chunks_upserted = 0
        self.lag: int | None = None

    def stop(self) -> None:
        """Asks run() to finish the current record, commit and return. Safe from any thread."""
        self._stop.set()

    async def run(self) -> None:
        """Consumes until stop(); connection failures are retried, record failures handled as above.

        An exception escaping a record (a bug, or cancellation) ends the loop without committing
        that batch, as a crash would: its records are redelivered. The ingester supervises this task
        (RunningServer.supervise): if it raises or returns before shutdown, health turns NOT_SERVING.
        """
        self._kafka.start()
        try:
            if not await self._connect():
                return
            while not self._stop.is_set():
                batch = await self._kafka.poll(self._poll_timeout_ms)
                if batch:
                    await self._process_batch(batch)
                self.lag = await self._kafka.lag()
        finally:
            await self._kafka.close()

    async def _connect(self) -> bool:
        while not self._stop.is_set():
            try:
                await self._kafka.connect()
            except Exception as exc:  # NoBrokersAvailable, KafkaTimeoutError, bad TLS files...
                self.failed += 1
                log.warning(
                    "cannot connect to Kafka at %s: %s: %s", self._settings.bootstrap_servers, type(exc).__name__, exc
                )
                if not await self._backoff.after_outage():
                    return False
                continue
            self._backoff.recovered()
            log.info("consuming %s as group %s", self._settings.ingest_topic, self._settings.group_id)
            return True
        return False

    # -- batch and record handling ----------------------------------------------------------------

    async def _process_batch(self, batch: dict[TopicPartition, list[Any]]) -> None:
        outcomes = await asyncio.gather(*(self._process_partition(tp, records) for tp, records in batch.items()))
        done = {tp: offset for tp, (offset, _) in zip(batch, outcomes, strict=True) if offset is not None}
        await self._kafka.commit(done)
        stops = [stop for _, stop in outcomes if stop is not None]
        if any(isinstance(stop, Transient) for stop in stops):
            # The fetcher has moved past this batch: rewind every partition to its first unfinished
            # record so nothing is skipped.
            rewind = {tp: done.get(tp, records[0].offset) for tp, records in batch.items()}
            await self._kafka.seek(rewind)
            await self._backoff.after_outage()

    async def _process_partition(
        self, tp: TopicPartition, records: list[Any]
    ) -> tuple[int | None, BaseException | None]:
        """Handles one partition's records; returns the next offset to commit (None if the first record
        did not finish) and the exception that stopped it early, if any.

        Records with different keys (different documents) run concurrently, up to `concurrency` at a
        time, so the embedder is never idle while a document is loaded or upserted; records of one key
        keep their order. Only the unbroken run of finished records from the start is committed: a
        record finished after a gap is redelivered, which deterministic ids make harmless.
        """
        finished: set[int] = set()
        stop: BaseException | None = None
        chains: dict[Any, list[Any]] = {}
        for record in records:
            chains.setdefault(record.key if record.key is not None else ("offset", record.offset), []).append(record)

        async def run_chain(chain: list[Any]) -> None:
            nonlocal stop
            for record in chain:
                async with self._slots:
                    if stop is not None or self._stop.is_set():
                        return
                    try:
                        await self._handle(record)
                    except Stopping as exc:
                        stop = stop or exc
                        return
                    except Transient as exc:
                        self.failed += 1
                        log.warning("ingest paused at %s offset %d: %s", tp, record.offset, exc)
                        stop = stop or exc
                        return
                finished.add(record.offset)
                self._backoff.recovered()

        await asyncio.gather(*(run_chain(chain) for chain in chains.values()))
        done: int | None = None
        for record in records:
            if record.offset not in finished:
                return done, stop or Stopping()
            done = record.offset + 1
        return done, None

    async def _handle(self, record: Any) -> None:
        # One CONSUMER span per record, in the trace of the question that published it.
        with _TRACER.start_as_current_span("ingest", context=extract_headers(record.headers), kind=SpanKind.CONSUMER):
            await self._handle_in_span(record)

    async def _handle_in_span(self, record: Any) -> None:
        raw: bytes = record.value or b""
        try:
            if self._settings.signing_key is not None:
                # Before anything else: an unsigned record is never fetched, loaded or stored.
                check_record_signature(self._settings.signing_key.get_secret_value(), raw, record.headers)
            message = decode_ingest_message(raw, max_bytes=self._settings.max_message_bytes)
        except IngestMessageError as exc:
            await self._dead_letter(record, exc.reason, exc, attempts=1)
            return
        try:
            source, data, filename, content_sha256 = await self._content(message)
            # The company tag is part of what is stored: a page seen untagged is rewritten once tagged,
            # and an untagged copy never replaces a tagged one.
            content_key = f"{content_sha256}:{message.company}" if message.company else content_sha256
            seen = self._dedupe.seen(source, content_key) or (
                not message.company and self._dedupe.seen_tagged(source, content_sha256)
            )
            if seen and await self._still_stored(source):
                self.duplicates += 1
                log.debug("skipping %s: this content is already stored", source)
                return
            doc = await self._load(message, source, data, filename)
            result = await self._write(doc)
        except Permanent as exc:
            await self._dead_letter(record, exc.reason, exc.error, attempts=exc.attempts, message=message)
            return
        self._dedupe.remember(source, content_key, result.document_id, result.chunks)
        self.processed += 1
        self.chunks_upserted += result.chunks
        log.info("ingested %s: %d chunks", source, result.chunks)

    async def _still_stored(self, source: str) -> bool:
        """Whether a page the index remembers is still in the knowledge base; if it was deleted, its
        entry is dropped so it is stored again. A retriever that cannot answer pauses the partition."""
        if self._stored is None:
            return True
        try:
            stored = await self._stored(document_id_for(source))
        except TRANSIENT_ERRORS as exc:
            raise Transient(f"{type(exc).__name__}: {exc}") from exc
        if not stored:
            log.info("%s was stored before and deleted since: storing it again", source)
            self._dedupe.forget(source)
        return stored

    async def _content(self, message: IngestMessage) -> tuple[str, bytes, str, str]:
        """(source URL, bytes to load, file name for the loader, content hash), from the message or the web.

        A fetched page is keyed by its URL after redirects, as the web fetcher recommends, so a
        redirecting alias and the page itself are one document.
        """
        if message.text:
            data = message.text.encode("utf-8")
            assert message.content_sha256 is not None  # the model fills it in whenever text is set
            return message.url, data, filename_for_text(message.text), message.content_sha256
        body, final_url = await self._fetch(message.url)
        if len(body) > self._max_document_bytes:
            error = ValueError(f"fetched {len(body)} bytes, more than the limit of {self._max_document_bytes}")
            raise Permanent("oversized", error, 1)
        return final_url or message.url, body, filename_for_url(final_url, body), hashlib.sha256(body).hexdigest()

    async def _fetch(self, url: str) -> tuple[bytes, str]:
        last: BaseException | None = None
        for attempt in range(1, self._max_attempts + 1):
            try:
                return await self._fetch_url(url)
            except (InvalidArgument, UnreadableDocument) as exc:
                # Refused by the fetcher's checks (private address, bad scheme) or not a document:
                # asking again gives the same answer.
                self.failed += 1
                raise Permanent("fetch_failed", exc, attempt) from exc
            except Exception as exc:
                self.failed += 1
                last = exc
                log.info("fetch %s failed (attempt %d/%d): %s", url, attempt, self._max_attempts, exc)
                if attempt < self._max_attempts and not await self._backoff.sleep(self._backoff.delay_s(attempt - 1)):
                    raise Stopping() from exc
        assert last is not None
        raise Permanent("fetch_failed", last, self._max_attempts)

    async def _load(self, message: IngestMessage, source: str, data: bytes, filename: str) -> Document:
        try:
            return await page_document(message, source, data, filename)
        except UnreadableDocument as exc:
            raise Permanent("unreadable", exc, 1) from exc

    async def _write(self, doc: Document) -> WriteResult:
        for attempt in range(1, self._max_attempts + 1):
            try:
                return await self._writer.write(doc)
            except TRANSIENT_ERRORS as exc:
                raise Transient(f"{type(exc).__name__}: {exc}") from exc
            except InvalidArgument as exc:
                self.failed += 1
                raise Permanent("write_failed", exc, attempt) from exc
            except Exception as exc:
                self.failed += 1
                log.warning(
                    "writing %s failed (attempt %d/%d): %s: %s",
                    doc.source,
                    attempt,
                    self._max_attempts,
                    type(exc).__name__,
                    exc,
                )
                if attempt == self._max_attempts:
                    raise Permanent("write_failed", exc, attempt) from exc
                if not await self._backoff.sleep(self._backoff.delay_s(attempt - 1)):
                    raise Stopping() from exc
        raise AssertionError("unreachable")

    async def _dead_letter(
        self,
        record: Any,
        reason: DeadLetterReason,
        error: BaseException,
        *,
        attempts: int,
        message: IngestMessage | None = None,
    ) -> None:
        letter = DeadLetter.from_record(
            record.value or b"",
            reason=reason,
            error=error,
            source_topic=record.topic,
            source_partition=record.partition,
            source_offset=record.offset,
            attempts=attempts,
            message=message,
        )
        # Original headers (trace context) travel along; the reason is also a header for filtering.
        headers = [*(record.headers or []), ("weaverbird-dlq-reason", reason.encode("ascii"))]
        try:
            await self._kafka.send_dead_letter(letter, record.key, headers)
        except Exception as exc:
            raise Transient(f"dead-letter topic unavailable: {type(exc).__name__}: {exc}") from exc
        self.dead_lettered += 1
        log.warning("dead-lettered %s[%d]@%d (%s): %s", record.topic, record.partition, record.offset, reason, error)
