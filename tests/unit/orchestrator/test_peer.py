"""The PEER loop's logic (tasks/peer.py, peer_plan.py, review_criteria.py) with a scripted generator: a
test of the loop's control flow and criteria, not of any model. The generator replays fixed texts per task;
`retrieve` returns fixed Retrieval objects per query."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

import pytest
from weaverbird_orchestrator.domain import (
    GenerationDone,
    Passage,
    PromptPrepared,
    Retrieval,
    Route,
    RouteDecision,
    Stage,
)
from weaverbird_orchestrator.numeric_check import INSUFFICIENT, check_answer
from weaverbird_orchestrator.tasks.peer import (
    PeerBudget,
    PeerOutcome,
    express_question,
    has_evidence,
    merge,
    model_verdict,
    run_peer,
)
from weaverbird_orchestrator.tasks.peer_plan import needs_plan, parse_plan
from weaverbird_orchestrator.tasks.review_criteria import (
    ANSWERED,
    CITED,
    SUPPORTED,
    cite_figures,
    is_claim,
    passage_sources,
    refused,
    review,
    sentences,
    uncovered,
)

QUESTION = "Did Larkspur Freight's operating margin improve between fiscal 2023 and fiscal 2024?"
SUB_2024 = "What was Larkspur Freight's operating margin in fiscal 2024?"
SUB_2023 = "What was Larkspur Freight's operating margin in fiscal 2023?"
SIMPLE = "What was Larkspur Freight's revenue in fiscal 2024?"
GOOD = "Operating margin rose from 9.1% in fiscal 2023 [2] to 11.4% in fiscal 2024 [1]."
UNCITED = "Operating margin went up in fiscal 2024."
WIDE = PeerBudget(max_completion_tokens=100_000, max_seconds=10_000.0)


def _p(pid: str, text: str, origin: str = "local") -> Passage:
    return Passage(pid, text, 0.8, f"doc-{pid}", f"Larkspur {pid}", "larkspur.pdf", 3, origin)


M2024 = _p("m24", "Operating margin was 11.4% in fiscal 2024.")
M2023 = _p("m23", "Operating margin was 9.1% in fiscal 2023, down from 9.8%.")
REVENUE = _p("rev", "Revenue was USD 1,284.6 million in fiscal 2024.")
OTHER = _p("oth", "The company operates forty depots.")


def _retrieval(passages: Sequence[Passage], route: Route = Route.LOCAL, top_j: int = 3) -> Retrieval:
    decision = RouteDecision(route, 0.71, 0.5, 5, top_j, "not_needed", "", {})
    return Retrieval(decision, list(passages))


@dataclass
class Call:
    task: str
    question: str
    passages: list[Passage]
    instruction: str
    max_tokens: int


class ScriptedGenerator:
    """Replays `script[task]` in order (the last text repeats), `tokens` completion tokens per call."""

    def __init__(self, script: dict[str, list[str]], tokens: int = 50, on_call: Callable[[], None] | None = None):
        self.script = {task: list(texts) for task, texts in script.items()}
        self.tokens = tokens
        self.calls: list[Call] = []
        self.on_call = on_call

    async def generate(
        self,
        question: str,
        passages: list[Passage],
        *args: object,
        task: str = "",
        instruction: str = "",
        **fields: object,
    ) -> AsyncIterator[str | PromptPrepared | GenerationDone]:
        max_tokens = int(args[2])  # (language, temperature, max_tokens) as tasks/llm.Generator passes them
        self.calls.append(Call(task, question, list(passages), instruction, max_tokens))
        if self.on_call:
            self.on_call()
        texts = self.script[task]
        text = texts.pop(0) if len(texts) > 1 else texts[0]
        yield PromptPrepared(10, 5, 5, ())
        for piece in re.split(r"(?<= )", text):
            yield piece
        yield GenerationDone("stop", 100, self.tokens, "scripted")

    def tasks(self) -> list[str]:
        return [c.task for c in self.calls]


class FakeRetrieve:
    def __init__(self, by_query: dict[str, Retrieval], default: Retrieval | None = None) -> None:
        self.by_query = by_query
        self.default = default or _retrieval([OTHER])
        self.asked: list[str] = []

    async def __call__(self, query: str) -> Retrieval:
        self.asked.append(query)
        return self.by_query.get(query, self.default)


async def _run(
    question: str, generator: ScriptedGenerator, retrieve: FakeRetrieve, *, language: str = "en", **options: object
) -> tuple[list[Stage], PeerOutcome]:
    """run_peer's stages and its outcome, which must come once and last. `options` are run_peer's: two rounds
    and the WIDE budget unless given."""
    options = {"max_rounds": 2, "budget": WIDE} | options
    peer = run_peer(question, language, retrieve=retrieve, generator=generator, **options)  # type: ignore[arg-type]
    items = [item async for item in peer]
    assert items, "an outcome"
    *before, outcome = items
    assert isinstance(outcome, PeerOutcome), "the outcome comes last"
    stages = [item for item in before if isinstance(item, Stage)]
    assert stages == before, "one outcome, and only stages before it"
    return stages, outcome


def _margin_retrieve() -> FakeRetrieve:
    return FakeRetrieve(
        {
            QUESTION: _retrieval([M2024, OTHER]),
            SUB_2024: _retrieval([M2024, REVENUE]),
            SUB_2023: _retrieval([M2023, M2024]),
        }
    )


# --- the loop -----------------------------------------------------------------------------------


async def test_an_analytical_question_is_planned_executed_expressed_and_reviewed_in_order() -> None:
    plan = f"1. {SUB_2024}\n2) {SUB_2023}\nSub-questions:\n- {SUB_2024}"
    answer = "Operating margin rose from 9.1% in fiscal 2023 [4] to 11.4% in fiscal 2024 [1]."
    generator = ScriptedGenerator({"plan": [plan], "answer": [answer]})
    retrieve = _margin_retrieve()
    stages, outcome = await _run(QUESTION, generator, retrieve)

    assert [s.stage for s in stages] == ["plan", "execute", "execute", "execute", "express", "review"]
    assert stages[0].sub_questions == (SUB_2024, SUB_2023)  # numbering stripped, header and repeat dropped
    assert [s.sub_questions for s in stages[1:4]] == [(QUESTION,), (SUB_2024,), (SUB_2023,)]
    assert retrieve.asked == [QUESTION, SUB_2024, SUB_2023]
    # Merged: duplicates dropped, renumbered in query order (question's first, then each sub-question's).
    assert [p.id for p in outcome.passages] == ["m24", "oth", "rev", "m23"]
    express = generator.calls[-1]
    assert express.task == "answer" and [p.id for p in express.passages] == ["m24", "oth", "rev", "m23"]
    assert SUB_2024 in express.question and SUB_2023 in express.question and express.question.startswith(QUESTION)
    assert stages[-1].passed and outcome.review_passed and outcome.rounds == 1
    assert outcome.cited == {1, 4} and outcome.failed_criteria == []
    assert outcome.completion_tokens == 100  # plan + answer, 50 each
    assert all(s.ms >= 0 for s in stages)


async def test_a_single_lookup_skips_the_plan_and_retrieves_once() -> None:
    generator = ScriptedGenerator({"answer": ["Revenue was USD 1,284.6 million in fiscal 2024 [1]."]})
    retrieve = FakeRetrieve({SIMPLE: _retrieval([REVENUE])})
    stages, outcome = await _run(SIMPLE, generator, retrieve)
    assert [s.stage for s in stages] == ["plan", "execute", "express", "review"]
    assert stages[0].detail.startswith("skipped") and stages[0].ms == 0.0
    assert generator.tasks() == ["answer"] and retrieve.asked == [SIMPLE]
    assert generator.calls[0].question == SIMPLE  # no outline, no fixes
    assert outcome.review_passed and outcome.rounds == 1


async def test_the_callers_retrieval_of_the_question_is_not_repeated() -> None:
    generator = ScriptedGenerator({"answer": ["Revenue was USD 1,284.6 million in fiscal 2024 [1]."]})
    retrieve = FakeRetrieve({})
    _, outcome = await _run(SIMPLE, generator, retrieve, retrieved=_retrieval([REVENUE]))
    assert retrieve.asked == [] and [p.id for p in outcome.passages] == ["rev"]


async def test_an_uncited_draft_is_expressed_again_with_the_fix_spelled_out() -> None:
    uncited = "Operating margin rose from 9.1% in fiscal 2023 to 11.4% in fiscal 2024."
    generator = ScriptedGenerator({"plan": [f"{SUB_2024}\n{SUB_2023}"], "answer": [uncited, GOOD]})
    stages, outcome = await _run(QUESTION, generator, _margin_retrieve())
    assert [s.stage for s in stages][-4:] == ["express", "review", "express", "review"]
    first_review, second_review = (s for s in stages if s.stage == "review")
    assert not first_review.passed and "cite no passage" in first_review.detail
    assert second_review.passed and second_review.round == 2
    second = generator.calls[-1]
    assert "number of the passage" in second.question and second.question.startswith(QUESTION)
    # 9.1% sits in passage [4] of the merged list: the marker was re-pointed there, words unchanged.
    assert outcome.answer == GOOD.replace("[2]", "[4]") and outcome.rounds == 2 and outcome.review_passed


async def test_rounds_are_bounded_and_the_outcome_names_what_failed() -> None:
    invented = "Operating margin rose to 13.7% in fiscal 2024 [1]."
    generator = ScriptedGenerator({"plan": [SUB_2024], "answer": [invented]})
    stages, outcome = await _run(QUESTION, generator, _margin_retrieve(), max_rounds=3)
    assert generator.tasks().count("answer") == 3
    assert [s.round for s in stages if s.stage == "review"] == [1, 2, 3]
    assert not outcome.review_passed and outcome.rounds == 3 and outcome.stopped == "max rounds"
    assert SUPPORTED in outcome.failed_criteria
    assert "13.7%" in generator.calls[-1].question  # the figure to fix is named in the fix
    assert "stopping: max rounds" in stages[-1].detail


async def test_the_token_budget_stops_the_loop_before_another_round() -> None:
    generator = ScriptedGenerator({"plan": [SUB_2024], "answer": [UNCITED]}, tokens=200)
    budget = PeerBudget(max_completion_tokens=450, max_seconds=10_000.0)
    stages, outcome = await _run(QUESTION, generator, _margin_retrieve(), max_rounds=5, budget=budget)
    assert generator.tasks() == ["plan", "answer"]  # 400 spent, 50 left: less than a useful answer
    assert outcome.rounds == 1 and outcome.stopped.startswith("token budget")
    assert "stopping: token budget" in stages[-1].detail and outcome.completion_tokens == 400


async def test_a_second_round_may_not_ask_for_more_tokens_than_the_budget_has_left() -> None:
    generator = ScriptedGenerator({"plan": [SUB_2024], "answer": [UNCITED, GOOD]}, tokens=100)
    budget = PeerBudget(max_completion_tokens=300, max_seconds=10_000.0)
    _, outcome = await _run(QUESTION, generator, _margin_retrieve(), budget=budget, max_tokens=512)
    answers = [c for c in generator.calls if c.task == "answer"]
    assert [c.max_tokens for c in answers] == [512, 100]
    assert outcome.completion_tokens == 300


async def test_the_time_budget_stops_the_loop() -> None:
    now = [0.0]

    def tick() -> None:
        now[0] += 100.0  # each model call "takes" 100 s

    generator = ScriptedGenerator({"plan": [SUB_2024], "answer": [UNCITED]}, on_call=tick)
    budget = PeerBudget(max_completion_tokens=100_000, max_seconds=250.0)
    _, outcome = await _run(QUESTION, generator, _margin_retrieve(), max_rounds=4, budget=budget, clock=lambda: now[0])
    # Plan + answer = 200 s; another round would take 100 s more: over 250 s, so none starts.
    assert generator.tasks() == ["plan", "answer"]
    assert outcome.stopped.startswith("time budget")


async def test_the_best_draft_is_kept_when_a_later_one_is_worse() -> None:
    half = "Operating margin was 11.4% in fiscal 2024 [1]."  # cited and supported, 2023 left out
    generator = ScriptedGenerator({"plan": [f"{SUB_2024}\n{SUB_2023}"], "answer": [half, "Margin went up to 15%."]})
    _, outcome = await _run(QUESTION, generator, _margin_retrieve())
    assert generator.tasks().count("answer") == 2
    assert outcome.answer == half and outcome.failed_criteria == [ANSWERED]


async def test_a_draft_with_an_invented_figure_never_replaces_a_half_answer() -> None:
    half = "Operating margin was 11.4% in fiscal 2024 [1]."
    invented = "Operating margin was 11.4% in fiscal 2024 [1] and 10.2% in fiscal 2023 [1]."
    generator = ScriptedGenerator({"plan": [f"{SUB_2024}\n{SUB_2023}"], "answer": [half, invented]})
    stages, outcome = await _run(QUESTION, generator, _margin_retrieve())
    assert [s.detail.split(":")[0] for s in stages if s.stage == "review"] == ["failed", "failed"]
    assert "Also answer from the passages, or say they do not state it" in generator.calls[-1].question
    assert outcome.answer == half and outcome.failed_criteria == [ANSWERED]


async def test_missing_evidence_makes_the_next_round_plan_again() -> None:
    other = "What was Larkspur Freight's operating income in fiscal 2023?"
    generator = ScriptedGenerator({"plan": [f"{SUB_2024}\n{SUB_2023}", other], "answer": [INSUFFICIENT["en"], GOOD]})
    retrieve = _margin_retrieve()
    retrieve.by_query[SUB_2023] = _retrieval([M2023], route=Route.WEB)  # weak local, no web: no evidence
    retrieve.by_query[other] = _retrieval([M2023])
    stages, outcome = await _run(QUESTION, generator, retrieve)
    assert [s.stage for s in stages] == [
        "plan", "execute", "execute", "execute", "express", "review", "plan", "execute", "express", "review",
    ]  # fmt: skip
    assert not stages[3].passed and stages[3].detail.startswith("no evidence")
    replan = generator.calls[2]
    assert replan.task == "plan" and SUB_2023 in replan.instruction and "Nothing was found" in replan.instruction
    assert stages[6].sub_questions == (other,) and retrieve.asked[-1] == other
    # The sub-question without evidence leaves the outline; the new one joins it.
    last = generator.calls[-1]
    assert other in last.question and SUB_2023 not in last.question
    assert "m23" in [p.id for p in outcome.passages] and outcome.review_passed


async def test_weak_local_evidence_counts_when_the_deployment_answers_from_it() -> None:
    weak = _retrieval([M2023], route=Route.WEB)
    assert not has_evidence(weak) and has_evidence(weak, keep_weak_local=True)
    assert has_evidence(_retrieval([_p("w", "web page", origin="web")], route=Route.WEB))
    assert not has_evidence(_retrieval([]))


async def test_unusable_model_output_never_raises() -> None:
    generator = ScriptedGenerator({"plan": ["Sure! Here you go:\n\n```\n```"], "answer": [""]})
    stages, outcome = await _run(QUESTION, generator, _margin_retrieve(), max_rounds=2)
    assert stages[0].stage == "plan" and not stages[0].passed and stages[0].sub_questions == ()
    assert [s.stage for s in stages].count("execute") == 1  # the question alone
    assert not outcome.review_passed and ANSWERED in outcome.failed_criteria and outcome.rounds == 2


async def test_max_rounds_zero_is_a_single_pass_without_plan_or_review() -> None:
    generator = ScriptedGenerator({"plan": [SUB_2024], "answer": [UNCITED]})
    retrieve = _margin_retrieve()
    stages, outcome = await _run(QUESTION, generator, retrieve, max_rounds=0)
    assert [s.stage for s in stages] == ["execute", "express"]
    assert generator.tasks() == ["answer"] and retrieve.asked == [QUESTION]
    assert outcome.rounds == 1 and outcome.stopped == "single pass"


async def test_the_models_review_can_fail_a_draft_but_not_pass_one() -> None:
    generator = ScriptedGenerator(
        {
            "plan": [f"{SUB_2024}\n{SUB_2023}"],
            "answer": [GOOD],
            "review": ["FAIL: the 2023 figure is for another year", "PASS"],
        }
    )
    stages, outcome = await _run(QUESTION, generator, _margin_retrieve(), model_review=True)
    reviews = [s for s in stages if s.stage == "review"]
    assert not reviews[0].passed and "another year" in reviews[0].detail
    assert "A reviewer said" in generator.calls[generator.tasks().index("answer", 2)].question
    assert reviews[1].passed and outcome.review_passed

    uncited = ScriptedGenerator({"plan": [SUB_2024], "answer": [UNCITED], "review": ["PASS"]})
    _, still_failed = await _run(QUESTION, uncited, _margin_retrieve(), model_review=True, max_rounds=1)
    assert not still_failed.review_passed and CITED in still_failed.failed_criteria


def test_model_verdicts_are_read_leniently() -> None:
    assert model_verdict("PASS") == (True, "")
    assert model_verdict("**FAIL**: wrong year\nmore") == (False, "wrong year")
    assert model_verdict("The draft looks fine.") == (None, "")


# --- merging ------------------------------------------------------------------------------------


def test_merge_drops_duplicates_and_keeps_every_querys_best_under_the_limit() -> None:
    a, b, c, d, e = (_p(x, x) for x in "abcde")
    merged = merge([[a, b, c], [b, d], [e, a]], limit=4)
    # Taken by rank across queries: a, b, e (ranks 0), then b (dup), d, a (dup) -> a, b, e, d; shown in query order.
    assert [p.id for p in merged] == ["a", "b", "d", "e"]
    assert [p.id for p in merge([[a, b, c], [b, d]], limit=10)] == ["a", "b", "c", "d"]
    assert merge([], limit=3) == []


def test_the_express_question_carries_the_outline_and_the_fixes_inline() -> None:
    text = express_question(QUESTION, [SUB_2024, SUB_2023], ["Cite."], "en")
    assert text == f"{QUESTION} (Cover: {SUB_2024} {SUB_2023} Cite a passage number after each sentence.) " + (
        "Fix your last draft: Cite."
    )
    assert express_question("问题？", ["子问题？"], [], "zh") == "问题？（需涵盖：子问题？每句话后标注资料编号。）"
    assert express_question(SIMPLE, [], [], "en") == SIMPLE


# --- plan step ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        (SIMPLE, False),
        ("云杉物流2023年的营业收入是多少？", False),
        (QUESTION, True),
        ("Is Larkspur Freight a capital-intensive business based on fiscal 2024 data?", True),
        ("What was Larkspur Freight's revenue in 2023 and 2024?", True),
        ("云杉物流2023年营业收入和净利润分别增长了多少？", True),
        ("分析青松银行近两年不良贷款率的变化趋势。", True),
    ],
)
def test_only_questions_asking_for_several_facts_are_planned(question: str, wanted: bool) -> None:
    assert needs_plan(question) is wanted


def test_plan_lines_are_cleaned_and_answers_in_disguise_dropped() -> None:
    text = (
        "Here are the sub-questions:\n"
        f"1. {SUB_2024}\n"
        f"Sub-question 2: {SUB_2023}\n"
        f"- {SUB_2024}\n"  # repeat
        f"{QUESTION}\n"  # the question itself is always looked up anyway
        "Operating margin in fiscal 2024 was 11.4%.\n"  # an answer, not a question
        "Was operating margin 13.2% in fiscal 2022?\n"  # a figure the question does not state
    )
    assert parse_plan(text, QUESTION, limit=3) == (SUB_2024, SUB_2023)
    assert parse_plan(text, QUESTION, limit=1) == (SUB_2024,)
    assert parse_plan("", QUESTION, limit=3) == ()


def test_two_questions_on_one_line_are_two_sub_questions() -> None:
    text = "青松银行2022年不良贷款率是多少？青松银行2023年不良贷款率是多少？\n3、青松银行不良贷款率变化的原因是什么？"
    assert parse_plan(text, "分析青松银行近两年不良贷款率的变化趋势。", limit=3) == (
        "青松银行2022年不良贷款率是多少？",
        "青松银行2023年不良贷款率是多少？",
        "青松银行不良贷款率变化的原因是什么？",
    )


# --- review criteria ----------------------------------------------------------------------------


def test_a_marker_opening_a_sentence_belongs_to_the_one_before() -> None:
    answer = "Margin was 11.4% in fiscal 2024. [1] It was 9.1% in fiscal 2023 [2]. Summary:\n- Up."
    assert sentences(answer) == [
        "Margin was 11.4% in fiscal 2024. [1]",
        "It was 9.1% in fiscal 2023 [2].",
        "Summary:",
        "- Up.",
    ]
    assert review(answer, [M2024, M2023], [QUESTION]).failed == ()


def test_claims_are_figures_or_statements_not_lead_ins_or_refusals() -> None:
    assert is_claim("Up 4%.") and is_claim("The company exited the Chinese market entirely.")
    assert is_claim("公司在2023年退出了中国市场。")
    assert not is_claim("Key points:") and not is_claim("In short.") and not is_claim(INSUFFICIENT["en"])


def test_each_criterion_fails_on_its_own_fault() -> None:
    passages = [M2024, M2023]
    uncited = review("Operating margin rose from 9.1% in fiscal 2023 to 11.4% in fiscal 2024.", passages, [QUESTION])
    assert uncited.failed == (CITED,) and uncited.claims == 1 and uncited.cited_claims == 0
    missing = review("Operating margin rose to 11.4% in fiscal 2024 [5].", passages, [QUESTION])
    assert CITED in missing.failed and missing.bad_markers == (5,)
    invented = review("Operating margin rose to 12.9% in fiscal 2024 [1].", passages, [QUESTION])
    assert invented.failed == (SUPPORTED,) and invented.unsupported == ("12.9%",)
    refusal = review(INSUFFICIENT["en"], passages, [QUESTION])
    assert refusal.failed == (ANSWERED,) and refusal.refused


def test_a_right_figure_with_the_wrong_marker_is_re_pointed_not_failed() -> None:
    result = review("Operating margin was 9.1% in fiscal 2023 [1].", [M2024, M2023], [QUESTION])
    assert result.passed and result.recited and result.answer == "Operating margin was 9.1% in fiscal 2023 [2]."


def test_a_partial_answer_that_says_what_is_missing_is_not_a_refusal() -> None:
    answer = f"Operating margin was 11.4% in fiscal 2024 [1]. {INSUFFICIENT['en']}"
    assert not refused(answer) and refused(INSUFFICIENT["zh"])


def test_coverage_asks_for_what_each_sub_question_does_not_share_with_the_others() -> None:
    subs = [SUB_2024, SUB_2023]
    assert uncovered("Operating margin was 11.4% in fiscal 2024 [1].", subs) == [SUB_2023]
    assert uncovered(GOOD, subs) == []
    zh = ["云杉物流2023年营业收入是多少？", "云杉物流2023年净利润是多少？"]
    assert uncovered("2023年营业收入为58.3亿元[1]。", zh) == [zh[1]]
    assert uncovered("营业收入为58.3亿元[1]，净利润为4.1亿元[2]。", zh) == []


def test_an_uncited_figure_gets_the_marker_of_the_passage_holding_it() -> None:
    sources = ["营业收入58.3亿元，同比增长12.4%。", "净利润4.1亿元，同比下降3.2%。"]
    assert cite_figures("营业收入增长了12.4%。净利润下降了3.2%。", sources) == (
        "营业收入增长了12.4%[1]。净利润下降了3.2%[2]。",
        2,
    )
    en = ["Operating margin was 11.4% in fiscal 2024.", "Operating margin was 9.1% in fiscal 2023."]
    assert cite_figures("Margin was 9.1% in fiscal 2023. It rose since.", en) == (
        "Margin was 9.1% in fiscal 2023 [2]. It rose since.",
        1,
    )
    for untouched in (
        "Margin was 9.1% in fiscal 2023 [1].",  # cited already (wrongly: recite's business)
        "Margin was 9.1% in fiscal 2023. [2] It rose.",  # the marker run after it counts
        "Margin was 12.9% in fiscal 2023.",  # in no passage
    ):
        assert cite_figures(untouched, en) == (untouched, 0)


def test_the_review_counts_markers_it_added() -> None:
    result = review("Operating margin was 11.4% in fiscal 2024.", [M2024, M2023], [SUB_2024])
    assert result.passed and result.cited_by_code == 1 and result.answer.endswith("2024 [1].")


def test_each_sentence_is_checked_against_its_own_markers() -> None:
    swapped = "Operating margin was 9.1% in fiscal 2023 [2]. Revenue was USD 1,284.6 million in fiscal 2024 [1]."
    passages = [M2023, REVENUE]
    # The served check reads the answer whole: both passages are cited, so it passes.
    assert check_answer(swapped, passage_sources(passages)).result == "supported"
    result = review(swapped, passages, [SIMPLE])
    assert result.recited and result.answer == swapped.replace("[2]", "[x]").replace("[1]", "[2]").replace("[x]", "[1]")
    unfixable = review("Operating margin was 9.1% in fiscal 2023 [2]. It was 12.9% later [1].", passages, [SIMPLE])
    assert SUPPORTED in unfixable.failed and "9.1%" in unfixable.unsupported
