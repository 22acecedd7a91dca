"""Prometheus metrics, OpenTelemetry tracing and trace-correlated logging for every service.

Every metric any service records is defined here, once, so names and labels stay consistent
(`weaverbird_<svc>_<what>_<unit>`, bounded labels only). Services import the objects they need:

    from weaverbird_common import telemetry
    telemetry.ORCHESTRATOR_QUESTIONS.labels(route="local").inc()
    with telemetry.ORCHESTRATOR_STAGE_DURATION.labels(stage="embed", route="local").time():
        ...

Only the RPC metrics (`weaverbird_grpc_*`) are in the default registry from the start; a service's own
metrics are exported once `register_metrics(service)` ran (serve_forever does it), so the retriever
never shows an ingester lag of 0. Recording into a metric that is not registered is harmless.

Tracing uses the W3C `traceparent`/`tracestate` headers through OpenTelemetry's global propagator,
both in gRPC metadata and in Kafka message headers.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import grpc
import prometheus_client
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.propagators.textmap import Getter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from weaverbird_common.coverage import GAP_KINDS

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
    "UNOBSERVED_SERVICE_PREFIXES",
    "MetricsInterceptor",
    "TraceContextFilter",
    "TracingClientInterceptor",
    "TracingServerInterceptor",
    "configure_tracing",
    "extract_headers",
    "inject_headers",
    "metrics_text",
    "register_metrics",
    "start_metrics_server",
    "tracing_metadata",
]

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Prometheus: the RPC metrics every service exports, then each service's own (registered on demand).
# --------------------------------------------------------------------------------------------

SERVICES = ("embedder", "retriever", "generator", "orchestrator", "ingester")
# Service -> the metrics it owns (named weaverbird_<service>_...); filled in by _owned() below.
SERVICE_METRICS: dict[str, list[prometheus_client.metrics.MetricWrapperBase]] = {name: [] for name in SERVICES}

_Metric = TypeVar("_Metric", bound=prometheus_client.metrics.MetricWrapperBase)


def _owned(service: str, metric: _Metric) -> _Metric:
    """Files `metric` (created with registry=None) under `service` for register_metrics()."""
    SERVICE_METRICS[service].append(metric)
    return metric


# Generation on CPU takes tens of seconds, so latency buckets reach two minutes.
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
_SCORE_BUCKETS = tuple(round(-1.0 + 0.1 * i, 1) for i in range(1, 21))  # -0.9 ... 1.0 (cosine)
_TOKENS_PER_SECOND_BUCKETS = (1.0, 2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 200.0, 500.0)

GRPC_SERVER_REQUESTS = prometheus_client.Counter(
    "weaverbird_grpc_server_requests_total",
    "Finished gRPC calls by service, full method name and final status code.",
    ("service", "method", "code"),
)
GRPC_SERVER_REQUEST_DURATION = prometheus_client.Histogram(
    "weaverbird_grpc_server_request_duration_seconds",
    "Time from handler start to final status (the whole stream for server-streaming calls).",
    ("service", "method", "code"),
    buckets=_LATENCY_BUCKETS,
)

# Orchestrator. route: local | web.
ORCHESTRATOR_STAGES = (
    "embed",
    "local_search",
    "web_search",
    "web_fetch",
    "web_embed",
    "generate_first_token",
    "generate",
)
ORCHESTRATOR_QUESTIONS = _owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_questions_total", "Questions answered, by route.", ("route",), registry=None
    ),
)
ORCHESTRATOR_REQUEST_DURATION = _owned(
    "orchestrator",
    prometheus_client.Histogram(
        "weaverbird_orchestrator_request_duration_seconds",
        "Whole-question latency, by route.",
        ("route",),
        buckets=_LATENCY_BUCKETS,
        registry=None,
    ),
)
ORCHESTRATOR_STAGE_DURATION = _owned(
    "orchestrator",
    prometheus_client.Histogram(
        "weaverbird_orchestrator_stage_duration_seconds",
        "Latency of one stage of a question; stage is one of ORCHESTRATOR_STAGES.",
        ("stage", "route"),
        buckets=_LATENCY_BUCKETS,
        registry=None,
    ),
)
ORCHESTRATOR_BEST_LOCAL_SCORE = _owned(
    "orchestrator",
    prometheus_client.Histogram(
        "weaverbird_orchestrator_best_local_score",
        "Cosine similarity of the best local passage, which decides the route.",
        buckets=_SCORE_BUCKETS,
        registry=None,
    ),
)
# reason: why a question took its route (RouteEvent.route_reason): covered | low_score | a coverage gap.
ORCHESTRATOR_ROUTE_REASONS = ("covered", "low_score", *GAP_KINDS)
ORCHESTRATOR_ROUTE_REASON = _owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_route_reasons_total",
        "Questions by why they took their route: covered (local), low_score, or the coverage gap that sent "
        "them to the web.",
        ("reason",),
        registry=None,
    ),
)
for _reason in ORCHESTRATOR_ROUTE_REASONS:
    ORCHESTRATOR_ROUTE_REASON.labels(reason=_reason)  # every series exists from the start, at zero
ORCHESTRATOR_DOCUMENTS_PUBLISHED = _owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_documents_published_total", "Web pages published to the ingest topic.", registry=None
    ),
)
ORCHESTRATOR_WEB_SEARCH_FAILURES = _owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_web_search_failures_total", "Web searches that failed or timed out.", registry=None
    ),
)
# result: supported | unsupported | no_numbers | refused (the AnswerCheck values of orchestrator.proto).
ORCHESTRATOR_ANSWER_CHECK_RESULTS = ("supported", "unsupported", "no_numbers", "refused")
ORCHESTRATOR_ANSWER_CHECKS = _owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_answer_numeric_checks_total",
        "Answers by numeric check result: were the answer's figures found in the passages it cites.",
        ("result",),
        registry=None,
    ),
)
for _result in ORCHESTRATOR_ANSWER_CHECK_RESULTS:
    ORCHESTRATOR_ANSWER_CHECKS.labels(result=_result)  # every series exists from the start, at zero

# Ingester. outcome: processed | failed | dead_lettered (keep the set small and fixed).
INGESTER_CONSUMER_LAG = _owned(
    "ingester",
    prometheus_client.Gauge(
        "weaverbird_ingester_consumer_lag_messages",
        "Messages in the ingest topic not yet consumed by this group.",
        registry=None,
    ),
)
INGESTER_MESSAGES = _owned(
    "ingester",
    prometheus_client.Counter(
        "weaverbird_ingester_messages_total", "Ingest messages handled, by outcome.", ("outcome",), registry=None
    ),
)
INGESTER_CHUNKS_UPSERTED = _owned(
    "ingester",
    prometheus_client.Counter(
        "weaverbird_ingester_chunks_upserted_total", "Chunks written to the retriever.", registry=None
    ),
)

# Generator. kind: prompt | completion.
GENERATOR_TOKENS_PER_SECOND = _owned(
    "generator",
    prometheus_client.Histogram(
        "weaverbird_generator_tokens_per_second",
        "Decoding speed of one generation (completion tokens / decode seconds).",
        buckets=_TOKENS_PER_SECOND_BUCKETS,
        registry=None,
    ),
)
GENERATOR_TOKENS = _owned(
    "generator",
    prometheus_client.Counter(
        "weaverbird_generator_tokens_total",
        "Tokens processed, by kind (prompt | completion).",
        ("kind",),
        registry=None,
    ),
)

# Retriever.
RETRIEVER_COLLECTION_POINTS = _owned(
    "retriever",
    prometheus_client.Gauge(
        "weaverbird_retriever_collection_points", "Points stored in the vector collection.", registry=None
    ),
)


# Which services' metrics each registry already holds (registering twice would raise).
_REGISTERED: weakref.WeakKeyDictionary[prometheus_client.CollectorRegistry, set[str]] = weakref.WeakKeyDictionary()


def register_metrics(service: str, registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY) -> None:
    """Adds `service`'s own metrics to `registry` (the default one unless given); idempotent.

    The RPC metrics are always in the default registry; with this call a service exports them plus
    its own and nobody else's, so no dashboard reads a zero from a service that never records it.

    Raises:
        ValueError: `service` is not one of SERVICES.
    """
    if service not in SERVICE_METRICS:
        raise ValueError(f"unknown service {service!r}; expected one of {', '.join(SERVICES)}")
    done = _REGISTERED.setdefault(registry, set())
    if service in done:
        return
    for metric in SERVICE_METRICS[service]:
        registry.register(metric)
    done.add(service)


def start_metrics_server(
    port: int, addr: str = "0.0.0.0", registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY
) -> None:
    """Serves `registry` (the default one unless given) at http://addr:port/metrics in a background thread.

    Args:
        port: TCP port; 0 disables the endpoint (nothing is started).
        addr: interface to bind; all interfaces by default, since Prometheus scrapes the pod IP.
        registry: what to serve.
    """
    if port == 0:
        return
    prometheus_client.start_http_server(port, addr=addr, registry=registry)
    log.info("metrics endpoint port=%d", port)


def metrics_text(registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY) -> str:
    """Returns the Prometheus text exposition of `registry` (the default one unless given)."""
    return prometheus_client.generate_latest(registry).decode("utf-8")


# --------------------------------------------------------------------------------------------
# gRPC server interceptors. Order in start_server: [TracingServerInterceptor, MetricsInterceptor];
# both run outside the error interceptor, so they see its context.abort() with the final code.
# --------------------------------------------------------------------------------------------

_Behavior = Callable[[Any, grpc.aio.ServicerContext], Any]
# An interceptor's hook: called once when the handler starts, returns the callback for its end.
_OnStart = Callable[[str, grpc.aio.ServicerContext], Callable[[grpc.StatusCode, BaseException | None], None]]


# Probes and tooling, not traffic: kubelet health checks every few seconds would swamp the error
# ratio and the traces. Matched against the start of the method label.
UNOBSERVED_SERVICE_PREFIXES = ("grpc.health.v1.", "grpc.reflection.")


def _method_label(full_method: str) -> str:
    """'/weaverbird.v1.EmbedderService/Embed' -> 'weaverbird.v1.EmbedderService/Embed' (the OTel span name)."""
    return full_method.lstrip("/")


def _final_code(context: grpc.aio.ServicerContext, exc: BaseException | None) -> grpc.StatusCode:
    """The status the client receives: the one abort()/set_code() stored, else derived from `exc`."""
    code = context.code()
    if isinstance(code, grpc.StatusCode) and (code is not grpc.StatusCode.OK or exc is None):
        return code
    if exc is None:
        return grpc.StatusCode.OK
    if isinstance(exc, grpc.aio.AbortError):
        return grpc.StatusCode.UNKNOWN  # abort() always stores its code, so this is not expected
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return grpc.StatusCode.CANCELLED  # the client went away
    return grpc.StatusCode.UNKNOWN  # what grpc.aio sends for an exception nobody converted


def _wrap_handler(handler: grpc.RpcMethodHandler, method: str, on_start: _OnStart) -> grpc.RpcMethodHandler:
    """Wraps a unary-unary or unary-stream handler so `on_start`'s callback sees every call's end."""
    if handler.unary_unary is not None:
        unary: _Behavior = handler.unary_unary

        async def unary_wrapper(request: Any, context: grpc.aio.ServicerContext) -> Any:
            on_end = on_start(method, context)
            try:
                response = await unary(request, context)
            except BaseException as exc:
                on_end(_final_code(context, exc), exc)
                raise
            on_end(_final_code(context, None), None)
            return response

        return grpc.unary_unary_rpc_method_handler(
            unary_wrapper,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        stream: _Behavior = handler.unary_stream

        async def stream_wrapper(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            on_end = on_start(method, context)
            try:
                result = stream(request, context)
                if hasattr(result, "__aiter__"):
                    async for item in result:
                        yield item
                else:  # a coroutine that streams with context.write()
                    await result
            except BaseException as exc:
                on_end(_final_code(context, exc), exc)
                raise
            on_end(_final_code(context, None), None)

        return grpc.unary_stream_rpc_method_handler(
            stream_wrapper,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return handler  # client-streaming calls are not used by WeaverBird services


class _ObservingInterceptor(grpc.aio.ServerInterceptor):
    """Calls `_on_start` when a call begins; the callback it returns runs when the call ends.

    Calls to UNOBSERVED_SERVICE_PREFIXES (health checks, reflection) pass through unobserved.
    """

    def _on_start(
        self, method: str, context: grpc.aio.ServicerContext
    ) -> Callable[[grpc.StatusCode, BaseException | None], None]:
        raise NotImplementedError

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = _method_label(handler_call_details.method)
        if handler is None or method.startswith(UNOBSERVED_SERVICE_PREFIXES):
            return handler
        return _wrap_handler(handler, method, self._on_start)


class MetricsInterceptor(_ObservingInterceptor):
    """Counts every unary and server-streaming call and times it, labelled with its final status code.

    Health checks and reflection are not counted (see UNOBSERVED_SERVICE_PREFIXES).
    """

    def __init__(self, service: str) -> None:
        """Args:
        service: the `service` label, e.g. "embedder".
        """
        self._service = service

    def _on_start(
        self, method: str, context: grpc.aio.ServicerContext
    ) -> Callable[[grpc.StatusCode, BaseException | None], None]:
        started = time.perf_counter()

        def on_end(code: grpc.StatusCode, exc: BaseException | None) -> None:
            labels = {"service": self._service, "method": method, "code": code.name}
            GRPC_SERVER_REQUESTS.labels(**labels).inc()
            GRPC_SERVER_REQUEST_DURATION.labels(**labels).observe(time.perf_counter() - started)

        return on_end


# --------------------------------------------------------------------------------------------
# OpenTelemetry tracing.
# --------------------------------------------------------------------------------------------

_TRACER_NAME = "weaverbird"


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
    if otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        insecure = not otlp_endpoint.startswith("https://")
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_endpoint, insecure=insecure)))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    if set_global:
        trace.set_tracer_provider(provider)
    return provider


def _tracer(provider: trace.TracerProvider | None) -> trace.Tracer:
    return (provider or trace.get_tracer_provider()).get_tracer(_TRACER_NAME)


class _MetadataGetter(Getter[Mapping[str, str]]):
    def get(self, carrier: Mapping[str, str], key: str) -> list[str] | None:
        value = carrier.get(key.lower())
        return [value] if value is not None else None

    def keys(self, carrier: Mapping[str, str]) -> list[str]:
        return list(carrier)


_METADATA_GETTER = _MetadataGetter()


def _text_metadata(pairs: Iterable[tuple[str, Any]] | None) -> dict[str, str]:
    """gRPC metadata as a dict of its text entries (binary `-bin` entries are skipped)."""
    out: dict[str, str] = {}
    for key, value in pairs or ():
        if isinstance(value, str):
            out[key.lower()] = value
    return out


def _rpc_attributes(method: str) -> dict[str, str]:
    service, _, name = method.rpartition("/")
    return {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name}


def _end_span(span: trace.Span, code: grpc.StatusCode, exc: BaseException | None) -> None:
    span.set_attribute("rpc.grpc.status_code", code.value[0])
    if code is not grpc.StatusCode.OK:
        span.set_status(Status(StatusCode.ERROR, code.name))
    if exc is not None and not isinstance(exc, grpc.aio.AbortError):
        span.record_exception(exc)


class TracingServerInterceptor(_ObservingInterceptor):
    """Continues the caller's trace (W3C traceparent in metadata) with a SERVER span per call.

    The span is current while the handler runs, so servicer logs carry its trace id and outgoing
    calls made with `TracingClientInterceptor` or `tracing_metadata()` become its children.
    """

    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        """Args:
        tracer_provider: where spans go; the global provider (see configure_tracing) by default.
        """
        self._tracer = _tracer(tracer_provider)

    def _on_start(
        self, method: str, context: grpc.aio.ServicerContext
    ) -> Callable[[grpc.StatusCode, BaseException | None], None]:
        parent = propagate.extract(_text_metadata(context.invocation_metadata()), getter=_METADATA_GETTER)
        span = self._tracer.start_span(method, context=parent, kind=SpanKind.SERVER, attributes=_rpc_attributes(method))
        # Attached here and detached in on_end: both run in the call's own task and contextvars copy.
        token = otel_context.attach(trace.set_span_in_context(span, parent))

        def on_end(code: grpc.StatusCode, exc: BaseException | None) -> None:
            _end_span(span, code, exc)
            span.end()
            try:
                otel_context.detach(token)
            except ValueError:  # a stream finished in another context copy; the span is ended anyway
                pass

        return on_end


def tracing_metadata(metadata: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """Returns `metadata` plus the current trace context (traceparent, tracestate, baggage).

    For calls made without `TracingClientInterceptor`: `await stub.Embed(req, metadata=tracing_metadata())`.
    """
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return [*metadata, *carrier.items()]


def _call_metadata(details: grpc.aio.ClientCallDetails, span: trace.Span) -> grpc.aio.Metadata:
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=trace.set_span_in_context(span))
    return grpc.aio.Metadata(*(details.metadata or ()), *carrier.items())


class TracingClientInterceptor(grpc.aio.UnaryUnaryClientInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    """Wraps each outgoing unary or server-streaming call in a CLIENT span and sends its traceparent.

    Use: `grpc.aio.insecure_channel(target, interceptors=[TracingClientInterceptor()])`.
    """

    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        """Args:
        tracer_provider: where spans go; the global provider by default.
        """
        self._tracer = _tracer(tracer_provider)

    def _start(self, details: grpc.aio.ClientCallDetails) -> tuple[trace.Span, grpc.aio.ClientCallDetails]:
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        name = _method_label(method)
        span = self._tracer.start_span(name, kind=SpanKind.CLIENT, attributes=_rpc_attributes(name))
        return span, details._replace(metadata=_call_metadata(details, span))

    async def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Awaitable[grpc.aio.UnaryUnaryCall]],
        client_call_details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> grpc.aio.UnaryUnaryCall:
        span, details = self._start(client_call_details)
        try:
            call = await continuation(details, request)
            code = await call.code()  # waits for the end of the call without raising its error
        except BaseException as exc:
            _end_span(span, grpc.StatusCode.UNKNOWN, exc)
            span.end()
            raise
        _end_span(span, code, None)
        span.end()
        return call

    async def intercept_unary_stream(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Awaitable[grpc.aio.UnaryStreamCall]],
        client_call_details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> AsyncIterator[Any]:
        span, details = self._start(client_call_details)
        call = await continuation(details, request)
        return self._iterate(call, span)

    @staticmethod
    async def _iterate(call: grpc.aio.UnaryStreamCall, span: trace.Span) -> AsyncIterator[Any]:
        code = grpc.StatusCode.OK
        try:
            async for item in call:
                yield item
        except grpc.aio.AioRpcError as exc:
            code = exc.code()
            raise
        except BaseException:
            code = grpc.StatusCode.CANCELLED
            raise
        finally:
            _end_span(span, code, None)
            span.end()


class _StreamTracing(grpc.aio.UnaryStreamClientInterceptor):
    """Registers the tracing interceptor for server-streaming calls too.

    grpc.aio files each channel interceptor under the FIRST interceptor kind it is an instance of, so
    one object implementing both kinds would never see streaming calls.
    """

    def __init__(self, inner: TracingClientInterceptor) -> None:
        self._inner = inner

    async def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await self._inner.intercept_unary_stream(continuation, client_call_details, request)


def tracing_client_interceptors(
    tracer_provider: trace.TracerProvider | None = None,
) -> list[grpc.aio.ClientInterceptor]:
    """Interceptors for `grpc.aio.insecure_channel(..., interceptors=...)`: unary and streaming calls."""
    inner = TracingClientInterceptor(tracer_provider)
    return [inner, _StreamTracing(inner)]


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
    return propagate.extract(carrier, getter=_METADATA_GETTER)


# --------------------------------------------------------------------------------------------
# Logging: trace ids on every line.
# --------------------------------------------------------------------------------------------


class TraceContextFilter(logging.Filter):
    """Adds `trace_id` and `span_id` (hex, or "-" outside a span) to every record it sees.

    Attach it to a handler, not a logger: handler filters also see records propagated from child
    loggers. `weaverbird_common.logs.configure_logging` does this.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = trace.get_current_span().get_span_context()
        if ctx.is_valid:
            record.trace_id = trace.format_trace_id(ctx.trace_id)
            record.span_id = trace.format_span_id(ctx.span_id)
        else:
            record.trace_id = "-"
            record.span_id = "-"
        return True
