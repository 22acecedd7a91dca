"""Best-effort, non-blocking publication of web documents to the ingest topic.

Answering a question must never wait on Kafka: `publish` only puts the message on a bounded
in-memory queue. One daemon thread connects lazily (so the orchestrator starts while Kafka is down),
encodes and hands records to kafka-python's KafkaProducer, whose own I/O thread batches and sends
them. Anything that cannot be delivered is logged and counted, never raised to the caller: a lost
web page costs a future cache hit, not an answer.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.ingest_messages import (
    SIGNATURE_HEADER,
    IngestMessage,
    IngestMessageError,
    encode_ingest_message,
    record_signature,
)
from weaverbird_common.kafka_config import KafkaSettings
from weaverbird_common.telemetry.tracing import inject_headers

log = logging.getLogger(__name__)

Headers = Sequence[tuple[str, bytes]]
ProducerFactory = Callable[[KafkaSettings], Any]

_IDLE_WAIT_S = 0.1


def _kafka_producer(settings: KafkaSettings) -> Any:
    # Imported here so the orchestrator (and its unit tests) load kafka-python only when publishing.
    from kafka import KafkaProducer

    return KafkaProducer(**settings.producer_kwargs())


class IngestPublisher:
    """Publishes IngestMessages from a background thread; counters `published`, `failed`, `pending`.

    Thread-safe. `published` counts records the brokers acknowledged; `failed` counts messages
    dropped for any reason (queue full, Kafka unreachable, too large, delivery error, closed).
    """

    def __init__(
        self,
        settings: KafkaSettings,
        *,
        queue_size: int = 1000,
        reconnect_backoff_s: float = 5.0,
        producer_factory: ProducerFactory = _kafka_producer,
    ) -> None:
        """Creates the publisher; nothing connects until the first publish.

        Args:
            settings: cluster, topic and size limit (max_message_bytes).
            queue_size: messages waiting for the thread; beyond it new ones are dropped. Default 1000.
            reconnect_backoff_s: after a failed connect, messages are dropped at once for this long
                instead of each waiting bootstrap_timeout_ms. Default 5 s.
            producer_factory: builds the KafkaProducer (a fake in tests).
        """
        self._settings = settings
        self._queue: queue.Queue[tuple[IngestMessage, Headers | None]] = queue.Queue(maxsize=queue_size)
        self._reconnect_backoff_s = reconnect_backoff_s
        self._producer_factory = producer_factory
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
        self._close_deadline = float("inf")
        self._producer: Any = None
        self._retry_connect_at = 0.0
        self._outage_logged = False
        self.published = 0
        self.failed = 0

    @property
    def pending(self) -> int:
        """Messages queued but not yet handed to the producer."""
        return self._queue.qsize()

    def publish(self, message: IngestMessage, headers: Headers | None = None) -> bool:
        """Queues `message` for the ingest topic and returns at once; never raises for Kafka problems.

        Args:
            message: the document to ingest; keyed by its document id, so every version of one URL
                lands on the same partition and is consumed in order.
            headers: extra record headers, e.g. [("traceparent", b"00-...")] for trace propagation.

        Returns:
            False when the message was dropped (publisher closed or queue full): a caller that promises
            "queued" to a user must say otherwise; the web path just counts it.
        """
        if self._closing.is_set():
            self._count_failure("publisher is closed; message %s dropped", message.message_id)
            return False
        # The caller's trace continues in the ingester: captured here, in the request's context.
        headers = inject_headers(headers or ())
        self._ensure_thread()
        try:
            self._queue.put_nowait((message, list(headers) if headers else None))
        except queue.Full:
            self._count_failure("ingest queue full (%d); message %s dropped", self._queue.maxsize, message.message_id)
            return False
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Sends what is queued and flushes the producer, waiting at most `timeout` seconds.

        Messages not delivered by then count as failed. Idempotent.
        """
        with self._lock:
            if self._closing.is_set():
                thread = self._thread
            else:
                self._close_deadline = time.monotonic() + timeout
                self._closing.set()
                thread = self._thread
        if thread is not None:
            # Slightly longer than the worker's own deadline so it can finish its accounting.
            thread.join(timeout + 1.0)
            if thread.is_alive():
                log.warning("ingest publisher did not stop within %.1f s", timeout)

    # -- worker thread -----------------------------------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None and not self._closing.is_set():
                # Daemon: an unreachable cluster must not keep the process alive at exit.
                self._thread = threading.Thread(target=self._run, name="ingest-publisher", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                message, headers = self._queue.get(timeout=_IDLE_WAIT_S)
            except queue.Empty:
                if self._closing.is_set():
                    break
                continue
            if self._closing.is_set() and time.monotonic() > self._close_deadline:
                self._count_failure("publisher closing; message %s dropped", message.message_id)
                continue
            self._send(message, headers)
        self._shutdown_producer()

    def _send(self, message: IngestMessage, headers: Headers | None) -> None:
        try:
            value = encode_ingest_message(message, max_bytes=self._settings.max_message_bytes)
        except IngestMessageError as exc:
            self._count_failure("message %s not published: %s", message.message_id, exc)
            return
        producer = self._connect()
        if producer is None:
            # Logged at debug: the outage itself was reported once by _connect.
            self._count_failure("Kafka unreachable; message %s dropped", message.message_id, level=logging.DEBUG)
            return
        all_headers = list(headers or [])
        if self._settings.signing_key is not None:
            all_headers.append(
                (SIGNATURE_HEADER, record_signature(self._settings.signing_key.get_secret_value(), value))
            )
        try:
            future = producer.send(
                self._settings.ingest_topic,
                value=value,
                key=document_id_for(message.url).encode("ascii"),
                headers=all_headers or None,
            )
        except Exception as exc:  # KafkaTimeoutError (no metadata), size and buffer errors alike
            self._count_failure("message %s not published: %s: %s", message.message_id, type(exc).__name__, exc)
            return
        future.add_callback(self._on_delivered)
        # kafka-python calls errback(*args, exception).
        future.add_errback(self._on_delivery_error, message.message_id)

    def _connect(self) -> Any:
        if self._producer is not None:
            return self._producer
        if time.monotonic() < self._retry_connect_at:
            return None
        try:
            self._producer = self._producer_factory(self._settings)
        except Exception as exc:  # NoBrokersAvailable, KafkaTimeoutError, bad TLS files...
            self._retry_connect_at = time.monotonic() + self._reconnect_backoff_s
            # One warning per outage; every dropped message is still counted.
            if not self._outage_logged:
                log.warning(
                    "cannot connect to Kafka at %s: %s: %s", self._settings.bootstrap_servers, type(exc).__name__, exc
                )
                self._outage_logged = True
            return None
        if self._outage_logged:
            log.info("connected to Kafka at %s", self._settings.bootstrap_servers)
            self._outage_logged = False
        return self._producer

    def _shutdown_producer(self) -> None:
        if self._producer is None:
            return
        remaining = max(0.0, self._close_deadline - time.monotonic())
        try:
            self._producer.flush(timeout=remaining)
        except Exception as exc:  # KafkaTimeoutError: undelivered records fail through their errbacks
            log.warning("ingest publisher flush incomplete: %s: %s", type(exc).__name__, exc)
        try:
            self._producer.close(timeout=max(0.0, self._close_deadline - time.monotonic()))
        except Exception as exc:
            log.warning("ingest publisher close failed: %s: %s", type(exc).__name__, exc)
        self._producer = None

    # -- accounting (called from this thread and kafka-python's I/O thread) --------------------------

    def _on_delivered(self, _metadata: object) -> None:
        with self._lock:
            self.published += 1

    def _on_delivery_error(self, message_id: object, exc: BaseException) -> None:
        self._count_failure("message %s not delivered: %s: %s", message_id, type(exc).__name__, exc)

    def _count_failure(self, fmt: str, *args: object, level: int = logging.WARNING) -> None:
        with self._lock:
            self.failed += 1
        log.log(level, fmt, *args)
