from __future__ import annotations

import pytest
from weaverbird_eval.metrics import average_recall, collapse, score


def test_collapse_ranks_a_unit_at_its_best_chunk() -> None:
    unit_ids = ["a", "a", "b", "c", "b"]
    ranking = [(1, 0.9), (0, 0.8), (4, 0.7), (3, 0.6), (2, 0.5)]
    assert collapse(ranking, unit_ids, depth=10) == ["a", "b", "c"]
    assert collapse(ranking, unit_ids, depth=2) == ["a", "b"]


def test_scores_match_hand_computed_values() -> None:
    rankings = {"q1": ["a", "b", "c"], "q2": ["x", "y"]}
    relevant = {"q1": frozenset({"b"}), "q2": frozenset({"x", "z"})}
    m = score(rankings, relevant, ks=(1, 3))
    # q1: relevant at rank 2; q2: one of two relevant at rank 1.
    assert m["P@1"] == pytest.approx((0 + 1) / 2)
    assert m["R@1"] == pytest.approx((0 + 0.5) / 2)
    assert m["P@3"] == pytest.approx((1 / 3 + 1 / 3) / 2)  # precision divides by k even if fewer returned
    assert m["R@3"] == pytest.approx((1 + 0.5) / 2)
    assert m["F1@1"] == pytest.approx((0 + 2 * 1 * 0.5 / 1.5) / 2)
    assert m["MRR"] == pytest.approx((0.5 + 1) / 2)
    assert m["MAP@3"] == pytest.approx((0.5 / 1 + 1 / 2) / 2)
    assert m["MAR@3"] == pytest.approx(((0 + 1 + 1) / 3 + 0.5) / 2)


def test_average_recall_rewards_early_hits_that_recall_cannot_see() -> None:
    early = average_recall(["g", "x", "y"], frozenset({"g"}), 3)
    late = average_recall(["x", "y", "g"], frozenset({"g"}), 3)
    assert early == pytest.approx(1.0)
    assert late == pytest.approx(1 / 3)


def test_a_query_with_nothing_retrieved_scores_zero() -> None:
    m = score({"q": []}, {"q": frozenset({"a"})}, ks=(1,))
    assert m["R@1"] == 0 and m["MRR"] == 0 and m["MAR@1"] == 0
