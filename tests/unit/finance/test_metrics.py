"""The metric library against hand-computed values from a made-up company's statements (in millions)."""

from __future__ import annotations

import pytest
from weaverbird_common.finance import formulas
from weaverbird_common.finance.concepts import CONCEPTS
from weaverbird_common.finance.metrics import METRICS, Input, compute, definition_in_question, metrics_in_text

# Outflows are printed the way cash flow statements and some income statements print them: negative.
THIS_YEAR = {
    "revenue": 1000, "cost_of_revenue": -600, "gross_profit": 400, "sga": 150, "rnd_expense": 50,
    "operating_expenses": 200, "operating_income": 200, "depreciation_amortization": 40, "interest_expense": 20,
    "income_before_tax": 180, "income_tax_expense": 45, "net_income": 135, "net_income_parent": 130,
    "eps_basic": 2.7, "eps_diluted": 2.6, "dividends_per_share": 1.0,
    "cash": 120, "accounts_receivable": 110, "inventory": 90, "total_current_assets": 400, "ppe_net": 500,
    "total_assets": 1200, "accounts_payable": 70, "total_current_liabilities": 250, "short_term_debt": 50,
    "long_term_debt": 300, "total_liabilities": 700, "total_equity": 500,
    "operating_cash_flow": 240, "capital_expenditure": -90, "dividends_paid": -50, "share_repurchases": -30,
    "loans": 800, "deposits": 1000, "noninterest_expense": 60, "net_interest_income": 100, "noninterest_income": 50,
}  # fmt: skip
LAST_YEAR = {
    "revenue": 800, "cost_of_revenue": -500, "gross_profit": 300, "operating_income": 150, "net_income": 100,
    "eps_diluted": 2.0, "dividends_per_share": 0.8, "accounts_receivable": 90, "inventory": 70, "ppe_net": 460,
    "total_assets": 1000, "accounts_payable": 50, "total_equity": 400,
}  # fmt: skip

# Worked by hand from the two statements above (average = (this year + last year) / 2).
EXPECTED = {
    "gross_margin": 400 / 1000,
    "operating_margin": 200 / 1000,
    "net_margin": 135 / 1000,
    "ebitda_margin": (200 + 40) / 1000,
    "ebitda": 240,
    "ebitda_less_capex": 240 - 90,
    "revenue_growth": (1000 - 800) / 800,
    "net_income_growth": (135 - 100) / 100,
    "operating_income_growth": (200 - 150) / 150,
    "gross_profit_growth": (400 - 300) / 300,
    "eps_growth": (2.6 - 2.0) / 2.0,
    "dps_growth": (1.0 - 0.8) / 0.8,
    "working_capital": 400 - 250,
    "current_ratio": 400 / 250,
    "quick_ratio": (400 - 90) / 250,
    "cash_ratio": 120 / 250,
    "dso": 365 * 100 / 1000,
    "dio": 365 * 80 / 600,
    "dpo": 365 * 60 / 600,
    "cash_conversion_cycle": 36.5 + 365 * 80 / 600 - 36.5,
    "inventory_turnover": 600 / 80,
    "receivables_turnover": 1000 / 100,
    "asset_turnover": 1000 / 1100,
    "fixed_asset_turnover": 1000 / 480,
    "capex_to_revenue": 90 / 1000,
    "capex_to_depreciation": 90 / 40,
    "roa": 135 / 1100,
    "roe": 135 / 450,
    "roe_parent": 130 / 450,
    "roic": 200 * (1 - 45 / 180) / (50 + 300 + 500),
    "effective_tax_rate": 45 / 180,
    "interest_coverage": 200 / 20,
    "ebitda_interest_coverage": 240 / 20,
    "payout_ratio": 50 / 130,
    "retention_ratio": (130 - 50) / 130,
    "dps_payout_ratio": 1.0 / 2.6,
    "total_payout_ratio": (50 + 30) / 135,
    "dividend_to_ocf": 50 / 240,
    "free_cash_flow": 240 - 90,
    "fcf_margin": 150 / 1000,
    "fcf_conversion": 150 / 135,
    "cash_flow_to_net_income": 240 / 135,
    "operating_cash_flow_ratio": 240 / 250,
    "operating_cash_flow_margin": 240 / 1000,
    "debt_to_equity": 350 / 500,
    "long_term_debt_to_equity": 300 / 500,
    "net_gearing": (50 + 300 - 120) / 500,
    "payables_turnover": 600 / 60,
    "liabilities_to_equity": 700 / 500,
    "debt_to_assets": 350 / 1200,
    "debt_to_capital": 350 / 850,
    "liabilities_to_assets": 700 / 1200,
    "equity_ratio": 500 / 1200,
    "net_debt": 350 - 120,
    "net_debt_to_ebitda": 230 / 240,
    "equity_multiplier": 1200 / 500,
    "rnd_to_revenue": 50 / 1000,
    "sga_to_revenue": 150 / 1000,
    "cogs_to_revenue": 600 / 1000,
    "opex_ratio": 200 / 1000,
    "pretax_margin": 180 / 1000,
    "loan_to_deposit": 800 / 1000,
    "cost_income_ratio": 60 / (100 + 50),
}


