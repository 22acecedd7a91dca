"""Choosing the one fact that answers (concept, period) among what the KB holds.

A concept can appear in several tables of a filing and in several filings (the FY2023 column of the
FY2024 report and the FY2023 report itself). The primary statement wins (revenue from the income
statement, not a segment note); among its facts the amount most of them agree on wins; two different
amounts with equal support are a conflict, said plainly to the user instead of picking one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from weaverbird_common.facts.model import Fact
from weaverbird_common.finance.concepts import CONCEPTS

_PRIMARY = ("income", "balance", "cash_flow")
_UNITS = {"per_share": ("per_share",), "ratio": ("percent", "number"), "count": ("shares", "number")}


@dataclass(frozen=True)
class Conflict:
    concept: str
    year: int
    facts: tuple[Fact, ...]


def _period_ok(fact: Fact, stock: bool, year: int, quarter: int) -> bool:
    if fact.period.fiscal_year != year:
        return False
    if stock:
        return fact.period.months == 0 or (fact.statement == "balance")
    if quarter:
        return fact.period.months == 3 and fact.period.quarter == quarter
    return fact.period.months == 12


def _first_statement(candidates: Sequence[Fact]) -> Fact | None:
    """Of tied figures within one filing, the one on the earliest page: a filing prints its statements
    before the notes that repeat a line item with another scope ("Cost of sales" of a segment note).
    Figures from different filings, or from one page, stay a conflict."""
    if len({f.document_id for f in candidates}) != 1 or any(not f.page for f in candidates):
        return None
    pages = sorted({f.page or 0 for f in candidates})
    if len(pages) < 2 or sum(1 for f in candidates if f.page == pages[0]) > 1:
        return None
    return next(f for f in candidates if f.page == pages[0])


def _the_total(candidates: Sequence[Fact]) -> Fact | None:
    """Of tied figures that each table prints as a line item and its "Total ..." line ("Net sales" and
    "Total revenues" both read as revenue), the total: the statement's revenue, in every filing alike."""
    tables: dict[tuple[str, int | None, str], list[Fact]] = {}
    for f in candidates:
        tables.setdefault((f.document_id, f.page, f.table), []).append(f)
    totals = []
    for facts in tables.values():
        in_table = [f for f in facts if f.label.lower().startswith("total")]
        if len(in_table) != 1 or len(facts) < 2:
            return None
        totals.append(in_table[0])
    return totals[0] if len({round(f.amount, 2) for f in totals}) == 1 else None


def _full_statement(candidates: Sequence[Fact]) -> Fact | None:
    """Of tied figures for a fiscal year, the one the full statements print: a "condensed" statement is an
    interim report's or a release's, whose columns (quarters, pro forma) are not the audited year's."""
    full = [f for f in candidates if "condensed" not in f.table.lower()]
    if len(full) == len(candidates) or not full or len({round(f.amount, 2) for f in full}) != 1:
        return None
    return full[0]


def pick_fact(facts: Sequence[Fact], concept: str, year: int, quarter: int = 0) -> Fact | Conflict | None:
    """The fact for concept in fiscal `year` (and quarter), a Conflict, or None when the KB lacks it."""
    info = CONCEPTS.get(concept)
    stock = bool(info and info.kind == "stock")
    units = _UNITS.get(info.kind if info else "", ("currency",))
    found = [f for f in facts if f.concept == concept and f.unit in units and _period_ok(f, stock, year, quarter)]
    if info and info.statement in _PRIMARY and any(f.statement in _PRIMARY for f in facts):
        # A filing with statements: a line item is read from them, not from a note's table that shares
        # its words (deferred tax "Depreciation and amortization", a segment's "Net sales").
        found = [f for f in found if f.statement in _PRIMARY]
    if not found:
        return None
    primary = [f for f in found if info and f.statement == info.statement] or found
    votes = Counter(round(f.amount, 2) for f in primary)
    ranked = votes.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        tied = {amount for amount, n in ranked if n == ranked[0][1]}
        candidates = tuple(f for f in primary if round(f.amount, 2) in tied)
        first = _first_statement(candidates) or _the_total(candidates) or _full_statement(candidates)
        return first if first is not None else Conflict(concept, year, candidates)
    best = ranked[0][0]
    return next(f for f in primary if round(f.amount, 2) == best)
