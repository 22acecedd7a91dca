"""One page's text as blocks in reading order: headings (with their level), subheadings, paragraphs
and tables, recognised line by line in filings as PDF and HTML extraction leave them (English and
Chinese section numbering, numeric table rows, pipe tables, wrapped lines)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from weaverbird_common.docs.text_units import CJK_RE

_MD_HEADING_RE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_PART_RE = re.compile(r"^PART\s+[IVX]+\b", re.IGNORECASE)
# "Item 7." / "ITEM 1A:" / "Item 6 [Reserved]"; TOC lines end with a page number and are not headings.
_ITEM_RE = re.compile(r"^ITEM\s+\d{1,2}[A-C]?(?:[.:\s\-—–]|$)", re.IGNORECASE)
_ZH_CHAPTER_RE = re.compile(r"^第[一二三四五六七八九十百零〇\d]+[章部篇]")
_ZH_SECTION_RE = re.compile(r"^第[一二三四五六七八九十百零〇\d]+节")
_ZH_NUMBERED_RE = re.compile(r"^[一二三四五六七八九十]+、")
_ZH_SUBNUMBERED_RE = re.compile(r"^[（(][一二三四五六七八九十]+[）)]")
_BULLET_RE = re.compile(r"^(?:[•●▪◦·\-*–]\s|\d{1,2}[.)]\s|\([a-z0-9]{1,3}\)\s)")
PIPE_ROW_RE = re.compile(r"^\s*\|.*\|\s*$")  # a Markdown pipe-table row
_NUMBER_TOKEN_RE = re.compile(r"^[(\[]?[-−+]?[$€£¥]?[-−]?\(?\d[\d,]*(?:\.\d+)?\)?%?[)\]]?[,;]?$")
_NIL_TOKEN_RE = re.compile(r"^(?:[—–\-]+%?|n/?a|nm)$", re.IGNORECASE)
_NEUTRAL_TOKENS = frozenset({"$", "%", "€", "£", "¥", "(", ")"})

# Heading levels: smaller = outer. A new heading closes all headings at its level and below.
_LEVEL_PART, _LEVEL_ITEM, _LEVEL_ZH_NUMBERED, _LEVEL_ZH_SUB, _LEVEL_CAPS = 1, 2, 3, 4, 7
_MAX_HEADING_CHARS = 120


def _heading_level(line: str) -> tuple[int, str] | None:
    """(level, text) when the line looks like a section heading, else None."""
    stripped = line.strip()
    md = _MD_HEADING_RE.match(stripped)
    if md:
        return len(md.group(1)), md.group(2).strip()
    if not stripped or len(stripped) > _MAX_HEADING_CHARS:
        return None
    words = stripped.split()
    toc_entry = re.search(r"\s\d{1,3}$", stripped) is not None  # "Item 7. MD&A 36", "PART IV 65"
    if _PART_RE.match(stripped) and len(words) <= 8 and not toc_entry:
        return _LEVEL_PART, stripped
    if _ITEM_RE.match(stripped) and len(words) <= 16:
        # A table-of-contents entry ("Item 7. MD&A 36") or a sentence wrapped onto an "Item"
        # line is not a heading.
        if toc_entry or stripped.endswith((",", ";")):
            return None
        return _LEVEL_ITEM, stripped
    if len(stripped) <= 40 and not stripped.endswith(("。", "；", "，", ";", ",")):
        if _ZH_CHAPTER_RE.match(stripped):
            return _LEVEL_PART, stripped
        if _ZH_SECTION_RE.match(stripped):
            return _LEVEL_ITEM, stripped
        if _ZH_NUMBERED_RE.match(stripped):
            return _LEVEL_ZH_NUMBERED, stripped
        if _ZH_SUBNUMBERED_RE.match(stripped):
            return _LEVEL_ZH_SUB, stripped
    letters = [c for c in stripped if c.isalpha() and c.isascii()]
    # Short all-caps tokens are usually column labels of a broken-up table ("EBIT /", "GAAP EPS"),
    # so a caps heading needs a real word in it and must not end in a connector. A Chinese line with an
    # acronym in it ("国际原子能机构（IAEA）总干事 ... IAEA职员 ...") is a sentence: its Latin letters are caps
    # because Chinese has no case, so the letters must outnumber its Chinese characters.
    if (
        len(letters) >= 6
        and len(CJK_RE.findall(stripped)) < len(letters)
        and all(c.isupper() for c in letters)
        and any(len(re.sub(r"[^A-Z]", "", w)) >= 5 for w in words)
        and not stripped.endswith(("/", "&", "-", "(", ",", "AND", "OF", "THE", "TO", "OR", "FOR"))
        and len(words) <= 12
        and not _is_numeric_row(stripped)
        and sum(c.isdigit() for c in stripped) <= 4
        and not stripped.startswith(("•", "-", "*", "("))
    ):
        return _LEVEL_CAPS, stripped
    return None


_TERMINAL = (".", "!", "?", ":", ";", ",", "。", "！", "？", "：", "；", "，")
_CONNECTORS = frozenset("and or of the to in for on with by at from a an as &".split())


def _is_subheading(line: str, previous: str | None, following: str | None) -> bool:
    """A short stand-alone line like "Share repurchases" between paragraphs of a PDF page.

    Too weak a signal to start a chunk under its own heading (table labels and wrapped fragments
    look alike), so these only mark paragraph breaks and preferred chunk starts.
    """
    words = line.split()
    if not 1 <= len(words) <= 8 or len(line) > 70 or not line[0].isupper():
        return False
    if line.endswith(_TERMINAL) or words[-1].lower() in _CONNECTORS or sum(c.isdigit() for c in line) > 4:
        return False
    if following is None or not (following[:1].isupper() or _BULLET_RE.match(following)):
        return False
    return previous is None or previous.endswith((*_TERMINAL, "”", '"', ")"))


def _is_numeric_row(line: str) -> bool:
    """A line of a financial table as PDF extraction gives it: a label followed by numbers."""
    tokens = line.split()
    numbers = words = 0
    last_kind = ""
    for token in tokens:
        if token in _NEUTRAL_TOKENS:
            continue
        if _NUMBER_TOKEN_RE.match(token) or _NIL_TOKEN_RE.match(token):
            numbers += 1
            last_kind = "number"
        else:
            words += 1
            last_kind = "word"
    if numbers < 2 or last_kind != "number":
        return False
    # Prose with two figures ("grew to $13.28 billion at the end of fiscal 2022") has many more
    # words per number than a table row; three or more figures make a row even with a long label.
    share = numbers / (numbers + words)
    return share >= (0.2 if numbers >= 3 else 0.3)


@dataclass(slots=True)
class Block:
    kind: Literal["heading", "subheading", "para", "table"]
    text: str = ""
    level: int = 0
    rows: list[str] = field(default_factory=list)
    header_rows: int = 0  # leading rows repeated on each piece when a table must be split


# Label-only lines ("Current assets:", "Stockholders' equity:") allowed between numeric rows;
# blank lines are free, since layout extraction puts them between statement sections.
_MAX_TABLE_GAP = 3
_MAX_HEADER_LINES = 6  # short lines above the first row taken as column headers ("Years Ended")


def _table_spans(lines: list[str]) -> list[tuple[int, int, int]]:
    """(start, end_exclusive, header_rows) of table regions: pipe tables and runs of numeric rows."""
    spans: list[tuple[int, int, int]] = []
    n = len(lines)
    i = 0
    while i < n:
        if PIPE_ROW_RE.match(lines[i]):
            j = i
            while j < n and PIPE_ROW_RE.match(lines[j]):
                j += 1
            if j - i >= 2:
                separator = j - i >= 2 and re.fullmatch(r"[\s|:\-]+", lines[i + 1]) is not None
                spans.append((i, j, 2 if separator else 1))
                i = j
                continue
        if _is_numeric_row(lines[i]):
            last_row, rows, k = i, 1, i + 1
            gap = 0
            while k < n and gap <= _MAX_TABLE_GAP:
                line = lines[k].strip()
                if _is_numeric_row(line):
                    last_row, rows, gap = k, rows + 1, 0
                elif line and (len(line) > 80 or len(line.split()) > 10 or _is_structural_heading(line)):
                    break
                elif line:
                    gap += 1
                k += 1
            if rows >= 2:
                start = i
                # Column headers sit just above the first row as short lines ("December 2,", "2022").
                while (
                    start > 0
                    and i - start < _MAX_HEADER_LINES
                    and (prev := lines[start - 1].strip())
                    and len(prev) <= 60
                    and not prev.endswith((".", "。"))
                    and _heading_level(prev) is None
                    and not (spans and start - 1 < spans[-1][1])
                ):
                    start -= 1
                spans.append((start, last_row + 1, (i - start) or 1))
                i = last_row + 1
                continue
        i += 1
    return spans


def _is_structural_heading(line: str) -> bool:
    """Headings that end a table even inside its gaps (caps labels like "ASSETS" do not)."""
    level = _heading_level(line)
    return level is not None and level[0] < _LEVEL_CAPS


def page_blocks(text: str) -> list[Block]:
    """Headings, tables and paragraphs of one page, in reading order."""
    lines = _without_page_number(text.split("\n"))
    spans = {start: (end, header) for start, end, header in _table_spans(lines)}
    blocks: list[Block] = []
    paragraph: list[str] = []
    # PDF paragraphs rarely have blank lines between them; a line ending well before the right
    # margin with a sentence end is the usual paragraph end. The margin is the long-line length.
    lengths = sorted(len(line.strip()) for line in lines if line.strip())
    full_width = lengths[int(0.9 * (len(lengths) - 1))] if lengths else 0

    def end_paragraph() -> None:
        if paragraph:
            blocks.append(Block("para", _join_lines(paragraph)))
            paragraph.clear()

    i = 0
    while i < len(lines):
        if i in spans:
            end, header = spans[i]
            end_paragraph()
            rows = [line.strip() for line in lines[i:end] if line.strip()]
            blocks.append(Block("table", rows=rows, header_rows=min(header, len(rows) - 1)))
            i = end
            continue
        line = lines[i].strip()
        previous = lines[i - 1].strip() if i > 0 else None
        following = lines[i + 1].strip() if i + 1 < len(lines) else None
        i += 1
        if not line:
            end_paragraph()
            continue
        heading = _heading_level(line)
        if heading is not None:
            end_paragraph()
            blocks.append(Block("heading", heading[1], level=heading[0]))
            continue
        if _is_subheading(line, previous or None, following or None):
            end_paragraph()
            blocks.append(Block("subheading", line))
            continue
        if _BULLET_RE.match(line):
            end_paragraph()
        paragraph.append(line)
        if len(line) < 0.7 * full_width and line.endswith(("。", "！", "？", ".", "!", "?", ":", "：")):
            end_paragraph()
    end_paragraph()
    return blocks


_PAGE_NUMBER_RE = re.compile(r"^(?:[-–—]\s*)?(?:page\s+)?\d{1,4}(?:\s*[-–—])?$|^第\s*\d{1,4}\s*页$", re.IGNORECASE)


def _without_page_number(lines: list[str]) -> list[str]:
    """Drop a printed page number on the first or last line; the loader only strips repeated ones."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if filled and _PAGE_NUMBER_RE.match(lines[filled[-1]].strip()):
        lines = lines[: filled[-1]]
    if filled and len(filled) > 1 and _PAGE_NUMBER_RE.match(lines[filled[0]].strip()):
        lines = lines[filled[0] + 1 :]
    return lines


def _join_lines(lines: list[str]) -> str:
    """Undo hard line wraps: a space between words, nothing between CJK characters or after a hyphen."""
    out = lines[0]
    for line in lines[1:]:
        if CJK_RE.match(out[-1:]) or CJK_RE.match(line[:1]):
            out += line
        elif out.endswith("-") and line[:1].islower():
            out += line  # "year-\nover-year" -> "year-over-year"
        else:
            out += " " + line
    return out
