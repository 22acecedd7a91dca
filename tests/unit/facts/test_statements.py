"""Which statement a table is, from its title and the top of its page (filing layouts written for the test)."""

from __future__ import annotations

from weaverbird_common.facts.statements import page_top_kind, statement_kind


def test_a_title_ending_with_the_statements_name_is_that_statement() -> None:
    assert statement_kind("ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA INCOME STATEMENTS") == "income"
    assert statement_kind("PART II BALANCE SHEETS") == "balance"
    assert statement_kind("Segment information: income statement items by region") == "other"


def test_a_title_whose_spaces_were_lost_is_read_and_a_part_of_the_group_is_a_note() -> None:
    glued = {"WalmartInc. ConsolidatedStatementsofIncome": "income", "ConsolidatedBalanceSheets": "balance"}
    assert {title: statement_kind(title) for title in glued} == glued
    # Guarantor and parent-only statements beside the group's own: read as notes, the group's figure wins.
    parts = ("Deed of Cross Guarantee Consolidated Balance Sheets", "Condensed Consolidating Statements of Income",
             "Parent Company Only Balance Sheets", "母公司资产负债表")  # fmt: skip
    assert [statement_kind(t) for t in parts] == ["other"] * 4
    assert statement_kind("合并资产负债表") == "balance"
    # A note's caption naming the statement in prose is not the statement.
    assert statement_kind("the amounts affecting the Consolidated Statements of Income") == "other"
    assert statement_kind("Table of Contents Consolidated Statements of Income") == "income"


def test_a_heading_in_capitals_is_no_prose_mention() -> None:
    heading = "Table of Contents PART II ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA INCOME STATEMENTS (In"
    assert page_top_kind(heading) == "income"
    prose = "Amounts are reclassified to the income statements when the hedged item affects earnings. Other"
    assert page_top_kind(prose) == "other"
