"""The flow's answer check on fake peers: refusal without evidence, the numeric check in the done event,
its metric, and the "replace" policy (streams hold figures back; withheld answers are replaced)."""

from __future__ import annotations

import prometheus_client
from fixtures.fake_peers import FakePeers, OnePageWeb, fake_settings, given_params, local_passage
from weaverbird.v1 import orchestrator_pb2
from weaverbird_orchestrator.domain import AskParams, Route, RouteDecision
from weaverbird_orchestrator.events import CitationsEvent, DoneEvent, FurtherReadingEvent, TokenEvent
from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.numeric_check import INSUFFICIENT
from weaverbird_orchestrator.servicer import OrchestratorServicer

METRIC = "weaverbird_orchestrator_answer_numeric_checks_total"
NOTE = "Larkspur Freight's net revenue was USD 1,284.6 million in fiscal 2024; gross margin was 12.5%."


class _Context:
    """What the servicer uses of a grpc.aio.ServicerContext: the deadline (none) and write()."""

    def __init__(self) -> None:
        self.written: list[orchestrator_pb2.AskEvent] = []

    def time_remaining(self) -> float | None:
        return None

    async def write(self, message: orchestrator_pb2.AskEvent) -> None:
        self.written.append(message)


async def _stream(
    servicer: OrchestratorServicer, request: orchestrator_pb2.AskRequest
) -> list[orchestrator_pb2.AskEvent]:
    context = _Context()
    await servicer.AskStream(request, context)  # type: ignore[arg-type]
    return context.written


def _params(question: str = "What was Larkspur Freight's revenue?", language: str = "en") -> AskParams:
    return given_params(question, language=language)


async def _run(flow: QuestionFlow, params: AskParams | None = None) -> list[object]:
    return [event async for event in flow.ask(params or _params())]


def _count(result: str) -> float:
    return prometheus_client.REGISTRY.get_sample_value(METRIC, {"result": result}) or 0.0


STRONG = [local_passage(1, NOTE, 0.8), local_passage(2, "Headcount was 4,512.", 0.7), local_passage(3, "Other.", 0.6)]
WEAK = [local_passage(1, NOTE, 0.3), local_passage(2, "Headcount was 4,512.", 0.2), local_passage(3, "Other.", 0.1)]


async def test_weak_evidence_with_the_web_off_is_refused_without_a_model_call() -> None:
    peers = FakePeers(WEAK, ["Revenue was USD 9.9 billion [1]."])
    before = _count("refused")
    events = await _run(QuestionFlow(peers, fake_settings()), _params("云杉物流的营业收入是多少？", "zh"))
    assert peers.generated_from == []
    decision = events[0]
    assert isinstance(decision, RouteDecision) and decision.route == Route.WEB
    assert decision.web_status == "not_configured"
    assert [e.text for e in events if isinstance(e, TokenEvent)] == [INSUFFICIENT["zh"]]
    (citations,) = [e for e in events if isinstance(e, CitationsEvent)]
    assert citations.passages == [] and citations.cited == set()
    (further,) = [e for e in events if isinstance(e, FurtherReadingEvent)]
    assert [p.id for p in further.passages] == ["p1", "p2", "p3"]  # every retrieved passage, not K - J
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.answer_check == "refused" and done.generation.finish_reason == "refused"
    assert _count("refused") == before + 1


async def test_refusal_can_be_turned_off() -> None:
    peers = FakePeers(WEAK, ["Revenue was USD 1,284.6 million [1]."])
    events = await _run(QuestionFlow(peers, fake_settings(refuse_without_evidence=False)))
    assert len(peers.generated_from) == 1
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer_check == "supported"


async def test_web_passages_given_to_the_model_mean_no_refusal() -> None:
    peers = FakePeers(WEAK, ["Revenue was USD 1,284.6 million [1]."])
    events = await _run(
        QuestionFlow(peers, fake_settings(), web=OnePageWeb("web-1", "Larkspur results", "https://x.example/r", NOTE))
    )  # type: ignore[arg-type]
    assert events[0].route == Route.WEB and events[0].web_status == "ok"  # type: ignore[attr-defined]
    assert len(peers.generated_from) == 1 and peers.generated_from[0][0].origin == "web"
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer_check == "supported"


async def test_a_local_answer_is_checked_and_the_result_counted() -> None:
    before = {r: _count(r) for r in ("supported", "unsupported", "no_numbers")}
    cases = [
        (["Net revenue was ", "USD 1.28 billion [1]."], "supported", ()),
        (["Revenue was USD 5.1 billion [1]", " and headcount 4,512 [1]."], "unsupported", ("USD 5.1 billion", "4,512")),
        (["Revenue grew in fiscal 2024 [1]."], "no_numbers", ()),
    ]
    for answer, result, unsupported in cases:
        peers = FakePeers(STRONG, answer)
        events = await _run(QuestionFlow(peers, fake_settings()))
        assert events[0].route == Route.LOCAL  # type: ignore[attr-defined]
        streamed = "".join(e.text for e in events if isinstance(e, TokenEvent))
        # Default policy "replace": an unsupported answer stops before its first figure.
        assert streamed == ("Revenue was " if result == "unsupported" else "".join(answer))
        done = events[-1]
        assert isinstance(done, DoneEvent)
        assert (done.answer_check, done.unsupported_numbers) == (result, unsupported)
        assert done.answer_cites_passages
        assert done.replacement == (INSUFFICIENT["en"] if result == "unsupported" else "")  # default: replace
    assert {r: _count(r) - before[r] for r in before} == {"supported": 1, "unsupported": 1, "no_numbers": 1}


