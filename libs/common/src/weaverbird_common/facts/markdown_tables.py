"""Facts from Markdown pipe tables (Markdown files, and HTML pages the loader turns into Markdown).

Two layouts occur: periods across the header ("| Item | FY2024 | FY2023 |") and periods down the first
column ("| Quarter | Revenue (USD million) | Net income (USD million) |" with a row per quarter). A column
header's own words join a row label that has none of its own ("Total" under "FY2024 revenue" is "Total
revenue"), and its unit ("(USD million)", "（亿元）") scales that column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from weaverbird_common.facts import cells, statements, units
from weaverbird_common.facts.cell_periods import period_in_cell, strip_period
from weaverbird_common.facts.model import Period
from weaverbird_common.facts.rows import Row, TableContext, plausible_label, tidy_label

_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")


def _split(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _tables(text: str) -> Iterator[tuple[str, list[list[str]]]]:
    """(text before the table, rows of cells) for every pipe table: Markdown's (a header, then a separator
    row), and plain pipe-separated lines with no separator ("Net sales | 1,200 | 1,000", as tables are
    often written out of a spreadsheet or an extraction tool): two or more lines in a row with the same
    number of cells, the first its header."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and _SEPARATOR.match(lines[i + 1].strip()):
            start = i
            block = [_split(lines[i])]
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                block.append(_split(lines[i]))
                i += 1
            yield "\n".join(lines[max(0, start - 6) : start]), block
        elif (width := _plain_width(lines[i])) and i + 1 < len(lines) and _plain_width(lines[i + 1]) == width:
            start = i
            block = []
            while i < len(lines) and _plain_width(lines[i]) == width:
                block.append(_plain_cells(lines[i]))
                i += 1
            yield "\n".join(lines[max(0, start - 6) : start]), block
        else:
            i += 1


def has_table(text: str) -> bool:
    """Whether `text` holds a pipe table of either form (_tables)."""
    return "|" in text and next(_tables(text), None) is not None


def _plain_cells(line: str) -> list[str]:
    """The cells of a pipe-separated line: between outer pipes when it has both, else every piece (a
    leading pipe then stands after an empty first cell: " | 2019 | 2018" is a header over the labels)."""
    text = line.strip()
    if len(text) > 1 and text.startswith("|") and text.endswith("|"):
        return _split(text)
    return [c.strip() for c in text.split("|")]


def _plain_width(line: str) -> int:
    """Cells of a pipe-separated line that is not a separator row (0: not such a line)."""
    if "|" not in line or _SEPARATOR.match(line.strip()):
        return 0
    cells = _plain_cells(line)
    return len(cells) if len(cells) >= 2 else 0


def _value(cell: str) -> tuple[float, bool] | None:
    text = cell.replace("**", "").strip()
    m = cells.CELL.fullmatch(text) or cells.CELL.fullmatch(text + " ")
    if not m:
        m = cells.CELL.match(text)
        if not m or text[m.end() :].strip() not in ("", "%"):
            return None
    return cells.cell_value(m), cells.is_percent(m) or text.endswith("%")


def _column_scale(header: str, caption: units.Scale | None) -> tuple[float, str]:
    own = units.scales_in(header) or units.scales_in(_unit_words(header))
    if own:
        return own[0].multiplier, own[0].text
    return (caption.multiplier, caption.text) if caption else (1.0, "")


def _unit_words(header: str) -> str:
    """ "(USD million)" -> "in millions" so the scale reader sees it."""
    m = re.search(r"(thousand|million|billion)", header, re.IGNORECASE)
    if m:
        return f"in {m.group(1).lower()}s"
    zh = re.search(r"(百万元|千元|万元|亿元|元)", header)
    return f"单位：{zh.group(1)}" if zh else ""


def read_markdown_rows(text: str, default_year: int | None) -> list[Row]:
    rows: list[Row] = []
    for before, block in _tables(text):
        if len(block) < 2 or len(block[0]) < 2:
            continue
        title = statements.title_before(before)
        kind = statements.statement_kind(title + " " + before[-200:])
        caption_scales = units.scales_in(before)
        caption = caption_scales[-1] if caption_scales else None
        header = block[0]
        header_periods = [period_in_cell(h, kind, None) for h in header[1:]]
        if any(header_periods):
            rows.extend(_across(block, header_periods, title, kind, caption, before))
        else:
            rows.extend(
                _down(block, title, kind, caption, before, default_year)
                or _categories(block, title, kind, caption, before, default_year)
            )
    return rows


