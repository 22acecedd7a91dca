"""End to end over gRPC: questions in English and Chinese against the demo KB on the real stack."""

from __future__ import annotations

import grpc
import pytest
from weaverbird.v1 import common_pb2, orchestrator_pb2, orchestrator_pb2_grpc

pytestmark = pytest.mark.integration

Stub = orchestrator_pb2_grpc.OrchestratorServiceStub


def _events(stub: Stub, **fields: object) -> list[orchestrator_pb2.AskEvent]:
    # The passage path's contract: facts off, or Northwind's revenue is computed from its table without
    # the model (that path's contract: test_fact_answers.py).
    fields.setdefault("facts", False)
    return list(stub.AskStream(orchestrator_pb2.AskRequest(**fields), timeout=300))


def _kinds(events: list[orchestrator_pb2.AskEvent]) -> list[str]:
    return [e.WhichOneof("event") for e in events]


@pytest.mark.parametrize(
    ("question", "expected_file"),
    [
        ("What was Northwind Robotics' revenue in fiscal 2024?", "en-northwind-robotics-fy2024.md"),
        (
            "What was Harbor Bay Bank's net interest margin in the third quarter of 2024?",
            "en-harbor-bay-bank-q3-2024.md",
        ),
        ("青松新能源2024年的营业收入是多少？", "zh-qingsong-new-energy-2024.md"),
        ("华岳银行2024年第三季度的不良贷款率是多少？", "zh-huayue-bank-q3-2024.md"),
    ],
)
def test_stream_routes_local_and_cites_the_right_note(orchestrator: Stub, question: str, expected_file: str) -> None:
    events = _events(orchestrator, question=question)
    kinds = _kinds(events)
    # Contract: route first, then tokens, citations, further reading, and done last.
    assert kinds[0] == "route" and kinds[-1] == "done"
    assert kinds.index("citations") > kinds.index("token") if "token" in kinds else True
    if "token" in kinds:  # the model was asked: its prompt's size comes before its first token
        assert kinds[1] == "prompt" and events[1].prompt.prompt_tokens > 0
    assert kinds.count("citations") == 1 and kinds.count("further_reading") == 1

    route = events[0].route
    assert route.route == orchestrator_pb2.ROUTE_LOCAL, route
    assert route.best_local_score >= route.threshold
    assert route.web_status == "not_needed"
    assert route.timings.embed_ms > 0 and route.timings.local_search_ms > 0

    citations = next(e.citations.citations for e in events if e.HasField("citations"))
    assert len(citations) == route.top_j
    assert citations[0].number == 1
    assert citations[0].source.endswith(expected_file), [c.source for c in citations]
    assert citations[0].origin == common_pb2.ORIGIN_LOCAL
    # best_local_score is the highest cosine among the retrieved passages; hybrid ranking orders them
    # by fused rank, so it need not be the first one's.
    further_scores = [f.score for e in events if e.HasField("further_reading") for f in e.further_reading.passages]
    assert max([c.score for c in citations] + further_scores) == pytest.approx(route.best_local_score, abs=1e-5)

    further = next(e.further_reading.passages for e in events if e.HasField("further_reading"))
    assert len(further) == route.top_k - route.top_j
    assert [f.number for f in further] == list(range(route.top_j + 1, route.top_k + 1))

    answer = "".join(e.token for e in events if e.HasField("token"))
    assert answer.strip(), "the model produced no text"
    done = events[-1].done
    assert done.completion_tokens > 0 and done.model_id.startswith("llama.cpp:")
    # The numeric check ran on the answer (its outcome depends on what the small model wrote).
    assert done.answer_check in (
        orchestrator_pb2.ANSWER_CHECK_SUPPORTED,
        orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED,
        orchestrator_pb2.ANSWER_CHECK_NO_NUMBERS,
    )
    assert (done.answer_check == orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED) == bool(done.unsupported_numbers)
    assert done.timings.total_ms >= done.timings.generate_ms > 0


def test_per_request_k_j_c_override_and_weak_evidence_is_reported(orchestrator: Stub) -> None:
    # With c above any achievable cosine the gate sends the question to the web; the local search
    # server knows no results for it, so only weak local passages remain: the orchestrator says the
    # information is insufficient without asking the model, and the route event says why.
    events = _events(
        orchestrator, question="What was Northwind Robotics' revenue in fiscal 2024?", top_k=4, top_j=2, threshold=0.999
    )
    route = events[0].route
    assert (route.top_k, route.top_j) == (4, 2)
    assert route.threshold == pytest.approx(0.999)
    assert route.route == orchestrator_pb2.ROUTE_WEB
    assert route.web_status == "no search results"
    assert "weak" in route.note and "web search failed" in route.note
    assert "".join(e.token for e in events if e.HasField("token")) == (
        "The provided information is insufficient to answer this question."
    )
    citations = next(e.citations.citations for e in events if e.HasField("citations"))
    assert len(citations) == 0  # nothing went to the model
    further = next(e.further_reading.passages for e in events if e.HasField("further_reading"))
    assert [f.number for f in further] == [1, 2, 3, 4]  # every retrieved passage is offered to read
    done = events[-1].done
    assert done.answer_check == orchestrator_pb2.ANSWER_CHECK_REFUSED and done.completion_tokens == 0


def test_unary_ask_collects_the_stream(orchestrator: Stub) -> None:
    request = orchestrator_pb2.AskRequest(question="华岳银行2024年第三季度的净息差是多少？")
    reply = orchestrator.Ask(request, timeout=300)
    assert reply.answer.strip()
    assert reply.route.route == orchestrator_pb2.ROUTE_LOCAL
    # Year and quarter named in the question become a payload filter, which rules out the concept note.
    assert (reply.route.filter.year, reply.route.filter.quarter) == (2024, 3)
    assert reply.citations[0].source.endswith("zh-huayue-bank-q3-2024.md")
    assert reply.done.finish_reason


def test_retrieve_runs_without_generation(orchestrator: Stub) -> None:
    reply = orchestrator.Retrieve(
        orchestrator_pb2.AskRequest(question="How is free cash flow calculated?", top_k=3), timeout=30
    )
    assert len(reply.passages) == 3
    assert reply.passages[0].source.endswith("en-free-cash-flow.md")
    # Passages come in the retriever's (hybrid) order; the route reports the best cosine among them.
    assert max(p.score for p in reply.passages) == pytest.approx(reply.route.best_local_score, abs=1e-5)
    assert reply.route.timings.generate_ms == 0


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"question": "   "}, "must not be empty"),
        ({"question": "x" * 5000}, "limit"),
        ({"question": "revenue?", "top_k": 500}, "top_k"),
        ({"question": "revenue?", "top_k": 3, "top_j": 4}, "top_j"),
        ({"question": "revenue?", "threshold": 1.5}, "threshold"),
    ],
)
def test_bad_requests_get_invalid_argument(orchestrator: Stub, fields: dict[str, object], fragment: str) -> None:
    with pytest.raises(grpc.RpcError) as info:
        orchestrator.Ask(orchestrator_pb2.AskRequest(**fields), timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in info.value.details()
    assert "Traceback" not in info.value.details()
