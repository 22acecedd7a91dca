"""Statement tables read from extracted page text, where a row's label and figures share no layout.

pypdf prints a statement as a stream: "... Total net sales\n107,006  135,987  177,866 Operating
expenses:\n Cost of sales\n71,651 ..." - the figures of one row and the label of the next on one line,
labels broken mid-word, numbers glued to words ("tax provision1,406"). Columns are found from the header
(a run of years, with "Three Months Ended September 30," or "January 28," around them); then every run
of at least as many figures as there are columns closes a row whose label is the text since the previous
row. The last N figures of a run are the row's values: earlier ones belong to its label ("Class B — 1,253
shares"). Chinese headers (2023年12月31日, 2024年1-9月) are read the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from weaverbird_common.facts import cells, periods, statements, units
from weaverbird_common.facts.model import Period
from weaverbird_common.facts.rows import Row, TableContext, plausible_label, tidy_label

# A paragraph this long between figures means the table has ended.
_PROSE = 600
_MIDWORD_BREAK = re.compile(r"(?<=[a-z])\n(?=[a-z])")
# A word's last letter or two alone on a line after blank ones: "Balance Shee\n \nt\nAt December 31".
_STRAY_TAIL = re.compile(r"(?<=[a-z])[ \t]*\n(?:[ \t]*\n)*[ \t]*([a-z]{1,2})(?=[ \t]*\n)")
_CONNECTOR = re.compile(r"\s*(?:and|or|to|through|-|–)\s*", re.IGNORECASE)


@dataclass
class _Token:
    start: int
    end: int
    value: float = 0.0
    year: int | None = None
    zh: Period | None = None
    percent: bool = False


def normalise(text: str) -> str:
    """Rejoin words pypdf broke across lines ("admin\\nistrative", "Balance Shee\\n \\nt") and flatten
    whitespace."""
    text = _STRAY_TAIL.sub(r"\1", text)
    return " ".join(_MIDWORD_BREAK.sub("", text).split())


def _tokens(text: str, statement: str) -> list[_Token]:
    zh = [(m.start(), m.end(), m) for m in periods.ZH_PERIOD.finditer(text)]
    tokens = [_Token(s, e, zh=periods.zh_period(m, statement), year=int(m.group("year"))) for s, e, m in zh]
    taken = [(s, e) for s, e, _ in zh]
    for m in cells.CELL.finditer(text):
        if any(m.start() < e and m.end() > s for s, e in taken):
            continue
        year = int(m.group(0).strip()) if cells.is_year_cell(m) else None
        tokens.append(_Token(m.start(), m.end(), cells.cell_value(m), year, None, cells.is_percent(m)))
    return sorted(tokens, key=lambda t: t.start)


def _runs(text: str, tokens: list[_Token]) -> list[list[_Token]]:
    """Tokens grouped into runs separated by nothing but spaces."""
    runs: list[list[_Token]] = []
    for token in tokens:
        if runs and not text[runs[-1][-1].end : token.start].strip():
            runs[-1].append(token)
        else:
            runs.append([token])
    return runs


def _is_header_run(run: list[_Token]) -> bool:
    return all(t.year is not None for t in run)


def _plausible_years(years: list[int]) -> bool:
    return max(years) - min(years) <= 10


def _blocks(group: list[_Token]) -> list[list[_Token]]:
    """The header's years split where a year repeats ("2024 2023 | 2024 2023")."""
    blocks: list[list[_Token]] = [[]]
    for token in group:
        if token.year in {t.year for t in blocks[-1]}:
            blocks.append([])
        blocks[-1].append(token)
    return blocks


def _last_header(text: str, group: list[_Token]) -> tuple[list[_Token], list[int | None]]:
    """The header's columns and, per column, the months its duration caption names (None: read it from
    the text before the year).

    "Three Months Ended September 30, Nine Months Ended September 30, 2024 2023 2024 2023": one caption
    per block of repeated years, in order. "December 31, 2022 and 2021  2022  2021": a year seen again with
    no caption of its own starts the header over (the caption named the years, the columns follow).
    """
    blocks = _blocks(group)
    if len(blocks) > 1:
        caption = text[max(0, group[0].start - 200) : group[0].start]
        durations = periods.durations_in(caption)
        if len(durations) == len(blocks) and len(set(durations)) > 1:
            return group, [d for d, block in zip(durations, blocks, strict=True) for _ in block]
    current: list[_Token] = []
    for token in group:
        seen = [i for i, t in enumerate(current) if t.year == token.year]
        if seen and periods.months_from(text[current[-1].end : token.start]) is None:
            current = current[seen[0] + 1 :]
        current.append(token)
    return current, [None] * len(current)


@dataclass
class PageState:
    """What carries from one page to the next: a statement that continues without a new header."""

    table: TableContext | None = None


