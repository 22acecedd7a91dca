"""Split Documents into ~target-token chunks along headings, tables, paragraphs and sentences."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from weaverbird_common.docs.documents import Chunk, Document
from weaverbird_common.questions import CJK_CLASS

# ---------------------------------------------------------------------------------------------
# Token estimate
# ---------------------------------------------------------------------------------------------

_CJK_RE = re.compile(f"[{CJK_CLASS}]")
_WORD_RE = re.compile(r"[A-Za-z]+")
# A run of one repeated symbol ("_____", ".....") counts once: tokenizers merge such runs, and
# PDF rules and dot leaders would otherwise look like hundreds of tokens.
_OTHER_RE = re.compile(rf"\d+|([^\sA-Za-z\d{CJK_CLASS}])\1*")
# Subword tokenizers split an English word into ~1.3 pieces on average; digit runs and symbols
# come out as about one token each ("$ 16,388" -> $ 16 , 388), and a CJK character is ~1 token.
_TOKENS_PER_WORD = 1.3


def count_tokens(text: str) -> int:
    """Cheap estimate of subword tokens; no tokenizer download, good to ~15% for e5/BERT-like models."""
    words = len(_WORD_RE.findall(text))
    others = sum(1 for _ in _OTHER_RE.finditer(text))
    return len(_CJK_RE.findall(text)) + math.ceil(words * _TOKENS_PER_WORD) + others


# ---------------------------------------------------------------------------------------------
# Sentences
# ---------------------------------------------------------------------------------------------

_BOUNDARY_RE = re.compile(r"[。！？]+[”’」』）)]*|[.!?]+[\"”’)\]]*(?=\s)")
# Periods that rarely end a sentence in filings: "U.S. GAAP", "No. 5", "Inc. and its".
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st no nos inc corp co ltd llc plc jr sr vs etc e.g i.e u.s u.k approx fig figs "
    "sec art dept est jan feb mar apr jun jul aug sep sept oct nov dec p pp vol".split()
)


def split_sentences(text: str) -> list[str]:
    """Split English (. ! ?) and Chinese (。！？) prose into sentences, keeping the end marks."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        end = match.end()
        if text[match.start()] == ".":
            before = re.search(r"(\S+)$", text[start : match.start()])
            word = before.group(1).lower().lstrip("(\"“'") if before else ""
            # Initials ("J. Smith") and known abbreviations do not end sentences; neither does a
            # period followed by a lower-case word (a wrapped "approx. three").
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or word.endswith(".u.s"):
                continue
            following = text[end:].lstrip()[:1]
            if following and following.islower():
                continue
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


# ---------------------------------------------------------------------------------------------
# Line classification
# ---------------------------------------------------------------------------------------------

