"""The retriever's own metrics (weaverbird_retriever_*)."""

from __future__ import annotations

import prometheus_client

from weaverbird_common.telemetry.registry import owned

RETRIEVER_COLLECTION_POINTS = owned(
    "retriever",
    prometheus_client.Gauge(
        "weaverbird_retriever_collection_points", "Points stored in the vector collection.", registry=None
    ),
)
