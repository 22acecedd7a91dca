"""The retriever's own metrics (weaverbird_retriever_*)."""

from __future__ import annotations

from weaverbird_common.telemetry.registry import ServiceMetrics

RETRIEVER_COLLECTION_POINTS = ServiceMetrics("retriever").gauge(
    "weaverbird_retriever_collection_points", "Points stored in the vector collection."
)
