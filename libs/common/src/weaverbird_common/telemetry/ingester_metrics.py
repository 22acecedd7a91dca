"""The ingester's own metrics (weaverbird_ingester_*). outcome: processed | failed | dead_lettered."""

from __future__ import annotations

from weaverbird_common.telemetry.registry import ServiceMetrics

_metrics = ServiceMetrics("ingester")

INGESTER_CONSUMER_LAG = _metrics.gauge(
    "weaverbird_ingester_consumer_lag_messages", "Messages in the ingest topic not yet consumed by this group."
)
INGESTER_MESSAGES = _metrics.counter(
    "weaverbird_ingester_messages_total", "Ingest messages handled, by outcome.", ("outcome",)
)
INGESTER_CHUNKS_UPSERTED = _metrics.counter(
    "weaverbird_ingester_chunks_upserted_total", "Chunks written to the retriever."
)