def read_rows(page_text: str, state: PageState | None = None) -> tuple[list[Row], PageState]:
    """Rows of every statement-like table in one page's text; state carries a table across pages."""
    state = state or PageState()
    text = normalise(page_text)
    scales = units.scales_in(text)
    # A first guess of the statement from the whole page, refined per header from the text before it.
    page_kind = statements.page_top_kind(text)
    tokens = _tokens(text, page_kind)
    runs = _runs(text, tokens)
    rows: list[Row] = []
    table = state.table
    pending_from = 0
    section = ""
    sums = _SectionSum()
    i = 0
    while i < len(runs):
        run = runs[i]
        if _is_header_run(run):
            # Merge the year runs of one header ("January 28, 2017 January 30, 2016 ...").
            group = list(run)
            j = i + 1
            while (
                j < len(runs)
                and _is_header_run(runs[j])
                and periods.HEADER_GLUE.match(text[group[-1].end : runs[j][0].start])
            ):
                group.extend(runs[j])
                j += 1
            group, months = _last_header(text, group)
            years = [t.year for t in group if t.year is not None]
            # One lone year inside an open table is part of a label ("allowances of $33 at December 28,
            # 2019 and ..."), not a new header.
            if _plausible_years(years) and (len(group) > 1 or table is None):
                table = _header_table(text, pending_from, group, months, scales, page_kind, table)
                pending_from = group[-1].end
                section, sums = "", _SectionSum()
                i = j
                continue
        if table is None:
            i += 1
            continue
        gap = text[pending_from : run[0].start]
        if len(gap) > _PROSE:
            table, section, sums = None, "", _SectionSum()
            pending_from = run[0].start
            i += 1
            continue
        n = len(table.columns)
        after = text[run[-1].end : runs[i + 1][0].start] if i + 1 < len(runs) else "x"
        if len(run) < n or _CONNECTOR.fullmatch(after):
            # Too few figures, or figures inside the label ("allowances - $40 and $42  1,721  2,004").
            if _row_with_blank_cells(run, n, after):
                pending_from = run[-1].end
            i += 1
            continue
        chunks = _unlabelled_rows(text, pending_from, run, n)
        values = chunks[0] if chunks else run[-n:]
        label, caption = tidy_label(text[pending_from : values[0].start])
        # A caption ("Basic earnings per share:") holds for the rows under it until the next one.
        if caption and caption != section:
            section, sums = caption, _SectionSum()
        pending_from = run[-1].end
        i += 1
        if plausible_label(label):
            row = Row(label, section, tuple(t.value for t in values), any(t.percent for t in values), table)
            rows.append(row)
            sums.add(row)
        for extra in chunks[1:]:
            # "Reimbursed costs 244,949 ... 5,162,082 ...": a row's figures, then its section's unlabelled
            # total. Named only where it adds up the rows above it; after a total the section is closed.
            amounts = tuple(t.value for t in extra)
            if sums.totals(amounts):
                total = Row(f"Total {section}".strip() if not sums.closed else "Total", "", amounts, False, table)
                rows.append(total)
                sums = _SectionSum(closed=True)
    return rows, PageState(table)


def _row_with_blank_cells(run: list[_Token], n: int, after: str) -> bool:
    """Whether a run too short for the table is a row with blank cells ("Gain from disposal ...,
    respectively  [blank]  4  3" before "NET INCOME (LOSS)"): two or more plain figures, then a new label
    starting with a capital. Its figures cannot be placed in their columns, so the row is dropped, but the
    next row's label starts after it instead of gluing both labels and the figures together. Figures inside
    a label stay in it: one figure ("1,253 shares"), a rate or a year ("5.25% Senior Notes due 2029"), or a
    lower-case word after them."""
    plain = all(t.year is None and not t.percent for t in run)
    return 2 <= len(run) < n and plain and bool(re.match(r"\s*[A-Z]", after))


def _unlabelled_rows(text: str, since: int, run: list[_Token], n: int) -> list[list[_Token]]:
    """A run of two or more rows' figures with no words between them, split per row (first: the labelled
    row), or [] for one row's figures."""
    if len(run) < 2 * n or len(run) % n or not re.search(r"[A-Za-z\u4e00-\u9fff]", text[since : run[0].start]):
        return []
    return [run[k : k + n] for k in range(0, len(run), n)]


@dataclass
class _SectionSum:
    """The sum per column of a section's rows since its caption or the last total."""

    closed: bool = False
    sums: tuple[float, ...] = ()
    count: int = 0

    def add(self, row: Row) -> None:
        if row.label.lower().startswith("total"):
            self.sums, self.count, self.closed = (), 0, True
            return
        self.sums = tuple(a + b for a, b in zip(self.sums, row.values, strict=True)) if self.sums else row.values
        self.count += 1

    def totals(self, amounts: tuple[float, ...]) -> bool:
        if self.count < 2 or len(amounts) != len(self.sums):
            return False
        return all(abs(a - s) <= max(0.5, 0.001 * abs(s)) for a, s in zip(amounts, self.sums, strict=True))


def _header_table(
    text: str,
    since: int,
    group: list[_Token],
    months: list[int | None],
    scales: list[units.Scale],
    page_kind: str,
    previous: TableContext | None,
) -> TableContext:
    before = text[max(0, since - 200) : group[0].start] if since else text[: group[0].start]
    title = statements.title_before(before) or (previous.title if previous else "")
    kind = statements.statement_kind(title)
    if kind == "other" and previous is None and since == 0 and not statements.part_of_group(title):
        # A primary statement is printed at the top of its page; a note's table further down is "other".
        kind = page_kind
    context_start = max(0, group[0].start - 160)
    columns: list[Period] = []
    for token, duration in zip(group, months, strict=True):
        if token.zh is not None:
            period = token.zh
            if kind == "balance" and period.months:
                period = replace(period, months=0)
            columns.append(period)
            continue
        context = text[context_start : token.start]
        period = periods.period_for(token.year or 0, context, kind)
        if duration is not None and kind != "balance":
            quarter = period.quarter if duration == 3 else 0
            if duration == 3 and not quarter and period.end:
                quarter = (int(period.end[5:7]) - 1) // 3 + 1
            period = replace(period, months=duration, quarter=quarter)
        columns.append(period)
    scale = units.scale_before(scales, group[-1].end)
    zone = text[max(0, group[0].start - 400) : group[-1].end + 1500]
    return TableContext(
        title=title,
        statement=kind,
        columns=tuple(columns),
        scale=scale.multiplier if scale else 1.0,
        scale_text=scale.text if scale else "",
        currency=units.currency_in(zone),
    )
