"""The shared financial glossary: one concept for the wordings of filings and questions, in either language."""

from __future__ import annotations

import pytest
from weaverbird_common.glossary import _COMPONENTS, _ENTRIES, components, concepts, document_concepts


@pytest.mark.parametrize(
    ("text", "concept"),
    [
        ("Purchases of property, plant and equipment (PP&E)", "§capex"),
        ("What was the FY2018 capital expenditure?", "§capex"),
        ("2023年购建固定资产支付的现金", "§capex"),
        ("Cost of sales", "§cost_of_revenue"),
        ("Total current liabilities", "§current_liabilities"),
        ("归母净利润", "§net_income"),
        ("Repurchases of common stock", "§buyback"),
        ("CONSOLIDATED STATEMENTS OF CASH FLOWS", "§cash_flow_statement"),
        ("Consolidated Statement of Financial Position", "§balance_sheet"),
        ("合并利润表", "§income_statement"),
    ],
)
def test_each_wording_gives_its_concept(text: str, concept: str) -> None:
    assert concept in concepts(text)


def test_a_word_inside_another_word_is_no_concept() -> None:
    # "cash" alone is not "cash and cash equivalents"; "inventory" must not fire inside "inventorying"-like text.
    assert "§cash" not in concepts("cash dividends declared")
    assert "§roe" not in concepts("the Monroe plant")


def test_a_ratio_brings_the_line_items_it_is_computed_from() -> None:
    found = concepts("What is the quick ratio of AMD for FY2022?")
    assert found == {"§quick_ratio"}
    assert components(found) == {
        "§current_assets",
        "§current_liabilities",
        "§cash",
        "§receivables",
        "§inventory",
        "§balance_sheet",
    }


def test_components_leave_out_what_the_question_names_itself() -> None:
    found = concepts("gross margin and revenue in 2023")
    assert "§revenue" in found
    assert "§revenue" not in components(found)
    assert "§cost_of_revenue" in components(found)


def test_every_component_is_a_concept_of_the_glossary() -> None:
    for ratio, parts in _COMPONENTS.items():
        assert ratio in _ENTRIES
        assert all(part in _ENTRIES for part in parts)


def test_every_wording_of_a_concept_needs_whole_words() -> None:
    # Each alternative of a concept is bounded by non-letters, not only the first and the last one.
    assert "§debt" in concepts("Total debt rose")
    assert "§debt" not in concepts("Subtotal debt rose")
    assert "§revenue" not in concepts("the subtotal sales line")


@pytest.mark.parametrize(
    "text",
    [
        "Net sales and cost of sales; gross profit margin improved. Purchases of property, plant and equipment.",
        "CONSOLIDATED BALANCE SHEETS Total current assets Total current liabilities Long-term debt Goodwill",
        "2024年第三季度营业收入同比增长，归母净利润下降，经营活动产生的现金流量净额为正",
        "Quick ratio, working capital, days payable outstanding and return on average equity (ROE)",
    ],
)
def test_the_one_pass_scan_finds_what_a_search_per_concept_finds(text: str) -> None:
    import re

    lowered = text.lower()
    expected = {
        f"§{name}"
        for name, (english, chinese) in _ENTRIES.items()
        if re.search(rf"(?<![a-z])(?:{english})(?![a-z])", lowered) or any(term in text for term in chinese)
    }
    assert concepts(text) == expected
    assert expected  # the texts do mention concepts


def test_a_chunk_listing_the_statements_is_indexed_under_none_of_them() -> None:
    auditor = (
        "We have audited the accompanying consolidated balance sheets of the Company as of December 31, 2018 "
        "and 2017, and the related consolidated statements of operations, comprehensive income and cash flows."
    )
    assert {"§balance_sheet", "§income_statement"} <= concepts(auditor)
    assert not document_concepts(auditor) & {"§balance_sheet", "§income_statement", "§cash_flow_statement"}
    # The statement itself keeps its name, and a list keeps its other concepts.
    sheet = "CONSOLIDATED BALANCE SHEETS (In millions) Accounts payable 1,355 Total current liabilities 3,360"
    assert "§balance_sheet" in document_concepts(sheet)
    assert "§equity" in document_concepts(auditor + " Stockholders' equity was audited too.")
