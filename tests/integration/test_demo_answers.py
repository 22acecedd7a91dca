"""README's two demo questions through the whole stack with the default model (Qwen2.5-1.5B on llama.cpp):
the right figure, cited from the right note. `make test` installs the model (`make models`) first."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from weaverbird.v1 import common_pb2, orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_cli.stack import LocalStack

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
DEMO = [
    # (question, figure the answer must state, note it must cite)
    ("What was Northwind Robotics' revenue in fiscal 2024?", "1,284.6", "en-northwind-robotics-fy2024.md"),
    ("青松新能源2024年的营业收入是多少？", "86.47", "zh-qingsong-new-energy-2024.md"),
]


@pytest.mark.parametrize(("question", "figure", "note"), DEMO)
def test_demo_question_answers_with_the_right_figure_and_citation(
    default_stack: LocalStack, question: str, figure: str, note: str
) -> None:
    with grpc.insecure_channel(default_stack.config.addr("orchestrator")) as channel:
        stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
        reply = stub.Ask(orchestrator_pb2.AskRequest(question=question), timeout=600)
    assert reply.route.route == orchestrator_pb2.ROUTE_LOCAL
    assert figure in reply.answer, reply.answer
    cited = [c for c in reply.citations if c.cited_in_answer]
    assert cited and all(c.source.endswith(note) for c in cited), [(c.number, c.source) for c in cited]
    assert figure in " ".join(c.text for c in cited)  # the figure comes from the passage it cites
    assert reply.answer_check == orchestrator_pb2.ANSWER_CHECK_SUPPORTED
    assert not reply.unsupported_numbers


def test_a_prior_year_held_by_the_next_years_filing_is_answered_with_its_figure(default_stack: LocalStack) -> None:
    # No document is dated fiscal 2023, but the FY2024 report states 2023 as its comparative (issue 33).
    question = "What was Northwind Robotics' revenue in fiscal 2023?"
    with grpc.insecure_channel(default_stack.config.addr("orchestrator")) as channel:
        stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
        first = stub.Ask(orchestrator_pb2.AskRequest(question=question), timeout=600)
        history = [
            common_pb2.Turn(role="user", text="What was Northwind Robotics' revenue in fiscal 2024?"),
            common_pb2.Turn(role="assistant", text="Revenue was USD 1,284.6 million in fiscal 2024 [1]."),
        ]
        follow_up = stub.Ask(orchestrator_pb2.AskRequest(question="and in 2023?", history=history), timeout=600)
    for reply in (first, follow_up):
        assert reply.route.route == orchestrator_pb2.ROUTE_LOCAL, reply.route.note
        assert "1,102.9" in reply.answer, reply.answer
        cited = [c for c in reply.citations if c.cited_in_answer]
        assert cited and any("1,102.9" in c.text for c in cited), [(c.number, c.source) for c in cited]
