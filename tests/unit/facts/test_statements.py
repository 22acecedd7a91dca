"""Which statement a table is, from its title and the top of its page (filing layouts written for the test)."""

from __future__ import annotations

from weaverbird_common.facts.statements import page_top_kind, statement_kind


def test_a_title_ending_with_the_statements_name_is_that_statement() -> None:
    assert statement_kind("ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA INCOME STATEMENTS") == "income"
    assert statement_kind("PART II BALANCE SHEETS") == "balance"
    assert statement_kind("Segment information: income statement items by region") == "other"


def test_a_heading_in_capitals_is_no_prose_mention() -> None:
    heading = "Table of Contents PART II ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA INCOME STATEMENTS (In"
    assert page_top_kind(heading) == "income"
    prose = "Amounts are reclassified to the income statements when the hedged item affects earnings. Other"
    assert page_top_kind(prose) == "other"
