"""Citation parsing and ranking of merged passages."""

from __future__ import annotations

from weaverbird_orchestrator.citations import cited_numbers
from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.ranker import rank


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