async def test_an_answer_citing_nothing_is_checked_against_all_passages_given() -> None:
    peers = FakePeers(STRONG, ["Revenue was USD 1,284.6 million and headcount 4,512."])
    done = (await _run(QuestionFlow(peers, fake_settings())))[-1]
    assert isinstance(done, DoneEvent)
    assert done.answer_check == "supported" and not done.answer_cites_passages
    # Passage 3 was retrieved but not given to the model (J = 2): its figures support nothing.
    peers = FakePeers([*STRONG[:2], local_passage(3, "Capex was 88.8 million.", 0.6)], ["Capex was 88.8 million."])
    done = (await _run(QuestionFlow(peers, fake_settings())))[-1]
    assert isinstance(done, DoneEvent) and done.unsupported_numbers == ("88.8 million",)


async def test_a_name_question_answered_by_restating_it_is_withheld() -> None:
    question = "What was the largest liability in Larkspur Freight's balance sheet in 2024?"
    request = orchestrator_pb2.AskRequest(question=question, top_k=3, top_j=2, threshold=0.5)
    echo = ["The largest liability in Larkspur Freight's balance sheet in 2024 was ", "USD 1,284.6 million [1]."]
    events = await _stream(OrchestratorServicer(QuestionFlow(FakePeers(STRONG, echo), fake_settings())), request)
    done = events[-1].done
    # Its figure is in the passage (supported), yet it names nothing: the figure is never streamed.
    assert done.answer_check == orchestrator_pb2.ANSWER_CHECK_SUPPORTED
    assert "".join(e.token for e in events) == echo[0]
    assert (done.replacement_answer, done.replacement_reason) == (INSUFFICIENT["en"], "names_nothing")

    named = ["Freight payables, USD 1,284.6 million [1], were the largest liability."]
    events = await _stream(OrchestratorServicer(QuestionFlow(FakePeers(STRONG, named), fake_settings())), request)
    assert "".join(e.token for e in events) == named[0] and not events[-1].done.replacement_answer

    warn = fake_settings(numeric_check_policy="warn")  # "warn" streams every answer as written
    events = await _stream(OrchestratorServicer(QuestionFlow(FakePeers(STRONG, echo), warn)), request)
    assert "".join(e.token for e in events) == "".join(echo) and not events[-1].done.replacement_answer


async def test_an_answer_listing_only_markers_is_withheld() -> None:
    request = orchestrator_pb2.AskRequest(
        question="Who are Larkspur Freight's main customers?", top_k=3, top_j=2, threshold=0.5
    )
    empty = ["Larkspur Freight's main customers are the following: ", "[1] [2]."]
    events = await _stream(OrchestratorServicer(QuestionFlow(FakePeers(STRONG, empty), fake_settings())), request)
    assert (events[-1].done.replacement_answer, events[-1].done.replacement_reason) == (
        INSUFFICIENT["en"],
        "lists_nothing",
    )
    named = ["Larkspur Freight's main customers are grocers and airlines [1]."]
    events = await _stream(OrchestratorServicer(QuestionFlow(FakePeers(STRONG, named), fake_settings())), request)
    assert not events[-1].done.replacement_answer


async def test_the_done_proto_carries_the_check_and_replace_withholds_the_unary_answer() -> None:
    request = orchestrator_pb2.AskRequest(
        question="What was Larkspur Freight's revenue?", top_k=3, top_j=2, threshold=0.5
    )
    answer = ["Revenue was USD 5.1 billion [1]."]

    warn = OrchestratorServicer(QuestionFlow(FakePeers(STRONG, answer), fake_settings(numeric_check_policy="warn")))
    events = await _stream(warn, request)
    done = events[-1].done
    assert done.answer_check == orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED
    assert list(done.unsupported_numbers) == ["USD 5.1 billion"] and done.answer_cites_passages
    assert "".join(e.token for e in events) == answer[0] and not done.replacement_answer  # streamed as written
    reply = await warn.Ask(request, _Context())  # type: ignore[arg-type]
    assert reply.answer == answer[0] and not reply.answer_replaced
    assert reply.answer_check == orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED

    replace = OrchestratorServicer(QuestionFlow(FakePeers(STRONG, answer), fake_settings()))  # the default
    events = await _stream(replace, request)
    assert "".join(e.token for e in events) == "Revenue was "  # the figure never reached the client
    assert events[-1].done.replacement_answer == INSUFFICIENT["en"]
    assert events[-1].done.replacement_reason == "unsupported_figures"
    reply = await replace.Ask(request, _Context())  # type: ignore[arg-type]
    assert reply.answer == INSUFFICIENT["en"] and reply.answer_replaced
    assert list(reply.unsupported_numbers) == ["USD 5.1 billion"]
    assert reply.citations[0].cited_in_answer  # the citations still describe the withheld answer

    supported = OrchestratorServicer(
        QuestionFlow(
            FakePeers(STRONG, ["It was USD 1,284.6 million [1]."]), fake_settings(numeric_check_policy="replace")
        )
    )
    reply = await supported.Ask(request, _Context())  # type: ignore[arg-type]
    assert reply.answer == "It was USD 1,284.6 million [1]." and not reply.answer_replaced
    assert reply.answer_check == orchestrator_pb2.ANSWER_CHECK_SUPPORTED


