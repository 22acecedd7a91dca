"""Citation parsing and ranking of merged passages."""

from __future__ import annotations

from weaverbird_orchestrator.citations import cited_numbers
from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.ranker import best_cosine, rank


def _p(pid: str, text: str, score: float, origin: str = "local") -> Passage:
    return Passage(pid, text, score, f"doc-{pid}", "t", "s", 0, origin)


def test_cited_numbers_reads_single_grouped_and_fullwidth_forms() -> None:
    answer = "Revenue rose [1]. Margins fell [2, 3]. 净利润增长【4】，见[5][6]、【7、8】。"
    assert cited_numbers(answer) == {1, 2, 3, 4, 5, 6, 7, 8}


def test_cited_numbers_ignores_non_citation_brackets() -> None:
    assert cited_numbers("A list [a] and a year (2024) and [x1]") == set()


def test_rank_orders_by_score_and_keeps_best_duplicate() -> None:
    local = [_p("a", "Revenue was $10M.", 0.61), _p("b", "Other text", 0.40)]
    web = [_p("c", "revenue   was $10m.", 0.70, "web"), _p("d", "Web only", 0.55, "web")]
    ranked = rank(local, web)
    assert [p.id for p in ranked] == ["c", "d", "b"]
    assert ranked[0].origin == "web"


def test_rank_keeps_the_retrievers_order_for_local_passages_alone() -> None:
    # Hybrid retrieval orders by fused rank, not cosine; re-sorting by cosine would undo the lexical leg.
    local = [_p("a", "Exact words", 0.30), _p("b", "Similar meaning", 0.55), _p("c", "exact   WORDS", 0.20)]
    assert [p.id for p in rank(local)] == ["a", "b"]


def test_best_cosine_is_the_highest_score_not_the_first() -> None:
    assert best_cosine([_p("a", "x", 0.3), _p("b", "y", 0.6)]) == 0.6
    assert best_cosine([]) == -1.0
