"""Tasks beyond one lookup on the real stack (SmolLM2, demo KB): the mechanics of each task's response
shape, whatever the small model writes. What the default model achieves is measured in README."""

from __future__ import annotations

import json

import grpc
import pytest
from weaverbird.v1 import common_pb2, orchestrator_pb2, orchestrator_pb2_grpc

pytestmark = pytest.mark.integration

Stub = orchestrator_pb2_grpc.OrchestratorServiceStub
REVENUE = "What was Northwind Robotics' revenue in fiscal 2024?"


def _events(stub: Stub, **fields: object) -> list[orchestrator_pb2.AskEvent]:
    return list(stub.AskStream(orchestrator_pb2.AskRequest(**fields), timeout=600))


def _stages(events: list[orchestrator_pb2.AskEvent]) -> list[str]:
    return [e.stage.stage for e in events if e.HasField("stage")]


def test_a_follow_up_is_rewritten_with_the_company_and_year_of_the_conversation(orchestrator: Stub) -> None:
    history = [
        common_pb2.Turn(role="user", text=REVENUE),
        common_pb2.Turn(role="assistant", text="Revenue was USD 1,284.6 million [1]."),
    ]
    events = _events(orchestrator, question="And its net income?", history=history)
    route = events[0].route
    assert "Northwind Robotics" in route.standalone_question, route.standalone_question
    assert "2024" in route.standalone_question
    assert route.filter.company == "NORTHWIND_ROBOTICS"
    citations = next(e.citations.citations for e in events if e.HasField("citations"))
    assert citations and citations[0].source.endswith("en-northwind-robotics-fy2024.md")
    # Without the history the same words name no company: nothing is carried over.
    alone = _events(orchestrator, question="And its net income?")[0].route
    assert alone.standalone_question == "" and not alone.filter.company


def test_a_calculation_reports_its_stage_and_either_a_verified_calculation_or_a_checked_answer(
    orchestrator: Stub,
) -> None:
    question = "How much did Northwind Robotics' revenue grow from fiscal 2023 to fiscal 2024, in USD million?"
    events = _events(orchestrator, question=question, task=common_pb2.TASK_CALCULATION)
    route, done = events[0].route, events[-1].done
    assert route.task == common_pb2.TASK_CALCULATION and route.task_decided_by == "request"
    assert "compute" in _stages(events)
    assert done.task == common_pb2.TASK_CALCULATION
    citations = next(e.citations.citations for e in events if e.HasField("citations"))
    if done.HasField("calculation"):
        # Every figure the code used was found in the passage it names.
        calc = done.calculation
        assert calc.figures and calc.formula
        for figure in calc.figures:
            assert 1 <= figure.passage <= len(citations)
            assert citations[figure.passage - 1].cited_in_answer
        assert done.answer_check == orchestrator_pb2.ANSWER_CHECK_SUPPORTED
    else:
        # The step failed (the small model's output did not verify): a plain, checked answer instead.
        stage = next(e.stage for e in events if e.HasField("stage"))
        assert not stage.passed and stage.detail


def test_an_extraction_is_never_returned_as_valid_unless_it_has_the_keys(orchestrator: Stub) -> None:
    response = orchestrator.Ask(
        orchestrator_pb2.AskRequest(
            question="Extract Northwind Robotics' FY2024 revenue and net income as JSON.",
            task=common_pb2.TASK_EXTRACTION,
            json_keys=["revenue", "net_income"],
        ),
        timeout=600,
    )
    assert response.task == common_pb2.TASK_EXTRACTION
    assert [s.stage for s in response.stages] == ["extract"]
    structured = response.structured
    assert list(structured.keys) == ["revenue", "net_income"]
    if structured.valid:
        value = json.loads(structured.json)
        assert {"revenue", "net_income"} <= set(value)
        assert not structured.missing_keys and not structured.errors
    else:
        assert structured.errors, "an invalid extraction says why"
        assert response.answer != structured.json


def test_an_analysis_streams_its_stages_within_the_round_limit(orchestrator: Stub) -> None:
    question = "Analyse Northwind Robotics' 2024 revenue by segment and show it as a pie chart."
    events = _events(orchestrator, question=question, task=common_pb2.TASK_ANALYSIS, max_rounds=1)
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "route" and kinds[-1] == "done"
    stages = [e.stage for e in events if e.HasField("stage")]
    names = [s.stage for s in stages]
    assert "express" in names and names[-1] == "chart"
    assert max(s.round for s in stages) <= 1
    assert all(s.ms >= 0 for s in stages)
    # Stages come before the answer text.
    assert kinds.index("stage") < kinds.index("token")
    done = events[-1].done
    assert done.task == common_pb2.TASK_ANALYSIS
    if done.HasField("chart"):
        for series in done.chart.series:
            assert len(series.values) == len(done.chart.categories)


def test_bad_task_fields_are_invalid_argument(orchestrator: Stub) -> None:
    bad = [
        {"task": 99},
        {"max_rounds": 9},
        {"history": [common_pb2.Turn(role="system", text="hi")]},
        {"json_keys": [""]},
    ]
    for fields in bad:
        with pytest.raises(grpc.RpcError) as err:
            orchestrator.Ask(orchestrator_pb2.AskRequest(question=REVENUE, **fields), timeout=30)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, fields
