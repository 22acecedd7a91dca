"""A document's facts: every statement-like table of every page, its rows as one fact per period."""

from __future__ import annotations

import re
from collections.abc import Iterable

from weaverbird_common.docs.documents import Document
from weaverbird_common.facts.markdown_tables import has_table, read_markdown_rows
from weaverbird_common.facts.model import Fact
from weaverbird_common.facts.rows import Row
from weaverbird_common.facts.text_tables import PageState, read_rows
from weaverbird_common.finance.concepts import concept_for_label

_PER_SHARE = re.compile(r"per (?:common |diluted |basic )?sha|每股|\beps\b", re.IGNORECASE)
_SHARES = re.compile(r"\bshares\b|weighted[- ]average (?:common|basic|diluted)|股数|股本总数", re.IGNORECASE)
_COUNT = re.compile(r"employees|headcount|stores|员工|门店", re.IGNORECASE)
# A document yields at most this many facts: a bound on what one upload can write.
MAX_FACTS = 20_000


def _unit(row: Row) -> tuple[str, float]:
    """(unit, scale) of a row: percents and per-share amounts are not scaled by the table caption."""
    words = f"{row.label} {row.section}"
    if row.percent:
        return "percent", 1.0
    if _PER_SHARE.search(row.label) or (_PER_SHARE.search(row.section) and not _SHARES.search(row.label)):
        return "per_share", 1.0
    if _SHARES.search(row.label):
        return "shares", row.table.scale
    if _COUNT.search(words):
        return "number", 1.0
    return "currency", row.table.scale


def facts_from_rows(rows: Iterable[Row], document: Document, page: int | None) -> list[Fact]:
    facts: list[Fact] = []
    for row in rows:
        unit, scale = _unit(row)
        concept = "" if row.category else concept_for_label(row.label) or ""
        for period, value in zip(row.table.columns, row.values, strict=False):
            facts.append(
                Fact(
                    document_id=document.document_id,
                    company=document.company,
                    page=page,
                    table=row.table.title,
                    statement=row.table.statement,
                    label=row.label,
                    concept=concept,
                    period=period,
                    value=value,
                    scale=scale,
                    unit=unit,
                    currency=row.table.currency if unit in ("currency", "per_share") else "",
                    scale_text=row.table.scale_text,
                    title=document.title,
                    source=document.source,
                    # The heading a row sits under ("PSUs" over "Granted"): two rows of one label differ by it.
                    extra={"section": row.section} if row.section else {},
                )
            )
    return facts


def extract_facts(document: Document) -> list[Fact]:
    """Facts of every page: pipe tables where the text has them, else the statement-stream reader (a
    table continues onto the next page until a new header or prose ends it)."""
    facts: list[Fact] = []
    state = PageState()
    for page in document.pages:
        if has_table(page.text):
            rows = read_markdown_rows(page.text, document.year)
        else:
            rows, state = read_rows(page.text, state)
        facts.extend(facts_from_rows(rows, document, page.number))
        if len(facts) >= MAX_FACTS:
            return facts[:MAX_FACTS]
    return facts
