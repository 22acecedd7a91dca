"""Metrics and traces of the running stack: Prometheus exposition per service, one trace per question."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest
from fixtures.otlp_collector import OtlpCollector
from prometheus_client.parser import text_string_to_metric_families
from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_cli.stack import SERVICES, LocalStack

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


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
    contract = json.loads((REPO / "deploy" / "metrics.json").read_text())
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


def test_one_question_is_one_trace_across_four_services(
    stack: LocalStack, orchestrator: orchestrator_pb2_grpc.OrchestratorServiceStub, otlp_collector: OtlpCollector
) -> None:
    seen_before = {s.trace_id for s in otlp_collector.spans()}
    question = "What was Harbor Bay Bank's net income in Q3 2024?"
    orchestrator.Ask(orchestrator_pb2.AskRequest(question=question, max_tokens=8), timeout=300)
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
