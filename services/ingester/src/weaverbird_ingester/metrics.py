"""Copies the Kafka consumer's counters into the ingester's Prometheus metrics."""

from __future__ import annotations

import asyncio

from weaverbird_common.telemetry import ingester_metrics

from weaverbird_ingester.consumer import IngestConsumer

_OUTCOMES = ("processed", "failed", "dead_lettered")


def export_once(consumer: IngestConsumer, last: dict[str, int]) -> None:
    """Adds what the consumer counted since the previous call (counters only go up)."""
    for outcome in _OUTCOMES:
        now = int(getattr(consumer, outcome))
        ingester_metrics.INGESTER_MESSAGES.labels(outcome=outcome).inc(max(0, now - last.get(outcome, 0)))
        last[outcome] = now
    chunks = int(consumer.chunks_upserted)
    ingester_metrics.INGESTER_CHUNKS_UPSERTED.inc(max(0, chunks - last.get("chunks", 0)))
    last["chunks"] = chunks
    if consumer.lag is not None:
        ingester_metrics.INGESTER_CONSUMER_LAG.set(consumer.lag)


async def export_forever(consumer: IngestConsumer, every_s: float = 5.0) -> None:
    # The consumer's loop runs in a worker thread; reading its integer counters needs no lock.
    last: dict[str, int] = {}
    while True:
        export_once(consumer, last)
        await asyncio.sleep(every_s)
