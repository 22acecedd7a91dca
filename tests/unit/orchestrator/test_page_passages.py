"""The model's J passages are J pages: a page's ranked chunks join its best one (page_passages.py)."""

from __future__ import annotations

from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.page_passages import GAP, join_pages


def _chunk(doc: str, page: int, index: int, text: str, score: float = 0.5, origin: str = "local") -> Passage:
    return Passage(
        id=f"{doc}:{index}",
        text=text,
        score=score,
        document_id=doc,
        title=doc,
        source=f"{doc}.pdf",
        page=page,
        origin=origin,
        chunk_index=index,
    )


def test_a_page_ranked_twice_fills_one_slot_and_the_next_page_moves_up() -> None:
    ranked = [
        _chunk("acme", 60, 8, "Total current assets 7,453", 0.9),
        _chunk("acme", 60, 9, "Total current liabilities 5,175", 0.8),
        _chunk("acme", 12, 2, "Liquidity discussion", 0.7),
        _chunk("acme", 61, 10, "Cash flow statement", 0.6),
        _chunk("acme", 5, 1, "Cover page", 0.5),
    ]
    out = join_pages(ranked, 3)
    assert [(p.page, p.id) for p in out[:3]] == [(60, "acme:8"), (12, "acme:2"), (61, "acme:10")]
    assert out[0].text == "Total current assets 7,453\nTotal current liabilities 5,175"
    assert out[0].score == 0.9
    assert [p.id for p in out[3:]] == ["acme:1"]  # further reading keeps what was not joined


def test_chunks_join_in_their_order_on_the_page_with_a_gap_between_distant_ones() -> None:
    ranked = [
        _chunk("acme", 60, 9, "second", 0.9),
        _chunk("acme", 60, 7, "first", 0.8),
        _chunk("acme", 60, 8, "middle", 0.7),
        _chunk("acme", 60, 12, "last", 0.6),
    ]
    (joined,) = join_pages(ranked, 3)
    assert joined.text == f"first\nmiddle\nsecond{GAP}last"
    assert joined.id == "acme:9"


def test_a_chunk_below_the_first_j_pages_joins_its_page_and_leaves_further_reading() -> None:
    ranked = [
        _chunk("a", 1, 0, "a1"),
        _chunk("b", 2, 3, "b2"),
        _chunk("c", 3, 5, "c3"),
        _chunk("d", 4, 6, "d4"),
        _chunk("a", 1, 1, "a1 continued"),
    ]
    out = join_pages(ranked, 2)
    assert [p.text for p in out] == ["a1\na1 continued", "b2", "c3", "d4"]


def test_pageless_chunks_and_other_documents_stay_apart() -> None:
    ranked = [
        _chunk("news", 0, 0, "web one", origin="web"),
        _chunk("news", 0, 1, "web two", origin="web"),
        _chunk("x", 3, 0, "x page 3"),
        _chunk("y", 3, 0, "y page 3"),
    ]
    out = join_pages(ranked, 3)
    assert [p.text for p in out] == ["web one", "web two", "x page 3", "y page 3"]


def test_nothing_changes_when_every_page_differs() -> None:
    ranked = [_chunk("a", i, i, f"page {i}") for i in range(1, 6)]
    assert join_pages(ranked, 3) == ranked
    assert join_pages([], 3) == []
