"""The model's J passages come from J different pages: chunks of one page that rank in the top K join it.

A filing page is cut into several chunks (a statement and its continuation, a note and its table), and two
of them often rank next to each other: on FinanceBench's dev questions a third of the served top-3 chunk
lists name one page twice, so the model reads two pages where it could read three (the evidence page is
among the first three chunks for 0.647 of the questions, among the first three pages for 0.676). Joining a
page's ranked chunks into one passage, in their order on the page, keeps every line the model read before
and frees a slot for the next page; the query-focused context (generator/context_focus.py) still decides
which lines fit the token budget.

Only paged documents are joined: a chunk without a page (a web page, a news item, a text file) may sit far
from its document's other chunks, so each stays a passage of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from weaverbird_orchestrator.domain import Passage

GAP = "\n…\n"  # between chunks of a page that are not next to each other


def _page(p: Passage) -> tuple[str, str, int] | None:
    return (p.origin, p.document_id, p.page) if p.document_id and p.page > 0 else None


def _joined(chunks: Sequence[Passage]) -> Passage:
    """One passage from a page's chunks: the best-ranked chunk's id, score and fields; text in page order."""
    best = chunks[0]
    if len(chunks) == 1:
        return best
    parts: list[str] = []
    previous: int | None = None
    for chunk in sorted(chunks, key=lambda c: c.chunk_index):
        if previous is not None:
            parts.append("\n" if chunk.chunk_index == previous + 1 else GAP)
        parts.append(chunk.text.strip())
        previous = chunk.chunk_index
    return replace(best, text="".join(parts))


def join_pages(ranked: Sequence[Passage], top_j: int) -> list[Passage]:
    """`ranked` with its first `top_j` entries made of `top_j` different pages where the list holds them.

    Each of the first `top_j` pages (in order of its best chunk) becomes one passage holding its chunks
    of the list; the passages left follow in their order (further reading).
    """
    groups: dict[object, list[Passage]] = {}
    for index, p in enumerate(ranked):
        key = _page(p)
        groups.setdefault(key if key is not None else ("chunk", index), []).append(p)
    leading = list(groups.values())[:top_j]
    taken = {id(c) for group in leading for c in group}
    return [_joined(group) for group in leading] + [p for p in ranked if id(p) not in taken]