def _context(title: str, kind: str, period: Period, scale: tuple[float, str], currency: str) -> TableContext:
    return TableContext(title, kind, (period,), scale[0], scale[1], currency)


def _across(block, header_periods, title, kind, caption, before) -> list[Row]:
    header = block[0]
    out: list[Row] = []
    heading = ""  # a row with a label and no figures heads the rows under it ("Personnel expenses:")
    for cells_ in block[1:]:
        raw_label, section = tidy_label(cells_[0].replace("**", ""))
        if raw_label and not any(c.strip() for c in cells_[1:]):
            heading = raw_label.rstrip(":")
            continue
        section = section or heading
        if re.fullmatch(r"total|totals|合计|总计", raw_label, re.IGNORECASE) and section:
            raw_label = f"{raw_label} {section}"  # "Total" under "Personnel expenses" is "Total personnel expenses"
        for col, period in enumerate(header_periods, start=1):
            if period is None or col >= len(cells_):
                continue
            parsed = _value(cells_[col])
            if parsed is None:
                continue
            words = strip_period(header[col])
            label = raw_label
            if words and words.lower() not in raw_label.lower():
                label = f"{raw_label} {words}" if raw_label.lower() in ("total", "合计", "总计") else raw_label
            if not plausible_label(label):
                continue
            currency = units.currency_in(header[col] + " " + before) or units.currency_in(cells_[col])
            ctx = _context(title, kind, period, _column_scale(header[col], caption), currency)
            out.append(Row(label, section or words, (parsed[0],), parsed[1], ctx))
    return out


def _down(block, title, kind, caption, before, default_year) -> list[Row]:
    header = block[0]
    out: list[Row] = []
    for cells_ in block[1:]:
        period = period_in_cell(cells_[0], kind, default_year)
        if period is None:
            continue
        for col in range(1, min(len(header), len(cells_))):
            parsed = _value(cells_[col])
            if parsed is None:
                continue
            label = strip_period(header[col]) or header[col]
            if not plausible_label(label):
                continue
            currency = units.currency_in(header[col] + " " + before)
            ctx = _context(title, kind, period, _column_scale(header[col], caption), currency)
            out.append(Row(label, "", (parsed[0],), parsed[1], ctx))
    return out


# A year written in a form period_in_cell does not read: "F19", "FY 18", "2019".
_YEARISH = re.compile(r"\b(?:FY?\s?'?\d{2}|(?:19|20)\d{2})\b", re.IGNORECASE)


def _categories(block, title, kind, caption, before, default_year) -> list[Row]:
    """A table whose columns are categories, not periods ("| 30 June 2019 | Current | 0 to 30 days past due |
    ... | Total |"): each cell a row of its own named by the column and the row ("Current Net receivables"),
    for the one period the table is of (its corner cell, else the caption above it, else the document's
    year, else fiscal year 0: unknown)."""
    header = block[0]
    named = (period_in_cell(cell, kind, None) for cell in [header[0], *reversed(before.splitlines())] if cell.strip())
    period = next((p for p in named if p is not None), None)
    if period is None:
        # A schedule that names no date (an ageing of receivables): the document's year, else unknown (0).
        period = Period(default_year or 0, 0 if kind == "balance" else 12)
    columns = [strip_period(h) or h for h in header]
    if sum(1 for c in columns[1:] if c) < 2 or any(_YEARISH.search(h) for h in header[1:]):
        return []  # a column that looks like a period the reader could not read ("F19") is no category
    out: list[Row] = []
    for cells_ in block[1:]:
        raw_label, _ = tidy_label(cells_[0].replace("**", ""))
        if not raw_label:
            continue
        for col in range(1, min(len(header), len(cells_))):
            parsed = _value(cells_[col])
            if parsed is None or not columns[col]:
                continue
            label = f"{columns[col]} {raw_label}"
            if not plausible_label(label):
                continue
            currency = units.currency_in(header[col] + " " + before) or units.currency_in(cells_[col])
            ctx = _context(title, kind, period, _column_scale(header[col], caption), currency)
            out.append(Row(label, "", (parsed[0],), parsed[1], ctx, category=True))
    return out
