"""The served fact path end to end: a project-written annual report ingested through the ingester, then
figure and metric questions asked over gRPC are answered from its statement facts, computed in code, with
the formula and a citation of the report; a metric whose line items the report lacks goes to the passage
path instead."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
import pytest
from fixtures.statements import REPORT
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc, orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_cli.stack import LocalStack

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def report(stack: LocalStack) -> Iterator[str]:
    with grpc.insecure_channel(stack.config.addr("ingester")) as channel:
        ingester = ingester_pb2_grpc.IngesterServiceStub(channel)
        added = ingester.AddDocument(
            ingester_pb2.AddDocumentRequest(data=REPORT.encode(), filename="kestrel-loom-2025.md"), timeout=300
        )
        yield added.document_id
        ingester.DeleteDocument(
            ingester_pb2.IngesterServiceDeleteDocumentRequest(document_id=added.document_id), timeout=60
        )


def _ask(stack: LocalStack, question: str) -> orchestrator_pb2.AskResponse:
    with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
        return orchestrator_pb2_grpc.OrchestratorServiceStub(channel).Ask(
            orchestrator_pb2.AskRequest(question=question), timeout=600
        )


def _ask_once_known(stack: LocalStack, question: str, expect: str) -> orchestrator_pb2.AskResponse:
    """The orchestrator's catalog learns a new company on its next refresh (a poll of the KB size)."""
    reply = _ask(stack, question)
    for _ in range(12):
        if expect in reply.answer:
            break
        time.sleep(5)
        reply = _ask(stack, question)
    return reply


def test_a_metric_is_computed_from_the_reports_facts_with_formula_and_citation(stack: LocalStack, report: str) -> None:
    reply = _ask_once_known(stack, "What was Kestrel Loom Textiles' gross margin in 2025?", "38.6 %")
    assert "38.6 %" in reply.answer, reply.answer  # 325.2 / 842.5
    assert "Gross margin" in reply.answer and "gross profit / revenue" in reply.answer
    assert "325.2" in reply.answer and "842.5" in reply.answer
    cited = [c for c in reply.citations if c.cited_in_answer]
    assert cited and all(c.source.endswith("kestrel-loom-2025.md") for c in cited)
    assert reply.route.route == orchestrator_pb2.ROUTE_LOCAL
    assert reply.answer_check == orchestrator_pb2.ANSWER_CHECK_SUPPORTED
    # The calculation the page and the CLI show: formula, each figure cited to the report's page.
    calc = reply.calculation
    assert calc.formula.startswith("Gross margin = gross profit / revenue"), calc.formula
    assert {f.label for f in calc.figures} >= {"Gross profit (FY2025)", "Net sales (FY2025)"}
    assert all(1 <= f.passage <= len(reply.citations) for f in calc.figures)
    assert round(calc.result, 1) == 38.6 and calc.unit == "%"


def test_a_line_item_is_answered_with_its_scale(stack: LocalStack, report: str) -> None:
    reply = _ask_once_known(stack, "What were Kestrel Loom Textiles' net sales in 2024?", "760.2")
    assert "USD 760.2 million" in reply.answer, reply.answer


def test_a_metric_the_report_cannot_give_goes_to_the_passage_path(stack: LocalStack, report: str) -> None:
    _ask_once_known(stack, "What was Kestrel Loom Textiles' gross margin in 2025?", "38.6 %")  # catalog knows it
    reply = _ask(stack, "What was Kestrel Loom Textiles' interest coverage ratio in 2025?")
    assert "Formula:" not in reply.answer  # no interest expense fact: the model's passage answer


def test_the_documents_view_lists_its_facts(stack: LocalStack, report: str) -> None:
    with grpc.insecure_channel(stack.config.addr("ingester")) as channel:
        shown = ingester_pb2_grpc.IngesterServiceStub(channel).GetDocument(
            ingester_pb2.IngesterServiceGetDocumentRequest(document_id=report), timeout=30
        )
    rows = {(f.label, f.fiscal_year): f for f in shown.facts}
    sales = rows[("Net sales", 2025)]
    assert (sales.value, sales.scale, sales.concept) == (842.5, 1e6, "revenue")
    assert rows[("Total current liabilities", 2024)].value == 230.4
    assert all(not f.source.startswith("/") for f in shown.facts)  # no server path reaches a client


def test_a_fact_answer_streams_in_the_passage_paths_order_without_the_model(stack: LocalStack, report: str) -> None:
    _ask_once_known(stack, "What were Kestrel Loom Textiles' net sales in 2024?", "760.2")
    with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
        stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
        request = orchestrator_pb2.AskRequest(question="What were Kestrel Loom Textiles' net sales in 2024?")
        events = list(stub.AskStream(request, timeout=300))
        off = stub.Ask(orchestrator_pb2.AskRequest(question=request.question, facts=False), timeout=600)
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "route" and kinds[-1] == "done" and "prompt" not in kinds
    assert kinds.index("token") < kinds.index("citations") < kinds.index("further_reading")
    route = events[0].route
    assert route.route == orchestrator_pb2.ROUTE_LOCAL and route.verdict == "local"
    assert [n.code for n in route.notices] == ["facts_answer"]  # no gate note contradicts the answer
    done = events[-1].done
    assert done.completion_tokens == 0 and done.model_id == "facts"
    # The request can send the same question to the passage path instead (which, with this stack's
    # c = 0.40, finds its passages weak and says so).
    assert off.done.model_id != "facts" and "Formula" not in off.answer and "USD 760.2 million" not in off.answer
