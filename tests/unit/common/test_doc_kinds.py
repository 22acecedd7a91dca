"""Kinds of document a question names, and which of them a company's documents lack."""

from __future__ import annotations

import pytest
from weaverbird_common.doc_kinds import asked_kinds, missing_kind


@pytest.mark.parametrize(
    ("question", "shown"),
    [
        ("What are three main companies acquired by Pfizer mentioned in this 10K report?", ["10-K or annual report"]),
        ("Per the Form 10-K, what was 3M's FY2022 capex?", ["10-K or annual report"]),
        ("What does Amcor's annual report say about restructuring?", ["10-K or annual report"]),
        ("In the Q2 10-Q, how much cash did Best Buy hold?", ["10-Q or quarterly report"]),
        ("What did the 8-K of May 30, 2023 announce?", ["8-K"]),
        ("What did the earnings release say about guidance?", ["earnings release"]),
        ("青松新能源2024年年度报告中的净利润是多少？", ["年度报告"]),
        ("青松新能源2024年半年度报告中的营业收入是多少？", ["半年度报告"]),
        ("根据第三季度报告，营业收入是多少？", ["季度报告"]),
        # No kind named; "$10K" is ten thousand dollars, not a form.
        ("What was Netflix's total revenue in 2017?", []),
        ("Which products cost more than $10K per unit?", []),
        ("青松新能源2023年报告期内的营业收入是多少？", []),  # 2023年 + 报告期 (the reporting period)
    ],
)
def test_asked_kinds(question: str, shown: list[str]) -> None:
    assert [s for s, _ in asked_kinds(question)] == shown


def test_missing_kind_needs_every_document_of_the_company_typed() -> None:
    asked = asked_kinds("What are three main companies acquired by Pfizer mentioned in this 10K report?")
    assert missing_kind(asked, ["10Q"]) == "10-K or annual report"
    assert missing_kind(asked, ["10Q", "10K"]) == ""
    assert missing_kind(asked, ["20F"]) == ""  # a foreign filer's annual report
    assert missing_kind(asked, []) == ""  # some document of unknown kind: it may be the 10-K
    assert missing_kind(asked_kinds("What was Pfizer's revenue in 2023?"), ["10Q"]) == ""
    assert missing_kind(asked_kinds("The earnings release's EPS?"), ["8K"]) == ""  # furnished on an 8-K
