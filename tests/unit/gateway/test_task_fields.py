"""The HTTP side of issue 15's fields: the ask body's history, task, JSON keys and rounds reach the orchestrator
as proto fields; stage events and the done event's task, calculation, JSON and chart reach the client as
Server-Sent Events; the OpenAPI document describes all of them.

The app runs in-process (Starlette's TestClient) against a scripted OrchestratorService on 127.0.0.1: a real
gRPC server streaming fixed AskEvents, the edge of the gateway under test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fixtures.scripted_orchestrator import ScriptedOrchestrator, answer_events, scripted_calculation, scripted_route
from weaverbird.v1 import common_pb2, orchestrator_pb2
from weaverbird_gateway import convert, schemas
from weaverbird_gateway.app import create_app
from weaverbird_gateway.settings import GatewaySettings

CHART = orchestrator_pb2.ChartSpec(
    type="bar",
    title="Revenue",
    categories=["2022", "2023"],
    series=[orchestrator_pb2.ChartSeries(name="revenue", values=[1100.0, 1284.6], passages=[1, 2])],
    x_label="year",
    y_label="revenue",
    unit="USD million",
)
CALCULATION = scripted_calculation(
    [("revenue 2023", 1284.6, "1,284.6"), ("revenue 2022", 1100.0, "1,100.0")],
    "revenue 2023 - revenue 2022",
    (184.6, "USD million", "USD 184.6 million"),
)


def analysis_script(request: orchestrator_pb2.AskRequest) -> list[orchestrator_pb2.AskEvent]:
    route = scripted_route(
        standalone_question=f"standalone: {request.question}",
        task=common_pb2.TASK_ANALYSIS,
        task_decided_by="rules",
        route_reason="covered",
    )
    stages = [
        orchestrator_pb2.StageEvent(stage="plan", round=1, ms=41.5, sub_questions=["revenue 2022?", "revenue 2023?"]),
        orchestrator_pb2.StageEvent(stage="review", round=1, ms=12.0, detail="numbers not supported", passed=False),
    ]
    done = orchestrator_pb2.AnswerDone(
        finish_reason="stop",
        task=common_pb2.TASK_ANALYSIS,
        calculation=CALCULATION,
        structured=orchestrator_pb2.StructuredAnswer(json='{"a": 1}', valid=False, missing_keys=["b"], keys=["a", "b"]),
        chart=CHART,
    )
    return answer_events("Revenue rose [1].", route=route, stages=stages, done=done)


@pytest.fixture(scope="module")
def orchestrator() -> Iterator[ScriptedOrchestrator]:
    with ScriptedOrchestrator(analysis_script) as served:
        yield served


@pytest.fixture(scope="module")
def client(orchestrator: ScriptedOrchestrator) -> Iterator[TestClient]:
    # The ingester is never called here; its address only has to be well formed.
    settings = GatewaySettings(orchestrator_addr=orchestrator.addr, ingester_addr="127.0.0.1:9")
    # TestClient's default host, "testserver", is not one the gateway serves (GATEWAY_ALLOWED_HOSTS).
    with TestClient(create_app(settings), base_url="http://localhost") as http:
        yield http


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_the_ask_body_becomes_history_task_keys_and_rounds() -> None:
    body = schemas.AskBody.model_validate(
        {
            "question": "and in 2023?",
            "history": [
                {"role": "user", "text": "What was revenue in 2022?"},
                {"role": "assistant", "text": "USD 1,100 million [1]."},
            ],
            "task": "extraction",
            "json_keys": ["name", "share %"],
            "max_rounds": 0,
        }
    )
    request = convert.ask_request(body)
    assert [(t.role, t.text) for t in request.history] == [
        ("user", "What was revenue in 2022?"),
        ("assistant", "USD 1,100 million [1]."),
    ]
    assert request.task == common_pb2.TASK_EXTRACTION
    assert list(request.json_keys) == ["name", "share %"]
    assert request.HasField("max_rounds") and request.max_rounds == 0  # 0 = one pass, not "default"


def test_fields_not_sent_stay_unset_so_the_deployment_decides() -> None:
    request = convert.ask_request(schemas.AskBody(question="q"))
    assert not request.HasField("max_rounds")
    assert request.task == common_pb2.TASK_UNSPECIFIED and not request.history and not request.json_keys


@pytest.mark.parametrize(
    "extra",
    [
        {"history": [{"role": "system", "text": "you are ..."}]},
        {"history": [{"role": "user", "text": ""}]},
        {"history": [{"role": "user"}]},
        {"task": "poem"},
        {"max_rounds": 2**31},
        {"json_keys": "name,share"},
    ],
)
def test_malformed_new_fields_are_a_422_before_any_call(
    client: TestClient, orchestrator: ScriptedOrchestrator, extra: dict[str, Any]
) -> None:
    before = len(orchestrator.requests)
    response = client.post("/api/ask", json={"question": "q", **extra})
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "INVALID_ARGUMENT"
    assert len(orchestrator.requests) == before


def test_the_stream_carries_stages_and_the_tasks_parts(client: TestClient, orchestrator: ScriptedOrchestrator) -> None:
    history = [{"role": "user", "text": "revenue 2022?"}, {"role": "assistant", "text": "USD 1,100 million."}]
    response = client.post("/api/ask", json={"question": "and 2023?", "history": history, "task": "analysis"})
    assert response.status_code == 200, response.text
    sent = orchestrator.requests[-1]
    assert sent.question == "and 2023?" and sent.task == common_pb2.TASK_ANALYSIS
    assert [(t.role, t.text) for t in sent.history] == [(h["role"], h["text"]) for h in history]

    events = sse(response.text)
    names = [name for name, _ in events]
    assert names[:3] == ["route", "stage", "stage"] and names[-1] == "done", names
    route = events[0][1]
    assert route["standalone_question"] == "standalone: and 2023?"
    assert (route["task"], route["task_decided_by"]) == ("analysis", "rules")
    assert route["route_reason"] == "covered"
    plan, review = events[1][1], events[2][1]
    assert plan["stage"] == "plan" and plan["sub_questions"] == ["revenue 2022?", "revenue 2023?"]
    assert plan["ms"] == 41.5 and plan["round"] == 1
    assert review["passed"] is False and review["detail"] == "numbers not supported"

    done = events[-1][1]
    assert done["task"] == "analysis"
    assert done["calculation"]["result"] == pytest.approx(184.6)
    assert [f["passage"] for f in done["calculation"]["figures"]] == [1, 2]
    assert done["structured"] == {
        "json": '{"a": 1}',
        "valid": False,
        "missing_keys": ["b"],
        "errors": [],
        "repaired": False,
        "keys": ["a", "b"],
    }
    chart = done["chart"]
    assert chart["type"] == "bar" and chart["categories"] == ["2022", "2023"]
    assert chart["series"] == [{"name": "revenue", "values": [1100.0, 1284.6], "passages": [1, 2]}]
    assert (chart["x_label"], chart["y_label"], chart["unit"]) == ("year", "revenue", "USD million")


def test_a_plain_answer_has_null_task_parts_not_empty_objects() -> None:
    done = convert.done(orchestrator_pb2.AnswerDone(finish_reason="stop", task=common_pb2.TASK_LOOKUP))
    payload = done.model_dump()
    assert payload["task"] == "lookup"
    assert payload["calculation"] is None and payload["structured"] is None and payload["chart"] is None
    assert convert.done(orchestrator_pb2.AnswerDone()).task == "unspecified"


def test_openapi_describes_the_new_request_fields_and_every_stream_event(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    components = spec["components"]["schemas"]
    ask_body = components["AskBody"]["properties"]
    assert {"history", "task", "json_keys", "max_rounds"} <= ask_body.keys()
    assert components["Turn"]["properties"]["role"]["enum"] == ["user", "assistant"]
    for name in ("RouteInfo", "PromptInfo", "StageInfo", "TokenEvent", "CitationsEvent", "DoneInfo", "ErrorBody"):
        assert name in components, name
    assert {"standalone_question", "task", "task_decided_by", "route_reason"} <= components["RouteInfo"][
        "properties"
    ].keys()
    assert {"calculation", "structured", "chart"} <= components["DoneInfo"]["properties"].keys()
    assert "json" in components["StructuredInfo"]["properties"]  # the wire name, not the Python one
    for name in ("ChartInfo", "ChartSeriesInfo", "CalculationInfo", "FigureInfo"):
        assert name in components, name
    stream = spec["paths"]["/api/ask"]["post"]["responses"]["200"]
    assert "`stage`" in stream["description"] and "text/event-stream" in stream["content"]
