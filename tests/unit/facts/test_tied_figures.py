"""Choosing among tied figures: a table's "Total" line wins (in one filing or in every filing that prints both),
the full statements win over condensed ones; tied figures with no such reason stay a conflict."""

from __future__ import annotations

from weaverbird_common.facts.model import Fact, Period
from weaverbird_common.facts.select import Conflict, pick_fact


def _revenue(
    label: str, value: float, table: str = "Consolidated Statements of Income", document: str = "wren-2019"
) -> Fact:
    return Fact(
        document_id=document, company="WREN", page=48, table=table, statement="income", label=label,
        concept="revenue", period=Period(2019), value=value, scale=1e6, unit="currency", currency="USD",
        title="Wren 10-K", source="wren.pdf",
    )  # fmt: skip


def test_the_total_line_of_one_table_wins_a_tie_and_different_tables_stay_a_conflict() -> None:
    same_table = [_revenue("Net sales", 510.3), _revenue("Total revenues", 514.4)]
    picked = pick_fact(same_table, "revenue", 2019)
    assert isinstance(picked, Fact) and picked.label == "Total revenues"
    two_tables = [_revenue("Net sales", 510.3), _revenue("Total revenues", 514.4, table="Selected data")]
    assert isinstance(pick_fact(two_tables, "revenue", 2019), Conflict)


def test_the_total_wins_when_two_filings_each_print_the_item_and_its_total() -> None:
    both = [
        *(
            _revenue(label, value, document="wren-2019")
            for label, value in (("Net sales", 510.3), ("Total revenues", 514.4))
        ),
        *(
            _revenue(label, value, document="wren-2020")
            for label, value in (("Net sales", 510.3), ("Total revenues", 514.4))
        ),
    ]
    picked = pick_fact(both, "revenue", 2019)
    assert isinstance(picked, Fact) and picked.amount == 514.4e6


def test_the_full_statement_wins_over_a_condensed_one_and_two_full_ones_stay_a_conflict() -> None:
    full = _revenue("Net sales", 94.9, document="wren-10k")
    condensed = _revenue("Net sales", 23.1, table="Condensed Consolidated Statement of Earnings", document="wren-8k")
    picked = pick_fact([full, condensed], "revenue", 2019)
    assert isinstance(picked, Fact) and picked.document_id == "wren-10k"
    other_full = _revenue("Net sales", 90.0, document="wren-restated")
    assert isinstance(pick_fact([full, condensed, other_full], "revenue", 2019), Conflict)
