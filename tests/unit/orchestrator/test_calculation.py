"""The calculation step's logic: parsing the model's figures, checking them against their passages,
scales and units, and the formula evaluated in code."""

from __future__ import annotations

import pytest
from weaverbird_orchestrator.tasks.calculation import compute, parse_output
from weaverbird_orchestrator.tasks.formula import FormulaError, evaluate, is_percent_scaled, letters

PASSAGES = [
    "Revenue: USD 1,284.6 million, up 16.5% from USD 1,102.9 million in fiscal 2023. Gross margin 41.2%.",
    "| Segment | FY2024 revenue (USD million) |\n| Industrial Automation | 742.1 |\n| Warehouse Systems | 389.5 |",
    "Cash from operations was USD 1.27 billion.",
]


def test_growth_is_computed_in_code_from_the_cited_figures() -> None:
    out = (
        "A: revenue 2024 = USD 1,284.6 million [1]\nB: revenue 2023 = USD 1,102.9 million [1]\n"
        "Formula: (A - B) / B * 100"
    )
    r = compute(out, PASSAGES, "en")
    assert not r.error
    assert r.result == pytest.approx((1284.6 - 1102.9) / 1102.9 * 100)
    assert r.result_text == "16.47%"
    assert "A (revenue 2024) = USD 1,284.6 million [1]" in r.answer
    assert "(A - B) / B * 100 = 16.47%" in r.answer


def test_a_difference_keeps_the_currency_and_scale() -> None:
    out = "A: revenue 2024 = USD 1,284.6 million [1]\nB: revenue 2023 = USD 1,102.9 million [1]\nFormula: A - B"
    r = compute(out, PASSAGES, "en")
    assert r.result == pytest.approx(181.7) and r.unit == "USD million"


def test_an_average_keeps_the_currency_and_scale() -> None:
    out = "A: revenue 2024 = USD 1,284.6 million [1]\nB: revenue 2023 = USD 1,102.9 million [1]\nFormula: (A + B) / 2"
    r = compute(out, PASSAGES, "en")
    assert r.result == pytest.approx(1193.75) and r.unit == "USD million"


def test_an_amount_multiplied_by_100_is_not_a_percentage() -> None:
    figures = "A: revenue 2024 = USD 1,284.6 million [1]\nB: revenue 2023 = USD 1,102.9 million [1]\n"
    r = compute(figures + "Formula: (A + B) / 2 * 100", PASSAGES, "en")
    assert "only a ratio of figures makes a percentage" in r.error and not r.answer
    # An average of percentages is a percentage; their difference is in percentage points.
    figures = "A: margin = 41.2% [1]\nB: growth = 16.5% [1]\n"
    assert compute(figures + "Formula: (A + B) / 2", PASSAGES, "en").result_text == "28.85%"
    assert compute(figures + "Formula: A - B", PASSAGES, "en").result_text == "24.7 percentage points"


def test_a_percentage_of_an_amount_keeps_the_amounts_unit() -> None:
    passages = ["The company had 33,443,500 shares; the holder will sell up to 3.00% of them."]
    out = "A: shares = 33,443,500 [1]\nB: share to sell = 3.00% [1]\nFormula: A * B / 100"
    r = compute(out, passages, "en")
    assert not r.error and r.result_text == "1,003,305"


def test_a_figure_in_no_passage_is_refused() -> None:
    out = "A: revenue 2024 = USD 1,300.0 million [1]\nB: revenue 2023 = USD 1,102.9 million [1]\nFormula: A - B"
    r = compute(out, PASSAGES, "en")
    assert r.error == "A = USD 1,300.0 million is in no passage" and not r.answer


def test_a_figure_cited_to_its_neighbour_is_pointed_at_the_passage_holding_it() -> None:
    out = "A: industrial = 742.1 [1]\nB: warehouse = 389.5 [2]\nFormula: A - B"
    r = compute(out, PASSAGES, "en")
    assert not r.error and [f.passage for f in r.figures] == [2, 2]


