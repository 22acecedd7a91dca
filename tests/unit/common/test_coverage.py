"""Catalog coverage signals of the route gate: name candidates, fiscal-period coverage, the verdict."""

from __future__ import annotations

from datetime import date

import pytest
from weaverbird_common.coverage import (
    assess,
    company_names,
    known_as,
    name_candidates,
    names_to_look_up,
    period_covered,
    quarter_covered,
    unknown_companies,
)
from weaverbird_common.doc_kinds import asked_kinds


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


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What is the quantity of restructuring costs in AES Corporation's income statements?", ["AES"]),
        ("Roughly how many times has AES Corporation sold its inventory in FY2022?", ["AES"]),
        ("What is Kraft Heinz's FY2019 inventory turnover ratio?", ["Kraft Heinz"]),
        ("Are JPM's gross margins historically consistent?", ["JPM"]),  # "Are" is a question word
        ("What are American Water Works' total assets?", ["American Water Works"]),
        ("What was the Coca-Cola Company's revenue?", ["Coca-Cola"]),
        ("How did the Americas' revenue change?", []),  # a region: "the" and no legal form
        ("What was the Company's revenue?", []),
        ("In 2019, what was Best Buy's revenue?", ["Best Buy"]),
        ("Is Verizon a capital intensive business based on FY 2022 data?", []),  # not written as a company's
        ("Let's compare revenue in 2021 and 2022. What's the change?", []),
        ("What was Greater China's share of revenue?", []),  # a place
        ("What does Management's Discussion say about Total Stockholders' Equity?", []),
    ],
)
def test_company_names(question: str, names: list[str]) -> None:
    assert company_names(question) == names


def test_unknown_companies_are_the_names_no_catalog_entry_matches() -> None:
    known = ["BESTBUY", "Best Buy", "ADOBE", "3M"]
    assert unknown_companies("What is Kraft Heinz's inventory turnover?", known) == ["Kraft Heinz"]
    assert unknown_companies("In 2019, what was Best Buy's revenue?", known) == []
    assert unknown_companies("Among Adobe's segments, which grew fastest?", known) == []  # "Among" dropped
    assert unknown_companies("Does 3M Company pay a dividend?", known) == []
    assert unknown_companies("What was AES Corporation's capex?", ["AES_CORPORATION"]) == []  # its short name
    assert unknown_companies("What was McDonald's revenue?", ["MCDONALDS"]) == []  # the "'s" is the name's
    # A catalog without companies cannot say one is missing.
    assert unknown_companies("What is Kraft Heinz's inventory turnover?", []) == []


def test_a_short_name_stands_for_the_known_company_it_starts() -> None:
    known = ["MGMRESORTS", "AMERICANEXPRESS", "AMERICANWATERWORKS", "3M", "AES_CORPORATION", "METALSCORP"]
    assert known_as("MGM", known) == "MGMRESORTS"  # a file-name key cannot be split into words
    assert known_as("MGM Resorts", known) == "MGMRESORTS"
    assert known_as("AMERICAN", known) == "AMERICANEXPRESS"  # several start with it: the shortest
    assert known_as("AES", known) == "AES_CORPORATION"  # its short name, exactly
    assert known_as("3M", known) == "3M"
    assert known_as("AM", known) == ""  # two letters start too many names to count
    assert known_as("Meta", known) == ""  # a word, not an abbreviation: another company
    assert known_as("Kraft Heinz", known) == ""
    assert unknown_companies("What was MGM's EBITDAR in 2022?", known) == []
    assert names_to_look_up("What did MGM and Zephyr report?", known, 4) == ["Zephyr"]


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
    assert gap.gap == "period"
    assert assess({"company": "3M", "year": 2022}, years, []).covered
    assert assess({"company": "3M"}, years, ["Zephyr"]).covered  # a KB company is named: names do not matter
    unknown = assess({"year": 2018}, years, ["Zephyr"])
    assert not unknown.covered and "never mentions Zephyr" in unknown.reason and unknown.gap == "name"
    assert assess({}, years, []).covered
    missing = assess({"year": 2019}, years, ["Zephyr"], missing_companies=["Kraft Heinz"])
    assert not missing.covered and missing.reason == "the knowledge base holds no document of Kraft Heinz"
    assert missing.gap == "company" and assess({}, years, []).gap == ""


def test_a_quarter_needs_a_document_for_that_quarter() -> None:
    quarters = [(2023, 2), (2023, 4)]
    assert quarter_covered(quarters, [2022, 2023], 2023, 2)
    assert not quarter_covered(quarters, [2022, 2023], 2023, 1)
    assert not quarter_covered(quarters, [2022, 2023], 2022, 2)
    # The year's annual report closes Q4 only when asked.
    assert not quarter_covered([], [2022], 2022, 4)
    assert quarter_covered([], [2022], 2022, 4, annual_q4=True)
    assert not quarter_covered([], [2022], 2022, 3, annual_q4=True)
    assert quarter_covered([], [0], 2022, 2)  # no year known: nothing says the quarter is missing


