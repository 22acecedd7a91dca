"""Metrics and traces of the running stack: Prometheus exposition per service (each its own metrics,
probes not counted as traffic), one trace per question."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from fixtures.otlp_collector import OtlpCollector
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2
from prometheus_client.parser import text_string_to_metric_families
from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_cli.stack import SERVICES, LocalStack

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SERVING = health_pb2.HealthCheckResponse.SERVING


def _scrape(stack: LocalStack, service: str) -> dict[str, list]:
    """Samples by metric family name (counters without their _total suffix, as the parser reports)."""
    url = f"http://127.0.0.1:{stack.config.metrics_port(service)}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def _value(samples: list, name: str, **labels: str) -> float:
    return sum(s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))


def test_every_contract_metric_is_exported_by_its_service(
    stack: LocalStack, orchestrator: orchestrator_pb2_grpc.OrchestratorServiceStub
) -> None:
    before = _scrape(stack, "orchestrator")
    asked = _value(before.get("weaverbird_orchestrator_questions", []), "weaverbird_orchestrator_questions_total")
    orchestrator.Ask(orchestrator_pb2.AskRequest(question="What is free cash flow?", max_tokens=8), timeout=300)

    scraped = {service: _scrape(stack, service) for service in SERVICES}
    exported = {name for families in scraped.values() for name in families}
    contract = _contract()
    missing = [name for name in contract if name not in exported and name.removesuffix("_total") not in exported]
    assert not missing, f"metrics in deploy/metrics.json that no service exports: {missing}"

    orch = scraped["orchestrator"]
    assert _value(orch["weaverbird_orchestrator_questions"], "weaverbird_orchestrator_questions_total") == asked + 1
    requests = scraped["retriever"]["weaverbird_grpc_server_requests"]
    assert (
        _value(
            requests, "weaverbird_grpc_server_requests_total", method="weaverbird.v1.RetrieverService/Search", code="OK"
        )
        >= 1
    )
    retriever = scraped["retriever"]
    assert _value(retriever["weaverbird_retriever_collection_points"], "weaverbird_retriever_collection_points") > 0


def _contract() -> dict[str, str]:
    return json.loads((REPO / "deploy" / "metrics.json").read_text())


@pytest.mark.parametrize("service", SERVICES)
def test_each_service_exports_its_own_metrics_and_none_of_the_others(stack: LocalStack, service: str) -> None:
    # Ownership is in the contract's names: weaverbird_grpc_* everywhere, weaverbird_<service>_* only there.
    expected = {
        name.removesuffix("_total")
        for name in _contract()
        if name.startswith(("weaverbird_grpc_", f"weaverbird_{service}_"))
    }
    exported = {
        name
        for name in _scrape(stack, service)
        # The text format's `<counter>_created` samples parse as families of their own.
        if name.startswith("weaverbird_") and not name.endswith("_created")
    }
    assert exported == expected, (
        f"{service}: extra {sorted(exported - expected)}, missing {sorted(expected - exported)}"
    )


def _probe(addr: str) -> None:
    """What kubelet and grpcurl do: health checks (overall and per service) and a reflection listing."""
    with grpc.insecure_channel(addr) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for _ in range(3):
            assert health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10).status == SERVING
        listing = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        (reply,) = list(listing(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10))
        names = [s.name for s in reply.list_services_response.service]
        assert "grpc.health.v1.Health" in names
        for name in names:
            if name.startswith("weaverbird."):
                assert health.Check(health_pb2.HealthCheckRequest(service=name), timeout=10).status == SERVING


def test_health_checks_and_reflection_do_not_move_the_rpc_metrics(stack: LocalStack) -> None:
    for service in SERVICES:
        _probe(stack.config.addr(service))
    for service in SERVICES:
        families = _scrape(stack, service)
        probes = [
            (sample.name, sample.labels["method"])
            for family in ("weaverbird_grpc_server_requests", "weaverbird_grpc_server_request_duration_seconds")
            for sample in families.get(family, [])
            if sample.labels.get("method", "").startswith("grpc.")
        ]
        assert probes == [], f"{service} counts probes as traffic: {probes[:4]}"


def test_one_question_is_one_trace_across_four_services(
    stack: LocalStack, orchestrator: orchestrator_pb2_grpc.OrchestratorServiceStub, otlp_collector: OtlpCollector
) -> None:
    seen_before = {s.trace_id for s in otlp_collector.spans()}
    question = "What was Harbor Bay Bank's net income in Q3 2024?"
    orchestrator.Ask(orchestrator_pb2.AskRequest(question=question, max_tokens=8, facts=False), timeout=300)
    deadline = time.monotonic() + 30
    while True:
        roots = [
            s
            for s in otlp_collector.spans()
            if s.trace_id not in seen_before and s.name.endswith("OrchestratorService/Ask")
        ]
        trace_id = roots[0].trace_id if roots else None
        services = {s.service for s in otlp_collector.spans() if s.trace_id == trace_id}
        wanted = {f"weaverbird-{name}" for name in ("orchestrator", "embedder", "retriever", "generator")}
        if wanted <= services or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert trace_id is not None, "the orchestrator exported no span for Ask"
    generator = [(s.name, s.trace_id) for s in otlp_collector.spans() if s.service == "weaverbird-generator"]
    assert wanted <= services, f"trace {trace_id} spans only {sorted(services)}; generator spans: {generator[-5:]}"
