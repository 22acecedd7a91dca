"""Split Documents into ~target-token chunks along headings, tables, paragraphs and sentences.

The page is read into blocks by page_blocks; this module packs them into chunks (a heading trail per
chunk, tables split by rows with their header repeated, long paragraphs cut at sentence ends).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from weaverbird_common.docs.documents import Chunk, Document
from weaverbird_common.docs.page_blocks import Block, page_blocks
from weaverbird_common.docs.text_units import CJK_RE, split_long

# Re-exported: the generator and benchmarks measure and cut text in the chunker's units.
from weaverbird_common.docs.text_units import count_tokens as count_tokens
from weaverbird_common.docs.text_units import split_sentences as split_sentences
from weaverbird_common.questions import CJK_CLASS


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

    def heading_block(self, block: Block) -> None:
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
        joiner = "" if CJK_RE.search(text[:200]) else " "
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
            for part, part_tokens in split_long(sentence, self.soft, self.target):
                if self.pieces and self.tokens + part_tokens > self.target:
                    self.flush()
                    group = self.new_group()
                self.add(part, part_tokens, group, joiner)

    def table_block(self, block: Block) -> None:
        row_tokens = [count_tokens(row) for row in block.rows]
        total = sum(row_tokens)
        fits_here = self.tokens + total <= self.maximum
        if fits_here and (self.tokens + total <= self.soft or self.tokens < self.target // 2):
            self._add_rows(block.rows, row_tokens)
            return
        caption = self._take_caption()
        if caption:
            block = Block("table", rows=[caption, *block.rows], header_rows=block.header_rows + 1)
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
            for part, part_tokens in split_long(row, budget, self.target):
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


def chunk_document(doc: Document, target_tokens: int = 250, max_tokens: int = 400) -> list[Chunk]:
    """Chunks of about `target_tokens` (never more than `max_tokens`) estimated tokens.

    Headings start new chunks and are kept in Chunk.heading (not in the text); tables stay whole
    when they fit in `max_tokens` and are split by rows with their header repeated otherwise;
    long paragraphs are cut at sentence ends; PDF chunks never span two pages.
    """
    if target_tokens <= 0 or max_tokens < target_tokens:
        raise ValueError("need 0 < target_tokens <= max_tokens")
    chunks = _pack(doc, target_tokens, max_tokens, headings=True)
    # Nothing but headings (a one-line item read as a title): its lines are its text, or it is not searchable.
    return chunks or _pack(doc, target_tokens, max_tokens, headings=False)


def _pack(doc: Document, target_tokens: int, max_tokens: int, *, headings: bool) -> list[Chunk]:
    packer = _Packer(doc, target_tokens, max_tokens)
    for page in doc.pages:
        packer.start_page(page.number)
        for block in page_blocks(page.text):
            if block.kind == "heading" and headings:
                packer.heading_block(block)
            elif block.kind == "table":
                packer.table_block(block)
            elif block.kind == "subheading" and headings:
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
