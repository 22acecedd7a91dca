"""The ingester's own metrics (weaverbird_ingester_*). outcome: processed | failed | dead_lettered."""

from __future__ import annotations

import prometheus_client

from weaverbird_common.telemetry.registry import owned

INGESTER_CONSUMER_LAG = owned(
    "ingester",
    prometheus_client.Gauge(
        "weaverbird_ingester_consumer_lag_messages",
        "Messages in the ingest topic not yet consumed by this group.",
        registry=None,
    ),
)
INGESTER_MESSAGES = owned(
    "ingester",
    prometheus_client.Counter(
        "weaverbird_ingester_messages_total", "Ingest messages handled, by outcome.", ("outcome",), registry=None
    ),
)
INGESTER_CHUNKS_UPSERTED = owned(
    "ingester",
    prometheus_client.Counter(
        "weaverbird_ingester_chunks_upserted_total", "Chunks written to the retriever.", registry=None
    ),
)