async def test_a_refused_unary_answer_lists_every_passage_as_further_reading() -> None:
    servicer = OrchestratorServicer(QuestionFlow(FakePeers(WEAK, ["x"]), fake_settings()))
    request = orchestrator_pb2.AskRequest(
        question="What was Larkspur Freight's revenue?", top_k=3, top_j=2, threshold=0.5
    )
    reply = await servicer.Ask(request, _Context())  # type: ignore[arg-type]
    assert reply.answer == INSUFFICIENT["en"]
    assert reply.answer_check == orchestrator_pb2.ANSWER_CHECK_REFUSED
    assert list(reply.citations) == [] and [c.number for c in reply.further_reading] == [1, 2, 3]


async def test_the_prompt_size_is_streamed_before_the_first_token_and_cached_tokens_at_the_end() -> None:
    peers = FakePeers(STRONG, ["Revenue was USD 1,284.6 million [1]."])
    servicer = OrchestratorServicer(QuestionFlow(peers, fake_settings()))
    kinds: list[str] = []
    last: orchestrator_pb2.AskEvent | None = None
    request = orchestrator_pb2.AskRequest(question=_params().question, top_k=3, top_j=2, threshold=0.5)
    for proto in await _stream(servicer, request):
        kinds.append(proto.WhichOneof("event"))
        if kinds[-1] == "prompt":
            assert proto.prompt.prompt_tokens == 90 and list(proto.prompt.passages_used) == [1, 2]
        last = proto
    assert kinds[:3] == ["route", "prompt", "token"]
    assert last is not None and last.done.cached_tokens == 60


async def test_a_right_figure_citing_the_wrong_passage_streams_with_the_citation_re_pointed() -> None:
    peers = FakePeers(STRONG, ["Revenue was ", "USD 1,284.6 million ", "[2]", "."])
    events = await _run(QuestionFlow(peers, fake_settings()))
    streamed = "".join(e.text for e in events if isinstance(e, TokenEvent))
    assert streamed == "Revenue was USD 1,284.6 million [1]."
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer_check == "supported" and not done.replacement
    citations = next(e for e in events if isinstance(e, CitationsEvent))
    assert citations.cited == {1}


async def test_a_difference_the_model_left_undone_is_computed_before_the_answer_is_released() -> None:
    passages = [local_passage(1, "Revenue was USD 1,284.6 million in 2024 and USD 1,100.2 million in 2023.", 0.8)]
    # One piece per character, as a model streams: the guard may show "USD " before the check.
    answer = list("Revenue rose by USD 1,284.6 million - USD 1,100.2 million [1].")
    request = orchestrator_pb2.AskRequest(
        question="By how much did Larkspur Freight's revenue rise?", top_k=3, threshold=0.5
    )
    events = await _stream(OrchestratorServicer(QuestionFlow(FakePeers(passages, answer), fake_settings())), request)
    streamed = "".join(e.token for e in events)
    assert streamed == "Revenue rose by USD 1,284.6 million - USD 1,100.2 million = USD 184.4 million [1]."
    assert not events[-1].done.replacement_answer
    assert events[-1].done.answer_check == orchestrator_pb2.ANSWER_CHECK_SUPPORTED


async def test_a_figure_copied_bare_from_a_table_is_shown_with_the_table_s_scale() -> None:
    statement = "STATEMENTS OF CASH FLOWS (in millions)\nNet cash provided by operating activities\n1,824\n3,252"
    answer = list("Operating activities brought in $1,824 [1].")  # the guard shows "$" before the digits
    request = orchestrator_pb2.AskRequest(
        question="How much cash did Larkspur Freight's operations bring in?", top_k=3, threshold=0.5
    )
    peers = FakePeers([local_passage(1, statement, 0.8)], answer)
    events = await _stream(OrchestratorServicer(QuestionFlow(peers, fake_settings())), request)
    assert "".join(e.token for e in events) == "Operating activities brought in $1,824 million [1]."
    assert not events[-1].done.replacement_answer
