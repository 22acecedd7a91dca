"""General reading rules for statements as filings print them: titles and labels whose spaces pypdf lost,
statements of part of the group, a table's "Total" line among tied figures, ", net of ..." qualifiers."""

from __future__ import annotations

import pytest
from weaverbird_common.facts.model import Fact, Period
from weaverbird_common.facts.select import Conflict, pick_fact
from weaverbird_common.facts.statements import statement_kind
from weaverbird_common.finance.concepts import concept_for_label


@pytest.mark.parametrize(
    ("title", "kind"),
    [
        ("WalmartInc. ConsolidatedStatementsofIncome", "income"),
        ("ConsolidatedBalanceSheets", "balance"),
        ("Consolidated Statements of Cash Flows", "cash_flow"),
        ("Deed of Cross Guarantee Consolidated Balance Sheets", "other"),
        ("Condensed Consolidating Statements of Income", "other"),
        ("Parent Company Only Balance Sheets", "other"),
        ("母公司资产负债表", "other"),
        ("合并资产负债表", "balance"),
    ],
)
def test_statement_kind(title: str, kind: str) -> None:
    assert statement_kind(title) == kind


@pytest.mark.parametrize(
    ("label", "concept"),
    [
        ("Operatingincome", "operating_income"),
        ("Totalcurrentassets", "total_current_assets"),
        ("Capital expenditures, net of construction payable", "capital_expenditure"),
        ("Membershipandotherincomeitems", None),  # glued, but no line item
    ],
)
def test_concept_for_label(label: str, concept: str | None) -> None:
    assert concept_for_label(label) == concept


def _revenue(label: str, value: float, table: str = "Consolidated Statements of Income") -> Fact:
    return Fact(
        document_id="wren-2019", company="WREN", page=48, table=table, statement="income", label=label,
        concept="revenue", period=Period(2019), value=value, scale=1e6, unit="currency", currency="USD",
        title="Wren 10-K", source="wren.pdf",
    )  # fmt: skip


def test_the_total_line_of_one_table_wins_a_tie_and_different_tables_stay_a_conflict() -> None:
    same_table = [_revenue("Net sales", 510.3), _revenue("Total revenues", 514.4)]
    picked = pick_fact(same_table, "revenue", 2019)
    assert isinstance(picked, Fact) and picked.label == "Total revenues"
    two_tables = [_revenue("Net sales", 510.3), _revenue("Total revenues", 514.4, table="Selected data")]
    assert isinstance(pick_fact(two_tables, "revenue", 2019), Conflict)
