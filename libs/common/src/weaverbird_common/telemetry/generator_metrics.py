"""The generator's own metrics (weaverbird_generator_*). kind: prompt | completion."""

from __future__ import annotations

from weaverbird_common.telemetry.registry import ServiceMetrics

_metrics = ServiceMetrics("generator")
_TOKENS_PER_SECOND_BUCKETS = (1.0, 2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 200.0, 500.0)

GENERATOR_TOKENS_PER_SECOND = _metrics.histogram(
    "weaverbird_generator_tokens_per_second",
    "Decoding speed of one generation (completion tokens / decode seconds).",
    buckets=_TOKENS_PER_SECOND_BUCKETS,
)
GENERATOR_TOKENS = _metrics.counter(
    "weaverbird_generator_tokens_total", "Tokens processed, by kind (prompt | completion).", ("kind",)
)
