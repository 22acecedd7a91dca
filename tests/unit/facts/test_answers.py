"""Figure questions answered from facts: the fact chosen, metrics computed, missing and conflicting facts
said plainly. Statements written for the test; values hand-computed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fixtures.filing_facts import Filing
from weaverbird_common.facts.answer import FactAnswer, FactMiss, answer_from_facts
from weaverbird_common.facts.model import Fact
from weaverbird_common.facts.question import read_question

_fact = Filing("doc-2025", "KESTREL_LOOM", "Kestrel Loom Annual Report 2025", "kestrel-2025.md").fact


FACTS = [
    _fact("revenue", "Net sales", 2025, 1482.6, "income", page=40),
    _fact("revenue", "Net sales", 2024, 1317.9, "income", page=40),
    _fact("cost_of_revenue", "Cost of sales", 2025, -911.4, "income", page=40),
    _fact("gross_profit", "Gross profit", 2025, 571.2, "income", page=40),
    _fact("operating_income", "Operating income", 2025, 203.7, "income", page=40),
    _fact("total_current_assets", "Total current assets", 2025, 640.0, "balance", page=41),
    _fact("total_current_assets", "Total current assets", 2024, 600.0, "balance", page=41),
    _fact("total_current_liabilities", "Total current liabilities", 2025, 400.0, "balance", page=41),
    _fact("inventory", "Inventories", 2025, 120.0, "balance", page=41),
    _fact("inventory", "Inventories", 2024, 100.0, "balance", page=41),
    # A segment note prints "Net sales" too: the statement's figure must win.
    _fact("revenue", "Net sales", 2025, 200.0, "other", page=70),
]


class Pages:
    def __init__(self) -> None:
        self.seen: dict[int | None, int] = {}

    def __call__(self, fact: Fact) -> int:
        return self.seen.setdefault(fact.page, len(self.seen) + 1)


def _answer(question: str, facts: list[Fact] = FACTS) -> FactAnswer | FactMiss:
    read = read_question(question)
    assert read is not None, question
    return answer_from_facts(read, facts, Pages())


def test_a_line_item_is_read_from_the_statement_with_scale_and_citation() -> None:
    result = _answer("What were Kestrel Loom's net sales in FY2025?")
    assert isinstance(result, FactAnswer)
    assert result.value == pytest.approx(1_482_600_000)
    assert "USD 1,482.6 million [1]" in result.text
    assert [f.page for f in result.used] == [40]


def test_gross_margin_is_computed_with_its_formula_and_figures() -> None:
    result = _answer("What was Kestrel Loom's gross margin in 2025?")
    assert isinstance(result, FactAnswer)
    assert result.value == pytest.approx(571.2 / 1482.6)
    assert "38.5 %" in result.text
    assert "gross profit" in result.formula.lower() and "revenue" in result.formula.lower()


def test_growth_reaches_back_to_the_prior_year() -> None:
    result = _answer("What was Kestrel Loom's revenue growth in FY2025?")
    assert isinstance(result, FactAnswer)
    assert result.value == pytest.approx(1482.6 / 1317.9 - 1)


def test_a_definition_in_the_question_overrides_the_library() -> None:
    question = (
        "What is Kestrel Loom's FY2025 inventory turnover ratio? Inventory turnover ratio is defined as: "
        "(FY2025 COGS) / (average inventory between FY2024 and FY2025)."
    )
    result = _answer(question)
    assert isinstance(result, FactAnswer)
    assert result.value == pytest.approx(911.4 / 110.0)


def test_a_missing_fact_is_a_miss_naming_it() -> None:
    result = _answer("What was Kestrel Loom's current ratio in 2024?")  # no 2024 current liabilities
    assert isinstance(result, FactMiss)
    assert result.reason == "missing" and "total_current_liabilities" in result.detail


def test_two_values_for_one_concept_and_period_are_a_conflict_not_a_choice() -> None:
    restated = replace(_fact("revenue", "Net sales", 2024, 1290.0, "income", page=12), document_id="doc-2024")
    result = _answer("What were Kestrel Loom's net sales in FY2024?", [*FACTS, restated])
    assert isinstance(result, FactMiss)
    assert result.reason == "conflict"
    assert "1,317.9" in result.detail and "1,290" in result.detail


def test_within_one_filing_the_statement_before_the_notes_wins_a_tie() -> None:
    # A note on page 83 repeats "Net sales" with another scope, classified as an income statement too.
    note = _fact("revenue", "Net sales", 2024, 364.0, "income", page=83)
    result = _answer("What were Kestrel Loom's net sales in FY2024?", [*FACTS, note])
    assert isinstance(result, FactAnswer) and result.value == pytest.approx(1317.9e6)
    same_page = _fact("revenue", "Net sales", 2024, 364.0, "income", page=40)
    assert isinstance(_answer("What were Kestrel Loom's net sales in FY2024?", [*FACTS, same_page]), FactMiss)


def test_a_line_item_as_a_percent_of_another_is_computed() -> None:
    result = _answer("What was Kestrel Loom's cost of goods sold as a % of revenue in FY2025?")
    assert isinstance(result, FactAnswer)
    assert result.value == pytest.approx(911.4 / 1482.6)
    assert "cost of revenue / revenue" in result.formula.lower()


@pytest.mark.parametrize(
    "question",
    [
        "Is Kestrel Loom a capital-intensive business in FY2025?",  # a judgement, not a figure's sign or move
        "What drove Kestrel Loom's gross margin change in FY2025?",
        "What was Kestrel Loom's adjusted EBITDA in FY2025?",
    ],
)
def test_questions_a_figure_does_not_answer_go_to_the_passage_path(question: str) -> None:
    assert read_question(question) is None


def test_a_chinese_question_about_an_english_filing_names_the_item_in_chinese() -> None:
    read = read_question("Kestrel Loom 2025年的营业收入是多少？")
    assert read is not None
    result = answer_from_facts(read, FACTS, Pages(), "zh")
    assert isinstance(result, FactAnswer)
    assert result.text.startswith("营业收入（Net sales）（FY2025）：USD 1,482.6 million [1]")


def test_an_instruction_for_when_the_metric_does_not_apply_does_not_stop_the_reading() -> None:
    question = (
        "Roughly how many times has Kestrel Loom sold its inventory in FY2025? Calculate inventory turnover ratio "
        "for FY2025; if conventional inventory management is not meaningful for the company then state that and "
        "explain why."
    )
    result = _answer(question)
    assert isinstance(result, FactAnswer)
    assert result.value == pytest.approx(911.4 / ((120.0 + 100.0) / 2))
    # A judgement keeps being left to the passages, whatever instruction follows it.
    assert (
        read_question(
            "Is Kestrel Loom a capital-intensive business based on FY2025 data? If capital intensity "
            "is not a useful or relevant metric for this company, then please state that."
        )
        is None
    )


def test_an_amount_is_shown_in_the_scale_the_question_asks_with_the_printed_figure_after() -> None:
    result = _answer("What were Kestrel Loom's net sales in FY2025? Answer in USD billions.")
    assert isinstance(result, FactAnswer)
    assert result.value == pytest.approx(1_482_600_000)  # the value itself is not rounded
    assert "USD 1.48 billion (USD 1,482.6 million as reported) [1]" in result.text
    thousands = _answer("What were Kestrel Loom's net sales (in USD thousands) in FY2025?")
    assert isinstance(thousands, FactAnswer) and "USD 1,482,600 thousand (USD 1,482.6 million" in thousands.text
    # The statement's own scale asked, or a ratio: shown as printed.
    same = _answer("What were Kestrel Loom's net sales in FY2025 (in USD millions)?")
    assert isinstance(same, FactAnswer) and "USD 1,482.6 million [1]" in same.text and "as reported" not in same.text
    ratio = _answer("What was Kestrel Loom's gross margin in 2025? Answer in USD millions.")
    assert isinstance(ratio, FactAnswer) and "as reported" not in ratio.text
    read = read_question("Kestrel Loom 2025年的营业收入是多少（单位：亿元）？")
    assert read is not None and read.scale == 1e8
    zh = answer_from_facts(read, FACTS, Pages(), "zh")
    assert isinstance(zh, FactAnswer) and "14.83亿 USD（报表数：USD 1,482.6 million）" in zh.text