def test_assess_checks_the_quarter_only_with_the_catalogs_quarters() -> None:
    years, quarters = {"AMCOR": [2022, 2023]}, {"AMCOR": [(2023, 4)]}
    asked = {"company": "AMCOR", "year": 2023, "quarter": 2}
    assert assess(asked, years, []).covered  # a catalog without quarters: the year decides
    gap = assess(asked, years, [], company_quarters=quarters)
    assert not gap.covered and "no 2023 Q2 document of AMCOR" in gap.reason and "2023 Q4" in gap.reason
    assert gap.gap == "quarter"
    assert assess({**asked, "quarter": 4}, years, [], company_quarters=quarters).covered
    none = assess(asked, years, [], company_quarters={})
    assert not none.covered and "no quarterly documents" in none.reason
    # The year's check comes first and says what is missing.
    assert "no 2021 document" in assess({**asked, "year": 2021}, years, [], company_quarters=quarters).reason


def test_too_few_of_the_questions_words_in_any_passage_is_a_gap_only_without_a_kb_company() -> None:
    years = {"3M": [2022]}
    thin = assess({}, years, [], term_coverage=0.4, min_term_coverage=0.55)
    assert not thin.covered and thin.gap == "terms" and "at best 40%" in thin.reason and "55%" in thin.reason
    assert assess({}, years, [], term_coverage=0.6, min_term_coverage=0.55).covered
    assert assess({"year": 2019}, years, [], term_coverage=0.55, min_term_coverage=0.55).covered  # at the minimum
    assert "at best 54%" in assess({}, years, [], term_coverage=0.5499, min_term_coverage=0.55).reason
    # A KB company is named: the catalog decides (a filing's wording differs from the question's).
    assert assess({"company": "3M", "year": 2022}, years, [], term_coverage=0.1, min_term_coverage=0.55).covered
    # Not measured (an older retriever) or the rule off: nothing is read into it.
    assert assess({}, years, [], term_coverage=None, min_term_coverage=0.55).covered
    assert assess({}, years, [], term_coverage=0.0, min_term_coverage=0.0).covered
    # A name no chunk mentions is the more telling reason and is given first.
    assert assess({}, years, ["Zephyr"], term_coverage=0.1, min_term_coverage=0.55).gap == "name"


def test_a_date_after_the_companys_newest_document_is_a_gap() -> None:
    years, latest = {"PEPSICO": [2022, 2023]}, {"PEPSICO": "2023-05-05"}
    asked = {"company": "PEPSICO", "year": 2023}
    gap = assess(asked, years, [], asked_date=date(2023, 5, 26), latest_dates=latest)
    assert not gap.covered and gap.gap == "date"
    assert gap.reason == "the newest document of PEPSICO in the knowledge base is dated 2023-05-05, before 2023-05-26"
    assert assess(asked, years, [], asked_date=date(2023, 5, 5), latest_dates=latest).covered  # that day itself
    assert assess(asked, years, [], asked_date=date(2023, 5, 3), latest_dates=latest).covered
    assert assess(asked, years, [], latest_dates=latest).covered  # the question names no date
    # Some of the company's pages carry no date (no entry), or no KB company is named: nothing to compare.
    assert assess(asked, years, [], asked_date=date(2023, 5, 26), latest_dates={}).covered
    assert assess({"year": 2023}, years, [], asked_date=date(2023, 5, 26), latest_dates=latest).covered
    # The year's check comes first and says what is missing.
    assert assess({**asked, "year": 2024}, years, [], asked_date=date(2024, 1, 2), latest_dates=latest).gap == "period"


def test_a_kind_of_document_the_company_has_none_of_is_a_gap() -> None:
    years, kinds = {"PFIZER": [2023]}, {"PFIZER": ["10Q"]}
    asked = asked_kinds("What are three main companies acquired by Pfizer mentioned in this 10K report?")
    gap = assess({"company": "PFIZER"}, years, [], asked_kinds=asked, company_kinds=kinds)
    assert not gap.covered and gap.gap == "kind"
    assert gap.reason == "the knowledge base holds no 10-K or annual report of PFIZER (it has 10Q)"
    assert assess({"company": "PFIZER"}, years, [], asked_kinds=asked, company_kinds={"PFIZER": ["10Q", "10K"]}).covered
    # Kinds not all known (no entry), no KB company named, or no kind asked: nothing to compare.
    assert assess({"company": "PFIZER"}, years, [], asked_kinds=asked, company_kinds={}).covered
    assert assess({}, years, [], asked_kinds=asked, company_kinds=kinds).covered
    assert assess({"company": "PFIZER"}, years, [], company_kinds=kinds).covered