def lookup_in(this_year: dict[str, float], last_year: dict[str, float]):
    def lookup(concept: str, period: str) -> float | None:
        return (this_year if period == "t" else last_year).get(concept)

    return lookup


LOOKUP = lookup_in(THIS_YEAR, LAST_YEAR)


def test_the_library_holds_at_least_forty_metrics_each_checked_here() -> None:
    assert len(METRICS) >= 40
    assert set(METRICS) == set(EXPECTED)


@pytest.mark.parametrize("metric_id", sorted(EXPECTED))
def test_each_metric_against_its_hand_computed_value(metric_id: str) -> None:
    metric = METRICS[metric_id]
    computed = compute(metric, LOOKUP)
    assert computed is not None
    assert computed.value == pytest.approx(EXPECTED[metric_id], rel=1e-9)
    assert computed.unit == metric.unit
    assert set(computed.used) == set(metric.inputs)


@pytest.mark.parametrize("metric", METRICS.values(), ids=lambda m: m.id)
def test_every_metric_is_well_formed(metric) -> None:
    assert metric.unit in {"percent", "ratio", "times", "days", "currency", "per_share"}
    assert formulas.names(metric.expression) == set(metric.inputs)
    assert all(i.concept in CONCEPTS and i.period in {"t", "t-1", "avg"} for i in metric.inputs.values())
    assert "=" in metric.description and metric.en
    for expression, inputs in metric.alternatives:
        assert formulas.names(expression) == set(inputs)
    if any(i.period == "avg" for i in metric.inputs.values()):
        assert "average" in metric.description


def test_the_formula_shows_the_figures_and_the_result() -> None:
    computed = compute(METRICS["gross_margin"], LOOKUP)
    assert computed is not None
    assert computed.formula == "400 / 1,000 = 40.0 %"
    assert computed.used == {"g": ("gross_profit", "t", 400), "r": ("revenue", "t", 1000)}
    dso = compute(METRICS["dso"], LOOKUP)
    assert dso is not None and dso.formula == "365 x 100 / 1,000 = 36.50 days"
    assert dso.used["r"] == ("accounts_receivable", "avg", 100)


def test_outflows_count_as_magnitudes_whatever_sign_is_printed() -> None:
    positive = dict(THIS_YEAR, capital_expenditure=90, cost_of_revenue=600)
    for metric_id in ("free_cash_flow", "gross_margin", "dio", "capex_to_revenue"):
        signed = compute(METRICS[metric_id], LOOKUP)
        unsigned = compute(METRICS[metric_id], lookup_in(positive, LAST_YEAR))
        assert signed is not None and unsigned is not None
        assert signed.value == pytest.approx(unsigned.value)
    assert compute(METRICS["free_cash_flow"], LOOKUP).value == 150  # type: ignore[union-attr]