def test_scales_are_brought_together_before_computing() -> None:
    out = "A: cash from operations = USD 1.27 billion [3]\nB: revenue = USD 1,102.9 million [1]\nFormula: A - B"
    r = compute(out, PASSAGES, "en")
    assert r.result == pytest.approx(1.27 - 1.1029) and r.unit == "USD billion"


def test_a_percentage_is_not_subtracted_from_an_amount() -> None:
    out = "A: margin = 41.2% [1]\nB: revenue = USD 1,102.9 million [1]\nFormula: A - B"
    assert "percentage and an amount" in compute(out, PASSAGES, "en").error


def test_percentages_subtract_to_percentage_points_and_chinese_renders() -> None:
    out = "A: 毛利率 = 41.2% [1]\nB: 增长率 = 16.5% [1]\nFormula: A - B"
    r = compute(out, PASSAGES, "zh")
    assert r.result == pytest.approx(24.7) and r.unit == "percentage points"
    assert r.answer.startswith("数据：") and "计算：A - B" in r.answer


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("The revenue grew by 181.7 million.", "listed no figures"),
        ("A: revenue = USD 1,284.6 million [1]", "no formula"),
        ("A: revenue = USD 1,284.6 million [1]\nFormula: A - C", "uses C"),
        ("A: revenue = USD 1,284.6 million [9]\nFormula: A * 2", "not given"),
        ("A: revenue = USD 1,284.6 million [1]\nFormula: __import__('os')", "__import__"),
    ],
)
def test_unusable_output_says_why_and_never_raises(output: str, reason: str) -> None:
    r = compute(output, PASSAGES, "en")
    assert reason in r.error and r.result is None


def test_parse_output_reads_bullets_bold_and_full_width_brackets() -> None:
    figures, formula = parse_output("- **A**: 营业收入 = 41.73亿元 【1】\n公式：A / 2")
    assert figures == [("A", "营业收入", "41.73亿元", 1)] and formula == "A / 2"


def test_formula_evaluation_is_arithmetic_only() -> None:
    assert evaluate("(A - B) / B × 100", {"A": 3.0, "B": 2.0}) == pytest.approx(50.0)
    assert letters("(A + B + C) / 3") == {"A", "B", "C"}
    assert is_percent_scaled("(A - B) / B * 100") and not is_percent_scaled("A - B")
    assert not is_percent_scaled("(A + B + C) / 3 * 100")  # a division by a number alone is an average
    for bad in ("A / 0", "A ** 2", "abs(A)", "A.real", ""):
        with pytest.raises(FormulaError):
            evaluate(bad, {"A": 1.0})


def test_one_figure_copied_for_two_items_is_refused() -> None:
    # The passage states this year's profit and the growth rate, not last year's profit: a model that
    # copies 7.09亿元 into both lines would "compute" a change of 0.
    passage = "宝信软件2023年第三季度归属于上市公司股东的净利润7.09亿元，同比增长31.64%。"
    output = "A: 2023年第三季度净利润 = 7.09亿元 [1]\nB: 2022年第三季度净利润 = 7.09亿元 [1]\n公式: (A - B) / B * 100"
    outcome = compute(output, [passage], "zh")
    assert outcome.result is None
    assert "A and B are the same figure" in outcome.error


def test_a_figure_read_twice_is_refused_even_when_the_passage_repeats_it() -> None:
    # News items repeat their headline figure: the repetition is not a second item.
    passage = "【宝信软件：第三季度净利润7.09亿元同比增长31.64%】归属于上市公司股东的净利润7.09亿元，同比增长31.64%。"
    output = "A: 2023年第三季度净利润 = 7.09亿元 [1]\nB: 2022年第三季度净利润 = 7.09亿元 [1]\n公式: (A - B) / B * 100"
    assert "A and B are the same figure" in compute(output, [passage], "zh").error


def test_equal_values_from_different_passages_are_used() -> None:
    passages = ["Capex was 10.0 in 2018 (USD million).", "Capex was 10.0 in 2019 (USD million)."]
    output = "A: capex 2018 = 10.0 [1]\nB: capex 2019 = 10.0 [2]\nFormula: A - B"
    outcome = compute(output, passages, "en")
    assert outcome.error == ""
    assert outcome.result == 0
