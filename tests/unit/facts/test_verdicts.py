"""Yes/no questions a figure settles: its sign ("Does X have positive working capital?") or its move
between two periods ("Did revenue increase ...?", "improved or declined ..."). Facts written for the
test; values hand-computed."""

from __future__ import annotations

import pytest
from fixtures.filing_facts import Filing
from weaverbird_common.facts.answer import FactAnswer, answer_from_facts
from weaverbird_common.facts.question import read_question

_fact = Filing("wren-2023", "WREN_TEXTILES", "Wren Textiles 10-K 2023", "wren-2023.pdf").fact


FACTS = [
    _fact("revenue", "Total revenues", 2023, 900.0, "income", 30),
    _fact("revenue", "Total revenues", 2022, 1000.0, "income", 30),
    _fact("gross_profit", "Gross profit", 2023, 315.0, "income", 30),
    _fact("gross_profit", "Gross profit", 2022, 330.0, "income", 30),
    _fact("total_current_assets", "Total current assets", 2023, 250.0, "balance", 31),
    _fact("total_current_liabilities", "Total current liabilities", 2023, 400.0, "balance", 31),
    # No "Total debt" line: the balance sheet prints the current portion and the long-term part.
    _fact("short_term_debt", "Current portion of long-term debt", 2023, 52.0, "balance", 31),
    _fact("long_term_debt", "Long-term debt", 2023, 420.0, "balance", 31),
    _fact("short_term_debt", "Current portion of long-term debt", 2022, 27.0, "balance", 31),
    _fact("long_term_debt", "Long-term debt", 2022, 470.0, "balance", 31),
]


def _answer(question: str, language: str = "en") -> FactAnswer:
    read = read_question(question)
    assert read is not None, question
    pages: dict[int | None, int] = {}
    result = answer_from_facts(read, FACTS, lambda f: pages.setdefault(f.page, len(pages) + 1), language)
    assert isinstance(result, FactAnswer), result
    return result


def test_a_sign_question_is_answered_no_from_the_computed_figure() -> None:
    result = _answer("Does Wren Textiles have positive working capital based on FY2023 data?")
    assert result.text.startswith("No.")
    assert result.value == pytest.approx(-150e6)  # 250 - 400, in dollars
    assert "-150" in result.text


def test_asking_for_the_other_sign_turns_the_verdict() -> None:
    assert _answer("Does Wren Textiles have negative working capital in FY2023?").text.startswith("Yes.")


@pytest.mark.parametrize(
    ("question", "lead"),
    [
        ("Did Wren Textiles' revenue increase between FY2022 and FY2023?", "No. It fell from USD 1,000 million"),
        ("Did Wren Textiles' revenue decline from FY2022 to FY2023?", "Yes. It fell from USD 1,000 million"),
    ],
)
def test_a_direction_question_compares_the_first_and_last_period(question: str, lead: str) -> None:
    result = _answer(question)
    assert result.text.startswith(lead)
    assert "USD 900 million (FY2023)" in result.text.splitlines()[0]


def test_improved_or_declined_states_the_move_without_a_yes_or_no() -> None:
    result = _answer("Has Wren Textiles' gross margin improved or declined between FY2023 and FY2022?")
    first = result.text.splitlines()[0]
    assert first == "It rose from 33.0 % (FY2022) to 35.0 % (FY2023)."
    assert result.value == pytest.approx(0.02)  # 35 % - 33 %, in percentage points


def test_a_chinese_direction_question_is_answered_in_chinese() -> None:
    result = _answer("Wren Textiles 2023年的营业收入与2022年相比是否下降？", "zh")
    assert result.text.startswith("是。从USD 1,000 million（FY2022）下降至USD 900 million（FY2023）。")


@pytest.mark.parametrize(
    "question",
    [
        "Is Wren Textiles a capital-intensive business based on FY2023 data?",  # a judgement
        "Does Wren Textiles have positive working capital?",  # no period named
        "Did Wren Textiles' revenue increase in FY2023?",  # a move needs two periods
    ],
)
def test_yes_no_questions_a_figure_does_not_settle_are_passed_on(question: str) -> None:
    assert read_question(question) is None


def test_a_growth_rate_named_over_two_adjacent_years_is_one_growth_not_a_change_of_growths() -> None:
    read = read_question("What is the change in operating income from FY2022 to FY2023 (in percents)?")
    assert read is not None and read.metric is not None
    assert read.metric.id == "operating_income_growth"
    assert read.years == (2023,) and read.aggregate == ""


def test_debt_on_a_balance_sheet_that_prints_only_its_parts_is_their_sum() -> None:
    result = _answer("Has Wren Textiles increased its debt between FY2022 and FY2023?")
    assert result.text.startswith("No. It fell from USD 497 million")  # 27 + 470, then 52 + 420 = 472
    assert result.value == pytest.approx((472 - 497) * 1e6)
    assert "Current portion of long-term debt + Long-term debt" in result.text
    read = read_question("What was Wren Textiles' long-term debt in FY2023?")
    assert read is not None and read.concept == "long_term_debt"  # the longer name wins over "debt"
