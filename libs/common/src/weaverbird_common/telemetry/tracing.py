"""OpenTelemetry tracing: the process's tracer provider, gRPC spans and W3C trace-context propagation.

gRPC spans come from the maintained `opentelemetry-instrumentation-grpc` interceptors; this module adds
what WeaverBird needs on top: health checks and reflection are not traced, and span names follow the
RPC semantic conventions ("weaverbird.v1.EmbedderService/Embed", as the RPC metrics' method label).
Server spans are ERROR for the codes the conventions count as server faults (INTERNAL, UNAVAILABLE,
DEADLINE_EXCEEDED, UNKNOWN, UNIMPLEMENTED, DATA_LOSS), not for a caller's bad request; every span
carries the code as `rpc.grpc.status_code`.

The `traceparent`/`tracestate` headers travel through OpenTelemetry's global propagator, both in gRPC
metadata and in Kafka message headers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import grpc
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.instrumentation.grpc import aio_client_interceptors, aio_server_interceptor
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

from weaverbird_common.interceptor import is_probe

# The instrumentation's tracer (its module name).
_GRPC_SCOPE = "opentelemetry.instrumentation.grpc"


class _RpcSpanNames(SpanProcessor):
    """Names gRPC spans "pkg.Service/Method": the instrumentation uses the path, "/pkg.Service/Method"."""

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        scope = span.instrumentation_scope
        if scope is not None and scope.name == _GRPC_SCOPE and span.name.startswith("/"):
            span.update_name(span.name[1:])


def configure_tracing(
    service_name: str,
    otlp_endpoint: str | None,
    *,
    exporter: SpanExporter | None = None,
    set_global: bool = True,
) -> TracerProvider:
    """Builds the process's tracer provider (resource `service.name`, standard `OTEL_*` env honoured).

    Args:
        service_name: the `service.name` resource attribute, e.g. "weaverbird-embedder".
        otlp_endpoint: OTLP/gRPC collector address (e.g. "http://otel-collector:4317"); spans are
            batched and exported there. None or "" exports nothing (spans are still created, so
            trace ids still propagate and appear in logs).
        exporter: an extra exporter whose spans are exported synchronously, one by one (tests pass
            an InMemorySpanExporter). Defaults to None.
        set_global: install the provider as OpenTelemetry's global one. Defaults to True; tests
            pass False and hand the provider to the interceptors instead, because the global
            provider can be set only once per process.

    Returns:
        The provider; call its `shutdown()` on exit to flush buffered spans.

    Raises:
        ImportError: `otlp_endpoint` is set but opentelemetry-exporter-otlp-proto-grpc is missing.
    """
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service_name}))
    provider.add_span_processor(_RpcSpanNames())
    if otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        insecure = not otlp_endpoint.startswith("https://")
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_endpoint, insecure=insecure)))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    if set_global:
        trace.set_tracer_provider(provider)
    return provider


def tracing_server_interceptor(tracer_provider: trace.TracerProvider | None = None) -> grpc.aio.ServerInterceptor:
    """Continues the caller's trace (W3C traceparent in metadata) with a SERVER span per call.

    The span is current while the handler runs, so servicer logs carry its trace id and outgoing
    calls made through `tracing_client_interceptors` or with `tracing_metadata()` become its children.

    Args:
        tracer_provider: where spans go; the global provider (see configure_tracing) by default.
    """
    return aio_server_interceptor(tracer_provider, filter_=lambda details: not is_probe(details.method))


def tracing_client_interceptors(
    tracer_provider: trace.TracerProvider | None = None,
) -> list[grpc.aio.ClientInterceptor]:
    """Interceptors for `grpc.aio.insecure_channel(..., interceptors=...)`: a CLIENT span per unary or
    streaming call, its traceparent sent in the metadata."""
    return aio_client_interceptors(tracer_provider)


def tracing_metadata(metadata: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """Returns `metadata` plus the current trace context (traceparent, tracestate, baggage).

    For calls made without `tracing_client_interceptors`: `await stub.Embed(req, metadata=tracing_metadata())`.
    """
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return [*metadata, *carrier.items()]


# Kafka headers: kafka-python and confluent-kafka both use list[tuple[str, bytes]].


def inject_headers(headers: Sequence[tuple[str, bytes]] = ()) -> list[tuple[str, bytes]]:
    """Returns `headers` plus the current trace context, for a produced Kafka message."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    kept = [(k, v) for k, v in headers if k.lower() not in carrier]
    return [*kept, *((k, v.encode("utf-8")) for k, v in carrier.items())]


def extract_headers(headers: Sequence[tuple[str, bytes | None]] | None) -> otel_context.Context:
    """Returns the trace context carried by a consumed Kafka message (empty if it carries none).

    Use it as the parent of the consumer's span:
    `tracer.start_as_current_span("ingest", context=extract_headers(msg.headers), kind=SpanKind.CONSUMER)`.
    """
    carrier = {k.lower(): v.decode("utf-8", "replace") for k, v in headers or () if v is not None}
    return propagate.extract(carrier)
