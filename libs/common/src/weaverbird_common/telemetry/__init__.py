"""Prometheus metrics, OpenTelemetry tracing and trace-correlated logging for every service.

One module per reason to change:
- `registry`: which service exports which metrics, and the /metrics endpoint;
- `rpc_metrics`: the `weaverbird_grpc_*` metrics every server records, and their interceptor;
- `orchestrator_metrics`, `ingester_metrics`, `generator_metrics`, `retriever_metrics`: each service's
  own metrics (`weaverbird_<svc>_<what>_<unit>`, bounded labels only);
- `tracing`: the tracer provider, gRPC spans, trace context in gRPC metadata and Kafka headers;
- trace ids on log lines: `weaverbird_common.logs.TraceContextFilter`.

Importing the package files every service's metrics, so `register_metrics` knows them all. The names
below stay importable from here: `from weaverbird_common import telemetry; telemetry.GENERATOR_TOKENS`.
"""

from weaverbird_common.logs import TraceContextFilter
from weaverbird_common.telemetry.generator_metrics import GENERATOR_TOKENS, GENERATOR_TOKENS_PER_SECOND
from weaverbird_common.telemetry.ingester_metrics import (
    INGESTER_CHUNKS_UPSERTED,
    INGESTER_CONSUMER_LAG,
    INGESTER_MESSAGES,
)
from weaverbird_common.telemetry.orchestrator_metrics import (
    ORCHESTRATOR_ANSWER_CHECK_RESULTS,
    ORCHESTRATOR_ANSWER_CHECKS,
    ORCHESTRATOR_BEST_LOCAL_SCORE,
    ORCHESTRATOR_DOCUMENTS_PUBLISHED,
    ORCHESTRATOR_QUESTIONS,
    ORCHESTRATOR_REQUEST_DURATION,
    ORCHESTRATOR_ROUTE_REASON,
    ORCHESTRATOR_ROUTE_REASONS,
    ORCHESTRATOR_STAGE_DURATION,
    ORCHESTRATOR_STAGES,
    ORCHESTRATOR_WEB_SEARCH_FAILURES,
)
from weaverbird_common.telemetry.registry import (
    SERVICE_METRICS,
    SERVICES,
    metrics_text,
    register_metrics,
    start_metrics_server,
)
from weaverbird_common.telemetry.retriever_metrics import RETRIEVER_COLLECTION_POINTS
from weaverbird_common.telemetry.rpc_metrics import (
    GRPC_SERVER_REQUEST_DURATION,
    GRPC_SERVER_REQUESTS,
    MetricsInterceptor,
)
from weaverbird_common.telemetry.tracing import (
    configure_tracing,
    extract_headers,
    inject_headers,
    tracing_client_interceptors,
    tracing_metadata,
    tracing_server_interceptor,
)

__all__ = [
    "GENERATOR_TOKENS",
    "GENERATOR_TOKENS_PER_SECOND",
    "GRPC_SERVER_REQUESTS",
    "GRPC_SERVER_REQUEST_DURATION",
    "INGESTER_CHUNKS_UPSERTED",
    "INGESTER_CONSUMER_LAG",
    "INGESTER_MESSAGES",
    "ORCHESTRATOR_ANSWER_CHECKS",
    "ORCHESTRATOR_ANSWER_CHECK_RESULTS",
    "ORCHESTRATOR_BEST_LOCAL_SCORE",
    "ORCHESTRATOR_DOCUMENTS_PUBLISHED",
    "ORCHESTRATOR_QUESTIONS",
    "ORCHESTRATOR_REQUEST_DURATION",
    "ORCHESTRATOR_ROUTE_REASON",
    "ORCHESTRATOR_ROUTE_REASONS",
    "ORCHESTRATOR_STAGES",
    "ORCHESTRATOR_STAGE_DURATION",
    "ORCHESTRATOR_WEB_SEARCH_FAILURES",
    "RETRIEVER_COLLECTION_POINTS",
    "SERVICES",
    "SERVICE_METRICS",
    "MetricsInterceptor",
    "TraceContextFilter",
    "configure_tracing",
    "extract_headers",
    "inject_headers",
    "metrics_text",
    "register_metrics",
    "start_metrics_server",
    "tracing_client_interceptors",
    "tracing_metadata",
    "tracing_server_interceptor",
]
