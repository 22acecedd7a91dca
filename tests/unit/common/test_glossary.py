"""The shared financial glossary: one concept for the wordings of filings and questions, in either language."""

from __future__ import annotations

import pytest
from weaverbird_common.glossary import _COMPONENTS, _ENTRIES, components, concepts, document_concepts
from weaverbird_common.statement_rows import statement_rows


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


def test_a_caption_broken_across_lines_still_names_its_statement() -> None:
    # pypdf's text layer breaks a statement's title over lines ("BALANCE\nSHEETS").
    assert "§balance_sheet" in concepts("CONSOLIDATED\nBALANCE\nSHEETS (In thousands)")
    assert "§income_statement" in concepts("CONSOLIDATED STATEMENTS OF\n OPERATIONS(in millions)")


# A statement chunk whose title the PDF text layer broke ("Shee t"); pypdf puts a row's numbers before
# the next row's label, and a label's own numbers on the next line.
_BROKEN_TITLE_BALANCE_SHEET = """Consolidated Balance Shee
t
(Dollars in millions) 2018 2017 Total current assets
$ 14,277 $ 14,171 Property, plant and equipment, net
8,738 8,866 Total assets
$ 36,500 $ 37,987 Total current liabilities
7,244 7,687 Total equity
9,848 11,622"""


def test_a_statement_is_known_by_its_rows_beside_figures() -> None:
    assert statement_rows(_BROKEN_TITLE_BALANCE_SHEET) == {"§balance_sheet"}
    assert "§balance_sheet" in document_concepts(_BROKEN_TITLE_BALANCE_SHEET)
    markdown = "| Net sales | 1,200 | 1,100 |\n| Cost of sales | (700) | (650) |\n| Gross profit | 500 | 450 |"
    assert statement_rows(markdown) == {"§income_statement"}
    chinese = (
        "| 经营活动产生的现金流量净额 | 1,234 |\n"
        "| 投资活动产生的现金流量净额 | -56 |\n"
        "| 筹资活动产生的现金流量净额 | 7 |"
    )
    assert statement_rows(chinese) == {"§cash_flow_statement"}


def test_prose_naming_the_rows_is_no_statement() -> None:
    prose = "Total assets rose while total liabilities fell, and total equity grew on net income of the year."
    assert statement_rows(prose) == set()
    # Two captions beside figures are not enough: a results table of two lines is not the statement.
    assert statement_rows("Net sales $ 1,200 and gross profit $ 500 were reported.") == set()


def test_a_margin_also_asks_for_the_income_statement() -> None:
    assert "§income_statement" in components(concepts("Are Acme's gross margins consistent?"))
