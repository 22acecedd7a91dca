"""Metrics and tracing interceptors over a real loopback gRPC hop, Kafka header propagation, log trace ids."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import socket
import sys
import urllib.request
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import grpc
import prometheus_client
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from prometheus_client.parser import text_string_to_metric_families
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc
from weaverbird_common import errors, telemetry
from weaverbird_common.logs import configure_logging
from weaverbird_common.server import RunningServer, ServiceBinding, start_server

# A label of its own, so counts from other tests sharing the default registry never mix in.
SERVICE = f"test-{uuid.uuid4().hex[:8]}"
EMBED = "weaverbird.v1.EmbedderService/Embed"
STREAM = "test.Stream/Count"
CONTRACT = Path(__file__).resolve().parents[3] / "deploy" / "metrics.json"

servicer_log = logging.getLogger("test_telemetry.servicer")
_CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}


class _FakeEmbedder(embedder_pb2_grpc.EmbedderServiceServicer):
    """texts[0] picks the outcome: "bad" -> InvalidArgument, "boom" -> an unexpected error."""

    last_metadata: ClassVar[dict[str, str]] = {}

    async def Embed(self, request: embedder_pb2.EmbedRequest, context: Any) -> embedder_pb2.EmbedResponse:
        servicer_log.info("embedding texts=%d", len(request.texts))
        _FakeEmbedder.last_metadata = dict(context.invocation_metadata())
        if request.texts[0] == "bad":
            raise errors.InvalidArgument("texts[0] is bad")
        if request.texts[0] == "boom":
            raise RuntimeError("hidden internals")
        return embedder_pb2.EmbedResponse(
            vectors=[embedder_pb2.Vector(values=[1.0, 0.0])], model_id="fake", dimension=2
        )


async def _count(request: bytes, context: Any) -> AsyncIterator[bytes]:
    """Server-streaming handler on raw bytes: yields request[0] items, then fails if asked to."""
    for i in range(request[0]):
        yield bytes([i])
    if request[1:] == b"fail":
        raise errors.Unavailable("stream source went away")


def _add_stream_service(servicer: object, server: grpc.aio.Server) -> None:
    handler = grpc.unary_stream_rpc_method_handler(_count)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Stream", {"Count": handler}),))


@pytest.fixture(scope="module")
async def server(provider: TracerProvider) -> AsyncIterator[RunningServer]:
    bindings = [
        ServiceBinding(
            embedder_pb2_grpc.add_EmbedderServiceServicer_to_server,
            _FakeEmbedder(),
            embedder_pb2.DESCRIPTOR.services_by_name["EmbedderService"].full_name,
        ),
        ServiceBinding(_add_stream_service, None, "test.Stream"),
    ]
    running = await start_server(bindings, observed=True, tracer_provider=provider, service=SERVICE)
    yield running
    await running.stop(0)


@pytest.fixture
async def channel(server: RunningServer, provider: TracerProvider) -> AsyncIterator[grpc.aio.Channel]:
    interceptors = telemetry.tracing_client_interceptors(provider)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}", interceptors=interceptors) as ch:
        yield ch


def _sample(name: str, **labels: str) -> float:
    """Value of the sample `name` with exactly these label values in the exposition, 0 if absent."""
    for family in text_string_to_metric_families(telemetry.metrics_text()):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


def _embed_request(first: str) -> embedder_pb2.EmbedRequest:
    return embedder_pb2.EmbedRequest(texts=[first], kind=embedder_pb2.EMBED_KIND_QUERY)


async def test_metrics_count_calls_by_final_code(channel: grpc.aio.Channel) -> None:
    stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
    for _ in range(2):
        assert (await stub.Embed(_embed_request("ok"))).dimension == 2
    for first, code in (("bad", grpc.StatusCode.INVALID_ARGUMENT), ("boom", grpc.StatusCode.INTERNAL)):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.Embed(_embed_request(first))
        assert info.value.code() == code

    def labels(code: str) -> dict[str, str]:
        return {"service": SERVICE, "method": EMBED, "code": code}

    # The server records a call once it has finished it, which may be just after the client saw the
    # status: wait (bounded) for the last call's sample before reading them all.
    for _ in range(100):
        if _sample("weaverbird_grpc_server_requests_total", **labels("INTERNAL")):
            break
        await asyncio.sleep(0.05)
    assert _sample("weaverbird_grpc_server_requests_total", **labels("OK")) == 2
    assert _sample("weaverbird_grpc_server_requests_total", **labels("INVALID_ARGUMENT")) == 1
    assert _sample("weaverbird_grpc_server_requests_total", **labels("INTERNAL")) == 1
    assert _sample("weaverbird_grpc_server_requests_total", **labels("UNKNOWN")) == 0
    assert _sample("weaverbird_grpc_server_request_duration_seconds_count", **labels("OK")) == 2
    assert _sample("weaverbird_grpc_server_request_duration_seconds_count", **labels("INTERNAL")) == 1
    assert _sample("weaverbird_grpc_server_request_duration_seconds_bucket", **labels("OK"), le="+Inf") == 2


async def test_metrics_cover_server_streaming(channel: grpc.aio.Channel, spans: InMemorySpanExporter) -> None:
    spans.clear()
    count = channel.unary_stream(f"/{STREAM}")
    assert [item async for item in count(bytes([3]))] == [b"\x00", b"\x01", b"\x02"]
    call = count(bytes([2]) + b"fail")
    received = []
    with pytest.raises(grpc.aio.AioRpcError) as info:
        async for item in call:
            received.append(item)
    assert received == [b"\x00", b"\x01"]
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE

    assert _sample("weaverbird_grpc_server_requests_total", service=SERVICE, method=STREAM, code="OK") == 1
    assert _sample("weaverbird_grpc_server_requests_total", service=SERVICE, method=STREAM, code="UNAVAILABLE") == 1

    # Both ends of each stream are traced under the method's name, the failed one with its code.
    streamed = [s for s in spans.get_finished_spans() if s.name == STREAM]
    assert sorted((s.kind.name, _CODE_NAMES[s.attributes["rpc.grpc.status_code"]]) for s in streamed) == [
        ("CLIENT", "OK"),
        ("CLIENT", "UNAVAILABLE"),
        ("SERVER", "OK"),
        ("SERVER", "UNAVAILABLE"),
    ]


async def test_client_and_server_spans_share_the_trace(
    channel: grpc.aio.Channel, provider: TracerProvider, spans: InMemorySpanExporter
) -> None:
    spans.clear()
    stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
    with provider.get_tracer("test").start_as_current_span("caller") as root:
        await stub.Embed(_embed_request("ok"), metadata=(("x-extra", "kept"),))
        assert _FakeEmbedder.last_metadata["x-extra"] == "kept"  # the caller's metadata survives injection
        assert "traceparent" in _FakeEmbedder.last_metadata
        for first in ("bad", "boom"):
            with pytest.raises(grpc.aio.AioRpcError):
                await stub.Embed(_embed_request(first))

    finished = spans.get_finished_spans()
    trace_id = root.get_span_context().trace_id
    client = [s for s in finished if s.kind == SpanKind.CLIENT and s.name == EMBED]
    server = [s for s in finished if s.kind == SpanKind.SERVER and s.name == EMBED]
    assert len(client) == 3 and len(server) == 3
    assert {s.context.trace_id for s in client + server} == {trace_id}
    # Each server span is the child of the client span that made the call.
    assert {s.parent.span_id for s in server if s.parent} == {s.context.span_id for s in client}
    assert all(s.parent and s.parent.span_id == root.get_span_context().span_id for s in client)
    for span in server + client:
        assert span.attributes["rpc.service"] == "weaverbird.v1.EmbedderService"
        assert span.attributes["rpc.method"] == "Embed"

    def status_by_code(spans: list[Any]) -> dict[str, trace.StatusCode]:
        return {_CODE_NAMES[s.attributes["rpc.grpc.status_code"]]: s.status.status_code for s in spans}

    # A bad request is the caller's fault, not the server's (the RPC semantic conventions); the caller sees an error.
    assert status_by_code(server) == {
        "OK": trace.StatusCode.UNSET,
        "INVALID_ARGUMENT": trace.StatusCode.UNSET,
        "INTERNAL": trace.StatusCode.ERROR,
    }
    assert status_by_code(client) == {
        "OK": trace.StatusCode.UNSET,
        "INVALID_ARGUMENT": trace.StatusCode.ERROR,
        "INTERNAL": trace.StatusCode.ERROR,
    }


async def test_tracing_metadata_propagates_without_client_interceptor(
    server: RunningServer, provider: TracerProvider, spans: InMemorySpanExporter
) -> None:
    spans.clear()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as plain:
        stub = embedder_pb2_grpc.EmbedderServiceStub(plain)
        with provider.get_tracer("test").start_as_current_span("caller") as root:
            await stub.Embed(_embed_request("ok"), metadata=telemetry.tracing_metadata([("x-extra", "1")]))
    (server_span,) = [s for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER]
    assert server_span.context.trace_id == root.get_span_context().trace_id
    assert server_span.parent is not None and server_span.parent.span_id == root.get_span_context().span_id


async def test_server_log_lines_carry_the_trace_id(
    channel: grpc.aio.Channel, provider: TracerProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    root_logger = logging.getLogger()
    saved = (root_logger.handlers[:], root_logger.level)
    configure_logging("INFO", "embedder")
    try:
        with provider.get_tracer("test").start_as_current_span("caller") as root:
            await embedder_pb2_grpc.EmbedderServiceStub(channel).Embed(_embed_request("ok"))
        logging.getLogger("test_telemetry.outside").info("no span here")
    finally:
        root_logger.handlers[:], level = saved
        root_logger.setLevel(level)
    lines = stream.getvalue().splitlines()
    trace_hex = trace.format_trace_id(root.get_span_context().trace_id)
    (served,) = [line for line in lines if "embedding texts=1" in line]
    assert f"trace_id={trace_hex}" in served
    assert "service=embedder" in served
    assert "span_id=" in served and "span_id=-" not in served
    (outside,) = [line for line in lines if "no span here" in line]
    assert "trace_id=- span_id=-" in outside


def test_kafka_headers_round_trip(provider: TracerProvider) -> None:
    with provider.get_tracer("test").start_as_current_span("publish") as span:
        headers = telemetry.inject_headers([("content-type", b"application/x-protobuf")])
    assert headers[0] == ("content-type", b"application/x-protobuf")
    assert all(isinstance(k, str) and isinstance(v, bytes) for k, v in headers)
    assert any(k == "traceparent" for k, _ in headers)

    parent = trace.get_current_span(telemetry.extract_headers(headers)).get_span_context()
    assert parent.trace_id == span.get_span_context().trace_id
    assert parent.span_id == span.get_span_context().span_id
    assert parent.is_remote
    assert not trace.get_current_span(telemetry.extract_headers(None)).get_span_context().is_valid


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _scrape_families(port: int) -> set[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        body = response.read().decode()
    names = {family.name for family in text_string_to_metric_families(body) if family.name.startswith("weaverbird_")}
    # The text format's `<counter>_created` samples parse as families of their own.
    return {name for name in names if not name.endswith("_created")}


def _family(name: str) -> str:
    return name.removesuffix("_total")  # the parser reports counters by their family name


@pytest.mark.parametrize("service", telemetry.SERVICES)
def test_a_service_exports_the_rpc_metrics_and_only_its_own(service: str) -> None:
    # A registry of its own: the default one of this test process holds every service's metrics.
    registry = prometheus_client.CollectorRegistry()
    registry.register(telemetry.GRPC_SERVER_REQUESTS)
    registry.register(telemetry.GRPC_SERVER_REQUEST_DURATION)
    telemetry.register_metrics(service, registry)
    telemetry.register_metrics(service, registry)  # idempotent, as serve_forever and imports may both call it
    telemetry.start_metrics_server(0, registry=registry)  # disabled: must not bind anything
    port = _free_port()
    telemetry.start_metrics_server(port, addr="127.0.0.1", registry=registry)

    contract = json.loads(CONTRACT.read_text())
    # Ownership is in the names: weaverbird_grpc_* everywhere, weaverbird_<service>_* in that service only.
    expected = {_family(n) for n in contract if n.startswith(("weaverbird_grpc_", f"weaverbird_{service}_"))}
    assert _scrape_families(port) == expected


def test_every_contract_metric_has_one_owner() -> None:
    contract = {_family(n) for n in json.loads(CONTRACT.read_text())}
    owned = [(service, m._name) for service, metrics in telemetry.SERVICE_METRICS.items() for m in metrics]
    for service, name in owned:
        assert name.startswith(f"weaverbird_{service}_"), f"{name} is filed under {service}"
    rpc = {"weaverbird_grpc_server_requests", "weaverbird_grpc_server_request_duration_seconds"}
    assert sorted(name for _, name in owned) == sorted(contract - rpc)


def test_register_metrics_rejects_an_unknown_service() -> None:
    with pytest.raises(ValueError, match="unknown service 'indexer'"):
        telemetry.register_metrics("indexer", prometheus_client.CollectorRegistry())


def _rpc_samples_of(prefix: str) -> list[Any]:
    return [
        sample
        for family in text_string_to_metric_families(telemetry.metrics_text())
        if family.name.startswith("weaverbird_grpc_server_")
        for sample in family.samples
        if sample.labels.get("service") == SERVICE and sample.labels.get("method", "").startswith(prefix)
    ]


async def test_health_checks_and_reflection_are_neither_counted_nor_traced(
    server: RunningServer, channel: grpc.aio.Channel, spans: InMemorySpanExporter
) -> None:
    spans.clear()
    health = health_pb2_grpc.HealthStub(channel)
    for _ in range(3):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    watch = health.Watch(health_pb2.HealthCheckRequest(service=""))
    assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
    watch.cancel()
    for version in ("v1", "v1alpha"):
        info = channel.stream_stream(
            f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        call = info(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
        names = [s.name for reply in [r async for r in call] for s in reply.list_services_response.service]
        assert "weaverbird.v1.EmbedderService" in names
    await embedder_pb2_grpc.EmbedderServiceStub(channel).Embed(_embed_request("ok"))  # real traffic still counts

    assert _rpc_samples_of("grpc.") == []
    assert _sample("weaverbird_grpc_server_requests_total", service=SERVICE, method=EMBED, code="OK") >= 1
    server_spans = [s.name for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER]
    assert EMBED in server_spans
    assert not [name for name in server_spans if name.startswith("grpc.")]
