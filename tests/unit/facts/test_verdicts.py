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


# A third year before FACTS' two (margins hand-computed in the tests below).
STEADY_FACTS = [
    _fact("revenue", "Total revenues", 2021, 800.0, "income", 30),
    _fact("gross_profit", "Gross profit", 2021, 320.0, "income", 30),
    *FACTS,
]
STEADY_FACTS.append(_fact("gross_profit", "Gross profit", 2020, 100.0, "income", 30))  # no revenue: ends the run


def _steady(question: str, facts: list, language: str = "en") -> FactAnswer:
    read = read_question(question)
    assert read is not None and read.verdict == "steady", question
    pages: dict[int | None, int] = {}
    result = answer_from_facts(read, facts, lambda f: pages.setdefault(f.page, len(pages) + 1), language)
    assert isinstance(result, FactAnswer), result
    return result


def test_a_consistency_question_with_a_bound_checks_every_years_move_against_it() -> None:
    # Margins: FY2021 320/800 = 40.0 %, FY2022 330/1000 = 33.0 %, FY2023 315/900 = 35.0 %.
    question = (
        "Are Wren Textiles' gross margins historically consistent (not fluctuating more than roughly 2% each year)?"
    )
    result = _steady(question, STEADY_FACTS)
    lead = result.text.splitlines()[0]
    assert lead.startswith("No. Gross margin moved by at most 7.0 percentage points")
    assert "FY2021 40.0 %; FY2022 33.0 % (-7.0 percentage points); FY2023 35.0 % (+2.0 percentage points)" in lead
    assert result.value == pytest.approx(0.07)
    # FY2020 has a gross profit but no revenue: the series stops at the last year the facts answer.
    assert "FY2020" not in result.text


def test_a_bound_the_moves_stay_within_says_yes_and_no_bound_gives_no_verdict() -> None:
    two_years = [f for f in STEADY_FACTS if f.period.fiscal_year in (2022, 2023)]
    allowed = _steady(
        "Is Wren Textiles' gross margin stable, not moving more than 3 percentage points a year?", two_years
    )
    assert allowed.text.startswith("Yes. Gross margin moved by at most 2.0 percentage points")
    unbounded = _steady("Has Wren Textiles' gross margin been consistent?", two_years)
    assert unbounded.text.startswith("Gross margin moved by at most 2.0 percentage points")


def test_an_amount_is_steady_by_its_relative_change_over_the_years_named() -> None:
    result = _steady("Was Wren Textiles' revenue stable (within 5%) between FY2022 and FY2023?", STEADY_FACTS)
    assert result.text.startswith("No. Total revenues moved by at most 10.0 % from one year")  # 1000 -> 900
    assert "FY2021" not in result.text.splitlines()[0]  # only the years named


def test_a_consistency_question_over_a_single_year_of_facts_is_passed_on() -> None:
    one_year = [f for f in STEADY_FACTS if f.period.fiscal_year == 2023]
    read = read_question("Are Wren Textiles' gross margins consistent?")
    assert read is not None
    result = answer_from_facts(read, one_year, lambda f: 1)
    assert not isinstance(result, FactAnswer)


def test_a_balance_sheet_printing_inventories_only_as_parts_gives_the_quick_ratio_their_sum() -> None:
    parts = [
        _fact("total_current_assets", "Total current assets", 2023, 5308.0, "balance", 51),
        _fact("total_current_liabilities", "Total current liabilities", 2023, 4476.0, "balance", 51),
        _fact("inventory_raw_materials", "Raw materials and supplies", 2023, 992.0, "balance", 51),
        _fact("inventory_finished_goods", "Work in process and finished goods", 2023, 1221.0, "balance", 51),
    ]
    read = read_question("What is Wren Textiles' quick ratio for FY2023?")
    assert read is not None
    result = answer_from_facts(read, parts, lambda f: 1)
    assert isinstance(result, FactAnswer), result
    assert result.value == pytest.approx((5308 - 992 - 1221) / 4476)  # 0.69
    assert "Raw materials and supplies + Work in process and finished goods" in result.text


def test_a_move_asked_of_one_year_is_the_move_from_the_year_before() -> None:
    result = _answer("Did Wren Textiles' revenue increase in FY2023?")
    assert result.text.startswith("No. It fell from USD 1,000 million (FY2022) to USD 900 million (FY2023).")


@pytest.mark.parametrize(
    ("question", "lead"),
    [
        # Gross margin 33.0 % -> 35.0 %: higher is better for a margin.
        ("Does Wren Textiles have an improving gross margin profile as of FY2023?", "Yes. It rose from 33.0 %"),
        ("Has Wren Textiles' gross margin deteriorated in FY2023?", "No. It rose from 33.0 %"),
    ],
)
def test_improving_reads_the_way_the_metric_improves(question: str, lead: str) -> None:
    assert _answer(question).text.startswith(lead)


def test_improving_a_metric_with_no_better_way_states_the_move_without_a_verdict() -> None:
    read = read_question("Is Wren Textiles' dividend payout ratio improving as of FY2023?")
    assert read is not None and read.verdict == "improve" and read.years == (2022, 2023)
    assert read.metric is not None and read.metric.better == ""


def test_cost_of_revenue_printed_as_products_and_services_is_their_sum() -> None:
    facts = [
        _fact("revenue", "Total revenues", 2023, 1000.0, "income", 30),
        _fact("cost_of_products", "Cost of products", 2023, -700.0, "income", 30),
        _fact("cost_of_services", "Cost of services", 2023, -250.0, "income", 30),
    ]
    read = read_question("What was Wren Textiles' gross margin in FY2023?")
    assert read is not None
    result = answer_from_facts(read, facts, lambda f: 1)
    assert isinstance(result, FactAnswer), result
    assert result.value == pytest.approx(0.05)  # (1000 - 950) / 1000, not (1000 - 700) / 1000
    only_products = [f for f in facts if f.concept != "cost_of_services"]
    result = answer_from_facts(read, only_products, lambda f: 1)
    assert isinstance(result, FactAnswer) and result.value == pytest.approx(0.30)


def test_steadiness_over_the_years_held_stops_at_a_gap_in_them() -> None:
    gap = [
        *STEADY_FACTS,
        _fact("revenue", "Total revenues", 2019, 700.0, "income", 30),
        _fact("gross_profit", "Gross profit", 2019, 100.0, "income", 30),
    ]  # FY2019 held, FY2020 not: FY2019 -> FY2021 would be two years' move
    result = _steady("Are Wren Textiles' gross margins historically consistent?", gap)
    assert "FY2019" not in result.text and result.series[0][0] == "FY2021"