_MD_HEADING_RE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_PART_RE = re.compile(r"^PART\s+[IVX]+\b", re.IGNORECASE)
# "Item 7." / "ITEM 1A:" / "Item 6 [Reserved]"; TOC lines end with a page number and are not headings.
_ITEM_RE = re.compile(r"^ITEM\s+\d{1,2}[A-C]?(?:[.:\s\-—–]|$)", re.IGNORECASE)
_ZH_CHAPTER_RE = re.compile(r"^第[一二三四五六七八九十百零〇\d]+[章部篇]")
_ZH_SECTION_RE = re.compile(r"^第[一二三四五六七八九十百零〇\d]+节")
_ZH_NUMBERED_RE = re.compile(r"^[一二三四五六七八九十]+、")
_ZH_SUBNUMBERED_RE = re.compile(r"^[（(][一二三四五六七八九十]+[）)]")
_BULLET_RE = re.compile(r"^(?:[•●▪◦·\-*–]\s|\d{1,2}[.)]\s|\([a-z0-9]{1,3}\)\s)")
_PIPE_ROW_RE = re.compile(r"^\s*\|.*\|\s*$")
_NUMBER_TOKEN_RE = re.compile(r"^[(\[]?[-−+]?[$€£¥]?[-−]?\(?\d[\d,]*(?:\.\d+)?\)?%?[)\]]?[,;]?$")
_NIL_TOKEN_RE = re.compile(r"^(?:[—–\-]+%?|n/?a|nm)$", re.IGNORECASE)
_NEUTRAL_TOKENS = frozenset({"$", "%", "€", "£", "¥", "(", ")"})
_SENTENCE_END = ("。", "！", "？", ".", "!", "?", "；", ";", "，", ",", "：", ":")

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
    # so a caps heading needs a real word in it and must not end in a connector.
    if (
        len(letters) >= 6
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


# ---------------------------------------------------------------------------------------------
# Blocks of one page
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
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
        if _PIPE_ROW_RE.match(lines[i]):
            j = i
            while j < n and _PIPE_ROW_RE.match(lines[j]):
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


def _page_blocks(text: str) -> list[_Block]:
    """Headings, tables and paragraphs of one page, in reading order."""
    lines = _without_page_number(text.split("\n"))
    spans = {start: (end, header) for start, end, header in _table_spans(lines)}
    blocks: list[_Block] = []
    paragraph: list[str] = []
    # PDF paragraphs rarely have blank lines between them; a line ending well before the right
    # margin with a sentence end is the usual paragraph end. The margin is the long-line length.
    lengths = sorted(len(line.strip()) for line in lines if line.strip())
    full_width = lengths[int(0.9 * (len(lengths) - 1))] if lengths else 0

    def end_paragraph() -> None:
        if paragraph:
            blocks.append(_Block("para", _join_lines(paragraph)))
            paragraph.clear()

    i = 0
    while i < len(lines):
        if i in spans:
            end, header = spans[i]
            end_paragraph()
            rows = [line.strip() for line in lines[i:end] if line.strip()]
            blocks.append(_Block("table", rows=rows, header_rows=min(header, len(rows) - 1)))
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
            blocks.append(_Block("heading", heading[1], level=heading[0]))
            continue
        if _is_subheading(line, previous or None, following or None):
            end_paragraph()
            blocks.append(_Block("subheading", line))
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
        if _CJK_RE.match(out[-1:]) or _CJK_RE.match(line[:1]):
            out += line
        elif out.endswith("-") and line[:1].islower():
            out += line  # "year-\nover-year" -> "year-over-year"
        else:
            out += " " + line
    return out


# ---------------------------------------------------------------------------------------------
# Packing
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Piece:
    text: str
    tokens: int
    group: int  # pieces of one block share a group; joined by `joiner`, groups by a newline
    joiner: str


class _Packer:
    """Accumulates pieces into chunks for one document, never across a page."""

    def __init__(self, doc: Document, target: int, maximum: int) -> None:
        self.doc = doc
        self.target = target
        self.maximum = maximum
        # A paragraph may overshoot the target up to halfway to the hard maximum to stay whole.
        self.soft = target + (maximum - target) // 2
        # Sections shorter than this are merged with the next one instead of standing alone.
        self.minimum = max(20, target // 8)
        self.chunks: list[Chunk] = []
        self.pieces: list[_Piece] = []
        self.tokens = 0
        self.page: int | None = None
        self.heading = ""
        self.chunk_heading = ""
        self.headings: list[tuple[int, str]] = []
        self._group = 0

    # -- state -------------------------------------------------------------------------------

    def new_group(self) -> int:
        self._group += 1
        return self._group

    def add(self, text: str, tokens: int, group: int, joiner: str) -> None:
        if not self.pieces:
            self.chunk_heading = self.heading
        self.pieces.append(_Piece(text, tokens, group, joiner))
        self.tokens += tokens

    def flush(self) -> None:
        if not self.pieces:
            return
        parts: list[str] = []
        previous = None
        for piece in self.pieces:
            if previous is not None and piece.group == previous.group:
                parts.append(piece.joiner)
            elif previous is not None:
                parts.append("\n")
            parts.append(piece.text)
            previous = piece
        text = "".join(parts).strip()
        self.pieces = []
        self.tokens = 0
        # Page numbers, rules and similar leftovers carry nothing to retrieve.
        if not re.search(rf"[A-Za-z{CJK_CLASS}]", text):
            return
        self.chunks.append(
            Chunk(
                document_id=self.doc.document_id,
                index=len(self.chunks),
                text=text,
                page=self.page,
                heading=self.chunk_heading,
                tokens=count_tokens(text),
            )
        )

    def start_page(self, number: int | None) -> None:
        self.flush()
        self._merge_small_tail()
        self.page = number

    def _merge_small_tail(self) -> None:
        """Fold a tiny last chunk of a page into the one before it when they share page and heading."""
        if len(self.chunks) < 2:
            return
        last, before = self.chunks[-1], self.chunks[-2]
        if (
            last.tokens < self.minimum
            and before.page == last.page
            and before.heading == last.heading
            and before.tokens + last.tokens <= self.maximum
        ):
            before.text = f"{before.text}\n{last.text}"
            before.tokens = count_tokens(before.text)
            self.chunks.pop()

    # -- blocks ------------------------------------------------------------------------------

    def heading_block(self, block: _Block) -> None:
        if self.tokens >= self.minimum:
            self.flush()
        elif self.pieces:
            # A tiny section (a cover-page line, "None.") is kept with what follows; the heading
            # line then stays in the text so the reader still sees where the section changes.
            self.add(block.text, count_tokens(block.text), self.new_group(), " ")
        while self.headings and self.headings[-1][0] >= block.level:
            self.headings.pop()
        self.headings.append((block.level, block.text))
        self.heading = _breadcrumb(self.headings)

    def subheading_block(self, text: str) -> None:
        # Start a fresh chunk at the subheading when the current one is already substantial.
        if self.tokens >= self.target // 2:
            self.flush()
        self.para_block(text)

    def para_block(self, text: str) -> None:
        tokens = count_tokens(text)
        joiner = "" if _CJK_RE.search(text[:200]) else " "
        total = self.tokens + tokens
        if total <= self.target or (total <= self.soft and tokens <= self.target):
            self.add(text, tokens, self.new_group(), joiner)
            if self.tokens >= self.target:
                self.flush()
            return
        if self.tokens >= self.target // 2:
            self.flush()
            if tokens <= self.soft:
                self.add(text, tokens, self.new_group(), joiner)
                return
        # Too long to keep whole: fill chunks sentence by sentence.
        group = self.new_group()
        for sentence in split_sentences(text):
            for part, part_tokens in _split_long(sentence, self.soft, self.target):
                if self.pieces and self.tokens + part_tokens > self.target:
                    self.flush()
                    group = self.new_group()
                self.add(part, part_tokens, group, joiner)

    def table_block(self, block: _Block) -> None:
        row_tokens = [count_tokens(row) for row in block.rows]
        total = sum(row_tokens)
        fits_here = self.tokens + total <= self.maximum
        if fits_here and (self.tokens + total <= self.soft or self.tokens < self.target // 2):
            self._add_rows(block.rows, row_tokens)
            return
        caption = self._take_caption()
        if caption:
            block = _Block("table", rows=[caption, *block.rows], header_rows=block.header_rows + 1)
            row_tokens = [count_tokens(caption), *row_tokens]
            total = sum(row_tokens)
        self.flush()
        if total <= self.maximum:
            self._add_rows(block.rows, row_tokens)
            return
        # Larger than a chunk: split by rows into balanced pieces, each repeating the header rows
        # so a piece still says which column is which year.
        header = block.rows[: block.header_rows]
        header_tokens = sum(row_tokens[: block.header_rows])
        if header_tokens > self.maximum // 3:
            header, header_tokens = [], 0
        body = list(zip(block.rows[len(header) :], row_tokens[len(header) :], strict=True))
        budget = self.maximum - header_tokens
        body_tokens = sum(t for _, t in body)
        pieces_needed = max(1, math.ceil(body_tokens / budget))
        per_piece = min(budget, math.ceil(body_tokens / pieces_needed) + 1)
        current: list[tuple[str, int]] = []
        current_tokens = 0
        for row, _ in body:
            for part, part_tokens in _split_long(row, budget, self.target):
                if current and current_tokens + part_tokens > per_piece:
                    self._emit_table_piece(header, header_tokens, current)
                    current, current_tokens = [], 0
                current.append((part, part_tokens))
                current_tokens += part_tokens
        if current:
            self._emit_table_piece(header, header_tokens, current, last=True)

    def _take_caption(self) -> str:
        """Detach the text introducing a table ("... as follows (in millions):") to move it along.

        Without this a table that must start a new chunk leaves its caption behind as a tiny
        chunk; moved, it also becomes part of the header repeated on every piece of the table.
        """
        if not self.pieces:
            return ""
        last_group = self.pieces[-1].group
        tail = [p for p in self.pieces if p.group == last_group]
        tail_tokens = sum(p.tokens for p in tail)
        text = tail[-1].joiner.join(p.text for p in tail)
        if self.tokens >= self.minimum and not text.endswith((":", "：")):
            return ""
        if self.tokens < self.minimum:
            # Everything pending is tiny (a section's first line, "CASH FLOWS (in millions)").
            tail, tail_tokens = self.pieces, self.tokens
            text = "\n".join(p.text for p in tail)
        if tail_tokens > self.maximum // 4:
            return ""
        self.pieces = self.pieces[: len(self.pieces) - len(tail)]
        self.tokens -= tail_tokens
        return text

    def _add_rows(self, rows: list[str], row_tokens: list[int]) -> None:
        group = self.new_group()
        for row, tokens in zip(rows, row_tokens, strict=True):
            self.add(row, tokens, group, "\n")

    def _emit_table_piece(
        self, header: list[str], header_tokens: int, rows: list[tuple[str, int]], *, last: bool = False
    ) -> None:
        group = self.new_group()
        if header:
            self.add("\n".join(header), header_tokens, group, "\n")
        for row, tokens in rows:
            self.add(row, tokens, group, "\n")
        if not last:
            self.flush()  # the last piece may take following prose, like any chunk


def _breadcrumb(headings: list[tuple[int, str]]) -> str:
    """Heading trail like "PART II > Item 7 > RESULTS", cut from the left when long."""
    return " > ".join(_shorten(text, 80) for _, text in headings[-3:])


def _shorten(text: str, limit: int) -> str:
    """Cut at a word boundary so a long Item title stays readable in the trail."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def _split_long(text: str, limit: int, target: int) -> Iterator[tuple[str, int]]:
    """Yield `text` whole if within `limit` tokens, else pieces of about `target` tokens.

    Cuts at clause marks (，；, ;) first and between words or CJK characters only when a clause
    is itself too long; used for run-on sentences and giant table rows.
    """
    tokens = count_tokens(text)
    if tokens <= limit:
        yield text, tokens
        return
    # Latin clause marks only count before a space, so "118,573" and "12:30" stay whole.
    clauses = [c for c in re.split(r"(?<=[，；：])\s*|(?<=[,;:])\s+", text) if c]
    if len(clauses) == 1:
        units = re.findall(rf"[{CJK_CLASS}]|[^\s{CJK_CLASS}]+\s*", text)
        buffer, buffer_tokens = "", 0
        for unit in units:
            unit_tokens = count_tokens(unit)
            if buffer and buffer_tokens + unit_tokens > target:
                yield buffer.strip(), count_tokens(buffer)
                buffer, buffer_tokens = "", 0
            buffer += unit
            buffer_tokens += unit_tokens
        if buffer.strip():
            yield buffer.strip(), count_tokens(buffer)
        return
    buffer = ""
    for clause in clauses:
        joined = f"{buffer} {clause}".strip() if not _CJK_RE.match(clause[:1]) else buffer + clause
        if buffer and count_tokens(joined) > target:
            yield from _split_long(buffer, limit, target)
            buffer = clause
        else:
            buffer = joined
    if buffer:
        yield from _split_long(buffer, limit, target)


# ---------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------


def chunk_document(doc: Document, target_tokens: int = 250, max_tokens: int = 400) -> list[Chunk]:
    """Chunks of about `target_tokens` (never more than `max_tokens`) estimated tokens.

    Headings start new chunks and are kept in Chunk.heading (not in the text); tables stay whole
    when they fit in `max_tokens` and are split by rows with their header repeated otherwise;
    long paragraphs are cut at sentence ends; PDF chunks never span two pages.
    """
    if target_tokens <= 0 or max_tokens < target_tokens:
        raise ValueError("need 0 < target_tokens <= max_tokens")
    packer = _Packer(doc, target_tokens, max_tokens)
    for page in doc.pages:
        packer.start_page(page.number)
        for block in _page_blocks(page.text):
            if block.kind == "heading":
                packer.heading_block(block)
            elif block.kind == "table":
                packer.table_block(block)
            elif block.kind == "subheading":
                packer.subheading_block(block.text)
            else:
                packer.para_block(block.text)
    packer.start_page(None)  # flushes the last chunk and tidies its page's tail
    return packer.chunks


def embedding_text(doc: Document, chunk: Chunk) -> str:
    """What gets embedded: the chunk under its title and heading, so a bare table row still says
    which company and section it belongs to. The stored text stays the chunk alone."""
    return titled_text(doc.title, chunk.heading, chunk.text)


def titled_text(title: str, heading: str, text: str) -> str:
    """A passage under its title and heading: what retrieval embeds, what the reranker is trained on and
    reads when served (one function, so the three never drift apart)."""
    context = " / ".join(part for part in (title, heading) if part)
    return f"{context}\n{text}" if context else text
