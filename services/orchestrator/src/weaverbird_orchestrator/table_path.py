"""Calculations over a retrieved table, in code, before the model: the table-row reader on served passages.

A calculation that names the rows and periods of a pipe table (Markdown files, HTML pages: "the percentage
change in total dividends paid from 2018 to 2019", "the ratio of current to non-current deferred revenue")
is answered from the best-ranked KB passage whose table holds those rows: the passage is read into facts by
the reader the ingester uses (facts.extract), the rows are found by the labels the question names and the
change, average, sum, ratio or share is computed (facts.label_question). The answer cites that passage;
the model is not asked. When no passage's rows answer, the calculation task runs as before (the model lists
figures, code computes). Statement facts looked up by company (fact_path) come first; this reader answers
from tables the statement facts do not cover (notes, schedules, segment and operating tables). The caller
runs it only when the search was narrowed to the company the question names (flow/coordinator.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from weaverbird_common.docs.documents import Document
from weaverbird_common.facts.answer import LINE_WORDS, FactAnswer, amount_text
from weaverbird_common.facts.extract import facts_from_rows
from weaverbird_common.facts.label_question import RowAnswer, answer_row
from weaverbird_common.facts.markdown_tables import read_markdown_rows
from weaverbird_common.facts.model import Fact

from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.fact_path import FactReply

log = logging.getLogger(__name__)

# Passages read, best-ranked first: the question's own table is nearly always among the first few; a
# table further down is as likely another report's with the same row names.
TABLE_PASSAGES = 3
# Operations that combine figures. A row's single value is a lookup the passage path answers as well.
_COMBINED = frozenset({"change", "pct_change", "decrease", "difference", "average", "sum", "ratio", "share"})
# How the result is named: "Percentage change in Total receivables, net (FY2018 -> FY2019): 6.52 %".
_OPS = {
    "en": {
        "change": "Change in {}",
        "pct_change": "Percentage change in {}",
        "decrease": "Decrease in {}",
        "average": "Average of {}",
        "sum": "Sum of {}",
    },
    "zh": {
        "change": "{}变动",
        "pct_change": "{}变动率",
        "decrease": "{}减少额",
        "average": "{}平均值",
        "sum": "{}合计",
    },
}


def answer_from_tables(
    question: str, passages: Sequence[Passage], language: str, lookup: bool = False
) -> FactReply | None:
    """The calculation `question` asks, from the first of the top local `passages` whose table answers it;
    None when none does (the model's calculation then runs). A question routed as a lookup (`lookup`) is
    answered only where its words ask for a combination outright: a ratio, a share, a library metric, or
    a sum it names as one ("sum", "altogether", "combined"); "What were total revenues in 2018 and 2019?"
    asks for the two figures, which the passage path gives."""
    for passage in [p for p in passages if p.origin == "local"][:TABLE_PASSAGES]:
        facts = _facts(passage, language)
        if not facts:
            continue
        row = answer_row(question, facts)
        if row is None or not _combines(row) or (lookup and not _asked_outright(row, question)):
            continue
        log.info("table path: %s over %s (%s)", row.op, passage.id, row.label)
        answer = _answer(row, language)
        return FactReply(answer.text, [passage], answer, numbers=tuple(1 for _ in answer.used))
    return None


# A sum asked in so many words (not "total", which names rows as often as it asks for a sum).
_SUM_WORDS = re.compile(r"\b(?:sum|altogether|combined|in total|aggregate)\b|合计|总和|之和", re.IGNORECASE)
_MOVES = frozenset({"change", "pct_change", "decrease", "difference", "average"})


def _asked_outright(row: RowAnswer, question: str) -> bool:
    """Whether a question routed as a lookup asks for this combination in its own words."""
    if row.op == "sum":
        return bool(_SUM_WORDS.search(question))
    return row.op not in _MOVES


def _combines(row: RowAnswer) -> bool:
    """A combination of figures (or a library metric computed from them), not one cell's value."""
    return row.op in _COMBINED or (row.op not in ("value", "") and len(row.used) > 1)


def _facts(passage: Passage, language: str) -> list[Fact]:
    """The rows of the passage's pipe tables (Markdown, an HTML page's table) as facts, as the ingester reads
    such a page. Text extracted from a PDF is not read: there a table's columns are guessed from loose
    lines, and over FinanceBench's 10-K pages the reader chose a wrong row in each of the three questions it
    answered (a store count read from "Best Buy Mobile", a percent change of 3,226,673 %)."""
    text = f"{passage.heading}\n{passage.text}" if passage.heading else passage.text
    document = Document(passage.document_id, passage.title, passage.source, [], language, "", None, None, "")
    try:
        return facts_from_rows(read_markdown_rows(text, None), document, passage.page or None)
    except Exception as exc:  # a table the reader cannot read leaves the question to the model
        log.warning("table path could not read %s: %s: %s", passage.id, type(exc).__name__, exc)
        return []


# Results that are not an amount of the table's unit: a percent (as points: 36.9), a ratio, a metric's
# times or days.
_PLAIN_UNITS = {"percent": " %", "ratio": "", "times": " times", "days": " days"}


def _shown(value: float, unit: str, like: Fact) -> str:
    """The result as a reader expects it: a percent, a ratio to two places, an amount in the scale its
    table prints."""
    if unit in _PLAIN_UNITS:
        return f"{value:,.2f}{_PLAIN_UNITS[unit]}"
    return amount_text(value * (like.scale if like.scale > 0 else 1.0), like)


def _formula(row: RowAnswer) -> str:
    """The operation over the figures as printed: "(28,128 - 25,633) / 25,633 x 100", "(62 + 73) / 2"."""
    names = [f"{f.value:,.2f}".rstrip("0").rstrip(".") for f in row.used]
    if row.op in ("change", "pct_change") and len(names) == 4:
        # The move between two years' average balances (each the mean of a year and the one before).
        old, new = f"({names[0]} + {names[1]}) / 2", f"({names[2]} + {names[3]}) / 2"
        return f"({new} - {old}) / {old} x 100" if row.op == "pct_change" else f"{new} - {old}"
    if row.op == "change":
        return f"{names[0]} - {names[1]}"
    if row.op == "pct_change":
        return f"({names[0]} - {names[1]}) / {names[1]} x 100"
    if row.op == "decrease":
        return f"{names[1]} - {names[0]}"
    if row.op == "difference":
        return f"{names[0]} - {names[1]}"
    if row.op == "average":
        return f"({' + '.join(names)}) / {len(names)}"
    if row.op == "sum":
        return " + ".join(names)
    if row.op in ("ratio", "share"):
        share = " x 100" if row.op == "share" else ""
        return (
            f"({' + '.join(names[:-1])}) / {names[-1]}{share}" if len(names) > 2 else f"{names[0]} / {names[1]}{share}"
        )
    return row.label  # a library metric: its formula with the figures put in


def _answer(row: RowAnswer, language: str) -> FactAnswer:
    words = LINE_WORDS["zh" if language == "zh" else "en"]
    like = row.used[0]
    unit = row.unit if row.unit in _PLAIN_UNITS else like.unit
    shown = _shown(row.value, unit, like)
    zh = language == "zh"
    # A schedule that names no date has period 0: nothing to show.
    dated = {f.period for f in row.used if f.period.fiscal_year}
    periods = sorted(dated, key=lambda p: (p.fiscal_year, p.end or "", p.months))
    joined = " -> " if row.op in ("change", "pct_change", "decrease") else ", "
    when = f" ({joined.join(dict.fromkeys(p.label() for p in periods))})" if periods else ""
    name = _OPS["zh" if zh else "en"].get(row.op, "{}").format(row.label)
    formula = _formula(row)
    lines = [
        f"{name}{when}：{shown} [1]。" if zh else f"{name}{when}: {shown} [1].",
        f"{words['formula']}{formula} = {shown}",
        words["figures"]
        + "; ".join(f"{f.label} ({f.period.label()}) {amount_text(f.amount, f)} [1]" for f in row.used),
    ]
    amount = row.value if unit in _PLAIN_UNITS else row.value * (like.scale if like.scale > 0 else 1.0)
    return FactAnswer(amount, unit, "\n".join(lines), formula, row.used, (f"= {formula}",))
