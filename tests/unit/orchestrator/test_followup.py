"""Follow-ups made standalone: when a rewrite is needed, the rules (EN and ZH), the model's checked rewrite."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from weaverbird_common.errors import Unavailable
from weaverbird_orchestrator.domain import GenerationDone, PromptPrepared, Turn
from weaverbird_orchestrator.tasks.followup import (
    clean_model_rewrite,
    needs_rewrite,
    plausible_rewrite,
    rewrite_with_llm,
    rewrite_with_rules,
    standalone_question,
)

# Fictional companies, written for these tests.
KNOWN = ["LARKSPURFREIGHT", "ORCHARDFOODS", "COSTCO"]
ALIASES = {"Larkspur Freight Inc.": "LARKSPURFREIGHT", "LKF": "LARKSPURFREIGHT", "COST": "COSTCO"}


def _asked(*questions: str, answer: str = "") -> list[Turn]:
    turns: list[Turn] = []
    for q in questions:
        turns += [Turn("user", q), Turn("assistant", answer or "An answer.")]
    return turns


def _rules(question: str, history: Sequence[Turn]) -> str:
    return rewrite_with_rules(question, history, KNOWN, ALIASES)


# --- when ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "And in 2023?",
        "what about Orchard Foods?",
        "How about FY2021?",
        "What was its operating margin?",
        "Did they pay a dividend that year?",
        "Operating margin?",
        "What was the operating margin?",  # names no company while the conversation did
    ],
)
def test_english_follow_ups_need_a_rewrite(question: str) -> None:
    history = _asked("What was Larkspur Freight's revenue in FY2022?")
    assert needs_rewrite(question, history, KNOWN, ALIASES)


@pytest.mark.parametrize(
    "question", ["那2023年呢？", "它的毛利率是多少？", "净利润呢？", "该公司的负债率是多少？", "原因是什么？"]
)
def test_chinese_follow_ups_need_a_rewrite(question: str) -> None:
    assert needs_rewrite(question, _asked("云杉物流2022年营业收入是多少？"))


@pytest.mark.parametrize(
    ("question", "history"),
    [
        ("What was Orchard Foods' operating margin in FY2022?", _asked("What was Larkspur Freight's revenue?")),
        ("What was Larkspur Freight's revenue in FY2022?", []),  # no conversation
        ("And in 2023?", [Turn("assistant", "Welcome.")]),  # no earlier user turn
        ("云杉物流2022年的毛利率是多少？", _asked("云杉物流2022年营业收入是多少？")),
    ],
)
def test_a_question_that_stands_alone_needs_none(question: str, history: list[Turn]) -> None:
    assert not needs_rewrite(question, history, KNOWN, ALIASES)
    assert _rules(question, history) == question


# --- English rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("earlier", "follow_up", "expected"),
    [
        pytest.param(
            ["How much did Larkspur Freight's effective tax rate change between FY2021 and FY2022?"],
            "And in 2023?",
            "How much did Larkspur Freight's effective tax rate change between FY2022 and FY2023?",
            id="a period follow-up moves every year of the last question",
        ),
        pytest.param(
            ["What was Larkspur Freight's capex in FY22?"],
            "What about FY20?",
            "What was Larkspur Freight's capex in FY20?",
            id="a short fiscal year is moved too",
        ),
        pytest.param(
            ["Does Larkspur Freight have positive working capital based on FY2022 data?"],
            "How about Orchard Foods?",
            "Does Orchard Foods have positive working capital based on FY2022 data?",
            id="a company follow-up replaces the company and keeps the rest",
        ),
        pytest.param(
            ["What is the FY2019 capital expenditure for Larkspur Freight?"],
            "And what was its net PP&E at the end of that year?",
            "What was Larkspur Freight's net PP&E at the end of FY2019?",
            id="its and that year take the earlier company and period",
        ),
        pytest.param(
            ["What is the FY2019 capital expenditure for Larkspur Freight?"],
            "Did they pay a dividend?",
            "Did Larkspur Freight pay a dividend in FY2019?",
            id="they takes the earlier company and period",
        ),
        pytest.param(
            ["What was Larkspur Freight's revenue in Q2 of FY2024?"],
            "What was the operating margin?",
            "What was the operating margin for Larkspur Freight in Q2 of FY2024?",
            id="a question without company or period gets both appended",
        ),
        pytest.param(
            ["What was Larkspur Freight's revenue in FY2022?"],
            "What about its capex?",
            "What about Larkspur Freight's capex in FY2022?",
            id="a metric phrase is asked about the earlier company and period",
        ),
        pytest.param(
            ["What was Larkspur Freight's revenue in FY2018?", "And in FY2022?"],
            "What was its net debt at the end of that year?",
            "What was Larkspur Freight's net debt at the end of FY2022?",
            id="chained follow-ups keep the company from the first turn and the year from the second",
        ),
        pytest.param(
            ["What was Larkspur Freight's revenue in FY2022?"],
            "What was the cost of revenue?",
            "What was the cost of revenue for Larkspur Freight in FY2022?",
            id="a ticker needs capitals, so the word cost names no company",
        ),
    ],
)
def test_english_rules(earlier: list[str], follow_up: str, expected: str) -> None:
    assert _rules(follow_up, _asked(*earlier)) == expected


def test_only_user_turns_are_read_for_slots() -> None:
    history = [Turn("user", "What was Larkspur Freight's revenue in FY2022?"), Turn("assistant", "In FY2019 ...")]
    assert _rules("What about its capex?", history).endswith("in FY2022?")


def test_unknown_companies_are_read_from_a_possessive() -> None:
    history = [Turn("user", "What was Quillon Marine's revenue in 2021?")]
    assert rewrite_with_rules("And its net income?", history) == "What about Quillon Marine's net income in 2021?"


# --- Chinese rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "follow_up", "expected"),
    [
        ("云杉物流2022年营业收入是多少？", "那2023年呢？", "云杉物流2023年营业收入是多少？"),
        ("云杉物流2023年上半年营业收入是多少？", "第三季度呢？", "云杉物流2023年第三季度营业收入是多少？"),
        ("云杉物流2022年营业收入是多少？", "净利润呢？", "云杉物流2022年净利润是多少？"),
        ("云杉物流2022年营业收入是多少？", "换成松石科技呢？", "松石科技2022年营业收入是多少？"),
        ("云杉物流2022年营业收入是多少？", "它的毛利率是多少？", "云杉物流2022年的毛利率是多少？"),
        ("云杉物流拟出资多少设立子公司？", "该项目何时开工？", "云杉物流该项目何时开工？"),
        ("松石科技有限公司计划增持多少股份？", "那云杉物流呢？", "云杉物流计划增持多少股份？"),
    ],
)
def test_chinese_rules(first: str, follow_up: str, expected: str) -> None:
    assert rewrite_with_rules(follow_up, _asked(first, answer="约12.5亿元。")) == expected


def test_chinese_chain_keeps_the_metric_of_the_second_turn() -> None:
    history = _asked("云杉物流2023年第三季度净利润同比增长了多少？", "营业收入呢？")
    assert rewrite_with_rules("那松石科技呢？", history) == "松石科技2023年第三季度营业收入同比增长了多少？"


# --- the model's rewrite ---------------------------------------------------------------------------


class FakeGenerator:
    """Replies with a fixed text (or fails), recording the task and history it was sent."""

    def __init__(self, reply: str = "", error: Exception | None = None) -> None:
        self.reply, self.error = reply, error
        self.calls: list[tuple[str, tuple[Turn, ...]]] = []

    async def generate(
        self, question: str, *args: object, task: str = "", history: Sequence[Turn] = (), **fields: object
    ) -> AsyncIterator[str | PromptPrepared | GenerationDone]:
        self.calls.append((task, tuple(history)))
        if self.error:
            raise self.error
        yield self.reply
        yield GenerationDone("stop", 10, 5, "fake")


HISTORY = _asked("What was Larkspur Freight's revenue in FY2022?", answer="Revenue was 1,284.6 million dollars.")
RULES = "What was Larkspur Freight's revenue in FY2023?"


async def _llm(reply: str = "", error: Exception | None = None) -> tuple[str, FakeGenerator]:
    generator = FakeGenerator(reply, error)
    out = await rewrite_with_llm(generator, "And in FY2023?", HISTORY, "en", known_companies=KNOWN, aliases=ALIASES)
    return out, generator


async def test_a_plausible_model_rewrite_is_used_and_the_task_is_rewrite() -> None:
    out, generator = await _llm("Standalone question: What was Larkspur Freight's total revenue in FY2023?")
    assert out == "What was Larkspur Freight's total revenue in FY2023?"
    assert generator.calls == [("rewrite", tuple(HISTORY))]


@pytest.mark.parametrize(
    "reply",
    [
        "",  # nothing
        "And in FY2023?",  # the follow-up unchanged
        "What was revenue in FY2023? And what was the margin?",  # two questions
        "Larkspur Freight's revenue in FY2023 was 1,284.6 million dollars.",  # an answer's figure
        "What was Larkspur Freight's revenue on 15 March 2023?",  # a date nobody asked about
        "What was the revenue in FY2023?",  # the company dropped
        "云杉物流2023年营业收入是多少？",  # another language
        "What was Larkspur Freight's revenue in FY2023? " + "and more " * 40,  # far too long
    ],
)
async def test_an_implausible_model_rewrite_falls_back_to_the_rules(reply: str) -> None:
    out, _ = await _llm(reply)
    assert out == RULES


async def test_a_failing_generator_falls_back_to_the_rules() -> None:
    out, _ = await _llm(error=Unavailable("generator down"))
    assert out == RULES


def test_the_year_before_a_written_year_is_allowed() -> None:
    history = _asked("How did Larkspur Freight's tax rate change in FY2022?")
    rewrite = "How did Larkspur Freight's tax rate change from FY2021 to FY2022?"
    assert plausible_rewrite(rewrite, "And from the year before?", history, "en", company="Larkspur Freight")


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ('"What was X\'s revenue?"', "What was X's revenue?"),
        ("**Rewritten question:** What was X's revenue?\nExplanation: ...", "What was X's revenue?"),
        ("\n改写后的问题：云杉物流2023年营业收入是多少？", "云杉物流2023年营业收入是多少？"),
    ],
)
def test_clean_model_rewrite(raw: str, clean: str) -> None:
    assert clean_model_rewrite(raw) == clean


# --- modes -----------------------------------------------------------------------------------------


async def test_modes() -> None:
    generator = FakeGenerator("What was Larkspur Freight's revenue in FY2023 in total?")
    kwargs = {"generator": generator, "known_companies": KNOWN, "aliases": ALIASES}
    assert await standalone_question("And in FY2023?", HISTORY, mode="off", **kwargs) == "And in FY2023?"
    assert await standalone_question("And in FY2023?", HISTORY, mode="rules", **kwargs) == RULES
    assert generator.calls == []
    llm = await standalone_question("And in FY2023?", HISTORY, mode="llm", **kwargs)
    assert llm == "What was Larkspur Freight's revenue in FY2023 in total?"
    # A question that stands alone costs no model call.
    alone = "What was Orchard Foods' revenue in FY2023?"
    assert await standalone_question(alone, HISTORY, mode="llm", **kwargs) == alone
    assert len(generator.calls) == 1
    with pytest.raises(ValueError, match="mode"):
        await standalone_question("And in FY2023?", HISTORY, mode="sometimes", **kwargs)


def test_every_shipped_follow_up_pair_is_recognised_as_one() -> None:
    path = Path(__file__).resolve().parents[3] / "evaluation/src/weaverbird_eval/data/followups.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert sum(r["language"] == "en" for r in rows) >= 15 and sum(r["language"] == "zh" for r in rows) >= 15
    # The companies the English pairs are about, as a KB catalog of their filings would name them.
    catalog = [
        *("3M", "AMD", "American Express", "Corning", "PepsiCo", "Pfizer", "Ulta Beauty", "Best Buy", "MGM"),
        *("Verizon", "Amcor", "Amazon", "Nike", "Netflix", "Microsoft", "General Mills", "American Water Works"),
    ]
    for row in rows:
        history = [Turn(t["role"], t["text"]) for t in row["history"]]
        assert history[0].role == "user" and row["gold"], row["id"]
        assert needs_rewrite(row["followup"], history, catalog), row["id"]
        assert rewrite_with_rules(row["followup"], history, catalog) != row["followup"], row["id"]


def test_a_half_year_is_a_period_never_the_company() -> None:
    # weaverbird_common.periods.PERIOD_TOKEN_RE: "H1 2023" used to replace the company ("H1 2023's revenue").
    out = rewrite_with_rules("And for H1 2023?", _asked("What was Acme's revenue in FY2022?"), ["ACME"])
    assert "H1 2023's" not in out and "Acme" in out
