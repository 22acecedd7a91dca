"""IR metrics over unit rankings. ranx computes the standard ones; MAR@k, which ranx lacks, is ours.

Chunk rankings are first collapsed to unit rankings (a unit ranks where its best chunk ranks), so
"relevant = any chunk of an evidence page" counts a page once however many of its chunks match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from ranx import Qrels, Run, evaluate

KS: tuple[int, ...] = (1, 3, 5, 10)


def collapse(ranking: Sequence[tuple[int, float]], unit_ids: Sequence[str], depth: int) -> list[str]:
    """Unit ids in the order of their first chunk in `ranking`, at most `depth` of them."""
    seen: dict[str, None] = {}
    for chunk, _score in ranking:
        seen.setdefault(unit_ids[chunk], None)
        if len(seen) == depth:
            break
    return list(seen)


def average_recall(ranked: Sequence[str], relevant: frozenset[str] | set[str], k: int) -> float:
    """AR@k = mean of R@1..R@k: the area under the recall-at-cutoff curve, so a relevant unit
    found at rank 1 counts more than one found at rank k (R@k alone cannot tell them apart)."""
    hits = np.cumsum([u in relevant for u in ranked[:k]] + [False] * (k - min(k, len(ranked))))
    return float(np.mean(hits / len(relevant)))


def score(
    rankings: Mapping[str, Sequence[str]], relevant: Mapping[str, frozenset[str]], ks: Sequence[int] = KS
) -> dict:
    """P@k, R@k, F1@k, MAP@k, MAR@k for each k, plus MRR and nDCG@10, averaged over queries.

    `rankings`: query id -> ranked unit ids; `relevant`: query id -> relevant unit ids.
    """
    qrels = Qrels({q: {u: 1 for u in rel} for q, rel in relevant.items()})
    # Scores from ranks, so ranx evaluates exactly our order (it re-sorts by score).
    run = Run({q: ({u: float(len(r) - i) for i, u in enumerate(r)} or {"\x00none": 0.0}) for q, r in rankings.items()})
    names = [f"{m}@{k}" for k in ks for m in ("precision", "recall", "f1", "map")] + ["mrr", "ndcg@10"]
    values = evaluate(qrels, run, names, make_comparable=True)
    out = {}
    for k in ks:
        out[f"P@{k}"] = float(values[f"precision@{k}"])
        out[f"R@{k}"] = float(values[f"recall@{k}"])
        out[f"F1@{k}"] = float(values[f"f1@{k}"])
        out[f"MAP@{k}"] = float(values[f"map@{k}"])
        out[f"MAR@{k}"] = float(np.mean([average_recall(rankings.get(q, []), rel, k) for q, rel in relevant.items()]))
    out["MRR"] = float(values["mrr"])
    out["nDCG@10"] = float(values["ndcg@10"])
    return out
