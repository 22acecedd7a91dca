"""Catalog coverage signals of the route gate: name candidates, fiscal-period coverage, the verdict."""

from __future__ import annotations

import pytest
from weaverbird_common.coverage import assess, name_candidates, period_covered


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What was 3M's total revenue in fiscal year 2018?", ["3M"]),
        ("What is the FY2018 capital expenditure amount (in USD millions) for 3M?", ["3M"]),
        ("Does AMD have a healthy quick ratio for FY22?", ["AMD"]),
        ("What was Northwind Robotics' revenue in fiscal 2024?", ["Northwind", "Robotics"]),
        ("How is free cash flow calculated?", []),
        ("What Was the Adjusted Non GAAP EBITDA for FY 2023?", []),
        ("Revenue was $3M in FY2023Q1, then 5bn, up 12.5% or 3x.", []),
        ("贵州茅台2023年营业收入是多少？", []),
        ("Is PepsiCo's dividend covered? Pepsico says yes.", ["PepsiCo"]),  # the second starts a sentence
    ],
)
def test_name_candidates(question: str, names: list[str]) -> None:
    assert name_candidates(question) == names


def test_only_the_year_itself_counts_unless_the_next_years_filing_is_allowed() -> None:
    assert period_covered([2022, 2023], 2022)
    assert not period_covered([2023], 2022)
    assert period_covered([2023], 2022, next_year=True)  # its comparative
    assert not period_covered([2023], 2021, next_year=True)
    assert not period_covered([2022, 2023], 2018)
    assert period_covered([0], 2018)  # no year known: nothing says the period is missing


def test_assess_names_the_gap() -> None:
    years = {"3M": [2022, 2023]}
    gap = assess({"company": "3M", "year": 2018}, years, [])
    assert not gap.covered and "no 2018 document of 3M" in gap.reason and "2022, 2023" in gap.reason
    assert assess({"company": "3M", "year": 2022}, years, []).covered
    assert assess({"company": "3M"}, years, ["Zephyr"]).covered  # a KB company is named: names do not matter
    unknown = assess({"year": 2018}, years, ["Zephyr"])
    assert not unknown.covered and "never mentions Zephyr" in unknown.reason
    assert assess({}, years, []).covered