def test_a_missing_input_falls_back_to_the_alternative_formula() -> None:
    without_gross_profit = {k: v for k, v in THIS_YEAR.items() if k != "gross_profit"}
    computed = compute(METRICS["gross_margin"], lookup_in(without_gross_profit, LAST_YEAR))
    assert computed is not None
    assert computed.value == pytest.approx((1000 - 600) / 1000)
    assert set(computed.used) == {"r", "c"}
    without_parent = {k: v for k, v in THIS_YEAR.items() if k != "net_income_parent"}
    payout = compute(METRICS["payout_ratio"], lookup_in(without_parent, LAST_YEAR))
    assert payout is not None and payout.value == pytest.approx(50 / 135)


def test_a_reported_total_debt_stands_in_for_its_parts() -> None:
    only_total = {k: v for k, v in THIS_YEAR.items() if k not in ("short_term_debt", "long_term_debt")}
    only_total["total_debt"] = 400
    lookup = lookup_in(only_total, LAST_YEAR)
    assert compute(METRICS["debt_to_equity"], lookup).value == pytest.approx(400 / 500)  # type: ignore[union-attr]
    assert compute(METRICS["net_debt"], lookup).value == pytest.approx(400 - 120)  # type: ignore[union-attr]
    assert compute(METRICS["debt_to_capital"], lookup).value == pytest.approx(400 / 900)  # type: ignore[union-attr]


def test_a_missing_input_or_a_zero_divisor_gives_none() -> None:
    assert compute(METRICS["revenue_growth"], lookup_in(THIS_YEAR, {})) is None  # no prior year
    assert compute(METRICS["roe"], lookup_in(THIS_YEAR, {})) is None  # no opening balance for the average
    assert compute(METRICS["interest_coverage"], lookup_in(dict(THIS_YEAR, interest_expense=0), LAST_YEAR)) is None
    assert compute(METRICS["ebitda"], lookup_in({}, {})) is None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the FY2019 capex as a % of revenue for Acme?", ["capex_to_revenue"]),
        ("What is Acme's FY2018 days payable outstanding (DPO)?", ["dpo"]),
        ("Compute the quick ratio and the current ratio for FY2020.", ["quick_ratio", "current_ratio"]),
        ("What is the gross profit margin in fiscal 2023?", ["gross_margin"]),
        ("What is the FY2021 unadjusted EBITDA % margin?", ["ebitda_margin"]),
        ("What is the FY2022 return on assets?", ["roa"]),
        ("What was the free cash flow margin?", ["fcf_margin"]),
        ("Is Acme's free cashflow conversion improving?", ["fcf_conversion"]),  # "cashflow": one word
        ("What is the free-cash-flow margin?", ["fcf_margin"]),
        ("2022年的毛利率和资产负债率是多少？", ["gross_margin", "liabilities_to_assets"]),
        ("公司2021年净资产收益率", ["roe"]),
        ("应收账款周转天数和存货周转率", ["dso", "inventory_turnover"]),
        ("2023年营业收入增长率", ["revenue_growth"]),
        ("自由现金流是多少", ["free_cash_flow"]),
        ("净负债率和应付账款周转率", ["net_gearing", "payables_turnover"]),
        ("息税前利润率和总资产净利率", ["operating_margin", "roa"]),
        ("What was total revenue in 2017?", []),
    ],
)
def test_metrics_a_question_names(question: str, expected: list[str]) -> None:
    assert [m.id for m in metrics_in_text(question)] == expected


def test_the_asked_metric_comes_before_the_term_a_definition_defines() -> None:
    asked = "What is the FY2021 unadjusted EBITDA % margin? Define unadjusted EBITDA as operating income + D&A."
    assert [m.id for m in metrics_in_text(asked)] == ["ebitda_margin", "ebitda"]
    later = "Define unadjusted EBITDA as operating income + D&A. What is the FY2021 EBITDA less capex?"
    assert [m.id for m in metrics_in_text(later)] == ["ebitda_less_capex", "ebitda"]


def test_a_change_in_a_margin_is_not_growth_of_the_item() -> None:
    found = [m.id for m in metrics_in_text("What is the change in operating income % margin from FY2019 to FY2020?")]
    assert found == ["operating_margin"]


