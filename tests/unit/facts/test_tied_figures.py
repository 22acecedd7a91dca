"""Choosing among tied figures: a table's "Total" line wins; tied figures in different tables stay a conflict."""

from __future__ import annotations

from weaverbird_common.facts.model import Fact, Period
from weaverbird_common.facts.select import Conflict, pick_fact


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