FIXED_ASSET_TURNOVER = (
    "What is the FY2018 fixed asset turnover ratio for Acme? Fixed asset turnover ratio is defined as: "
    "FY2018 revenue / (average PP&E between FY2017 and FY2018). Round your answer to two decimal places."
)


@pytest.mark.parametrize(
    ("question", "unit", "value"),
    [
        (FIXED_ASSET_TURNOVER, "times", 1000 / 480),
        (
            "What is Acme's FY2019 DPO? DPO is defined as: 365 * (average accounts payable between FY2018 and "
            "FY2019) / (FY2019 COGS + change in inventory between FY2018 and FY2019). Round to two decimals.",
            "days",
            365 * 60 / (600 + (90 - 70)),
        ),
        (
            "Return on assets is defined as: FY2020 net income / (average total assets between FY2019 and FY2020). "
            "What is it? Answer in units of percents.",
            "percent",
            135 / 1100,
        ),
    ],
    ids=["fixed-asset-turnover", "dpo-with-a-change-in-inventory", "roa-with-prior-year-items-in-percent"],
)
def test_a_metric_defined_in_the_question_is_computed_in_its_unit(question: str, unit: str, value: float) -> None:
    metric = definition_in_question(question)
    assert metric is not None and metric.unit == unit
    computed = compute(metric, LOOKUP)
    assert computed is not None and computed.value == pytest.approx(value)


def test_a_definition_in_the_question_overrides_the_library() -> None:
    metric = definition_in_question(FIXED_ASSET_TURNOVER)
    assert metric is not None
    assert metric.inputs == {"a": Input("revenue", "t"), "b": Input("ppe_net", "avg")}
    assert "as the question defines it" in metric.description


def test_a_definition_reads_prior_year_items() -> None:
    growth = definition_in_question("Growth is defined as: (FY2020 revenue - FY2019 revenue) / FY2019 revenue.")
    assert growth is not None
    assert [i.period for i in growth.inputs.values()] == ["t", "t-1", "t-1"]
    assert compute(growth, LOOKUP).value == pytest.approx(0.25)  # type: ignore[union-attr]


def test_a_defined_metric_is_shown_in_the_question_s_words_with_the_library_s_unit() -> None:
    roe = definition_in_question("ROE is defined as net income / total shareholders' equity. What was it in 2020?")
    assert roe is not None and roe.unit == "percent"  # the library's ROE is a percent
    assert roe.description == "ROE = net income / total shareholders' equity (as the question defines it)"
    assert roe.inputs == {"a": Input("net_income", "t"), "b": Input("total_equity", "t")}
    turnover = definition_in_question("Inventory turnover is defined as: cost of goods sold / average inventory.")
    assert turnover is not None and turnover.unit == "times"
    quick = definition_in_question(
        "Define the quick ratio as (cash and cash equivalents + short-term investments + accounts receivable) "
        "/ current liabilities."
    )
    assert quick is not None and quick.en == ("quick ratio",)
    assert [i.concept for i in quick.inputs.values()] == [
        "cash", "short_term_investments", "accounts_receivable", "total_current_liabilities"
    ]  # fmt: skip
    values = {"short_term_investments": 30}
    computed = compute(quick, lambda c, p: values.get(c, THIS_YEAR.get(c)) if p == "t" else None)
    assert computed is not None and computed.value == pytest.approx((120 + 30 + 110) / 250)


def test_no_definition_when_the_question_states_none_or_names_no_line_item() -> None:
    assert definition_in_question("What is the FY2019 capex as a % of revenue?") is None
    assert definition_in_question("Success is defined as: happy customers and loyal staff.") is None


def test_formulas_evaluate_arithmetic_only() -> None:
    assert formulas.evaluate("(a - b) / b", {"a": 3, "b": 2}) == 0.5
    with pytest.raises(ValueError):
        formulas.evaluate("__import__('os')", {})
    with pytest.raises(ValueError):
        formulas.evaluate("a ** b", {"a": 2, "b": 3})
