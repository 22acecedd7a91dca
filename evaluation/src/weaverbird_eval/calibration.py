"""`weaverbird eval calibrate`: the web-search threshold c for one embedder, by the paper's rule.

For every (question, gold passage) pair the positive score is the cosine of the question with the
best chunk of its gold units; the top-1 negative is its best chunk outside them. c is the 1 %
quantile of the held-out positives, so 99 % of questions whose answer is in the KB stay local. The
other half (dev) reports what that c does: the share of answerable questions that would still go to
the web, and the share of top-1 negatives at or above c, i.e. how often a question whose evidence is
missing from the KB would wrongly stay local.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from weaverbird_eval.corpus import chunk_units
from weaverbird_eval.datasets import EvalSet, is_held_out
from weaverbird_eval.plotting import pyplot, save_figure
from weaverbird_eval.systems import DenseSystem

QUANTILE = 0.01
TRADEOFF_QUANTILES = (0.01, 0.05, 0.10, 0.25, 0.50)


@dataclass
class PairScores:
    dataset: str
    held_out: list[bool]
    positive: list[float]  # best gold chunk
    negative: list[float]  # best non-gold chunk


@dataclass
class DatasetReport:
    dataset: str
    queries_dev: int
    web_share_dev: float  # answerable dev questions whose best score is below c
    missing_stays_local: float  # dev top-1 negatives >= c
    own_c: float  # this dataset's own 1 % quantile, for comparison


@dataclass
class Calibration:
    backend: str
    model_id: str
    threshold: float
    quantile: float
    pairs_held_out: int
    datasets: list[DatasetReport] = field(default_factory=list)
    # Other choices of c on the pooled dev pairs: what each costs in both directions.
    tradeoff: list[Tradeoff] = field(default_factory=list)


@dataclass
class Tradeoff:
    rule: str
    threshold: float
    web_share_dev: float
    missing_stays_local: float


def _errors(pos: np.ndarray, neg: np.ndarray, c: float) -> tuple[float, float]:
    """(answerable sent to the web, missing evidence kept local) at c."""
    return float(np.mean(np.maximum(pos, neg) < c)), float(np.mean(neg >= c))


def tradeoff(held_pos: np.ndarray, held_neg: np.ndarray, dev_pos: np.ndarray, dev_neg: np.ndarray) -> list[Tradeoff]:
    """c at several quantiles of the held-out positives, and the c where both error shares meet on
    the held-out pairs; every c is chosen on the held-out half and reported on the dev half."""

    def at(rule: str, c: float) -> Tradeoff:
        return Tradeoff(rule, round(c, 4), *_errors(dev_pos, dev_neg, c))

    rows = [at(f"{q:.0%} quantile of positives", float(np.quantile(held_pos, q))) for q in TRADEOFF_QUANTILES]
    grid = np.unique(np.concatenate([held_pos, held_neg]))
    gaps = [abs(np.subtract(*_errors(held_pos, held_neg, c))) for c in grid]
    rows.append(at("equal error (answerable to web = missing kept local)", float(grid[int(np.argmin(gaps))])))
    return rows


def pair_scores(system: DenseSystem, evalset: EvalSet) -> PairScores:
    chunks = chunk_units(evalset)
    passages = system.embed_passages(chunks.texts, evalset.corpus_label)
    queries = system.embed_queries([q.text for q in evalset.queries])
    units = np.asarray(chunks.unit_ids)
    sims = queries @ passages.T  # unit vectors, so the cosine
    held, pos, neg = [], [], []
    for q, row in zip(evalset.queries, sims, strict=True):
        gold = np.isin(units, list(q.relevant))
        if not gold.any():  # gold units the chunker left empty (a blank table): no pair to score
            continue
        held.append(is_held_out(q.id))
        pos.append(float(row[gold].max()))
        neg.append(float(row[~gold].max()))
    return PairScores(evalset.name, held, pos, neg)


def calibrate(
    system: DenseSystem, sets: list[EvalSet], quantile: float = QUANTILE
) -> tuple[Calibration, list[PairScores]]:
    scores = [pair_scores(system, s) for s in sets]
    dev_pos = np.asarray([p for s in scores for p, h in zip(s.positive, s.held_out, strict=True) if not h])
    dev_neg = np.asarray([n for s in scores for n, h in zip(s.negative, s.held_out, strict=True) if not h])
    held = np.asarray([p for s in scores for p, h in zip(s.positive, s.held_out, strict=True) if h])
    held_neg = np.asarray([n for s in scores for n, h in zip(s.negative, s.held_out, strict=True) if h])
    c = float(np.quantile(held, quantile))
    result = Calibration(system.name, system.backend.model_id, round(c, 4), quantile, int(held.size))
    result.tradeoff = tradeoff(held, held_neg, dev_pos, dev_neg)
    for s in scores:
        dev = ~np.asarray(s.held_out)
        pos, neg = np.asarray(s.positive), np.asarray(s.negative)
        best = np.maximum(pos, neg)
        own = pos[~dev]
        result.datasets.append(
            DatasetReport(
                s.dataset,
                int(dev.sum()),
                float(np.mean(best[dev] < c)),
                float(np.mean(neg[dev] >= c)),
                round(float(np.quantile(own, quantile)), 4) if own.size else float("nan"),
            )
        )
    return result, scores


def markdown(results: list[Calibration]) -> str:
    lines = [
        "| embedder | c (1 % quantile of held-out positives) | held-out pairs | dataset | dev questions | "
        "answerable sent to web | missing evidence kept local | dataset's own c |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for d in r.datasets:
            lines.append(
                f"| {r.backend} | {r.threshold:.3f} | {r.pairs_held_out} | {d.dataset} | {d.queries_dev} | "
                f"{d.web_share_dev:.1%} | {d.missing_stays_local:.1%} | {d.own_c:.3f} |"
            )
    lines += [
        "",
        "| embedder | choice of c | c | answerable sent to web (dev, pooled) | missing evidence kept local |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        for t in r.tradeoff:
            lines.append(
                f"| {r.backend} | {t.rule} | {t.threshold:.3f} | {t.web_share_dev:.1%} | {t.missing_stays_local:.1%} |"
            )
    return "\n".join(lines) + "\n"


def plot(results: list[Calibration], scores: dict[str, list[PairScores]], path: Path) -> None:
    """Per embedder: histogram of positive scores against top-1 negatives, with c marked."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.6), squeeze=False)
    for ax, r in zip(axes[0], results, strict=True):
        pos = np.concatenate([s.positive for s in scores[r.backend]])
        neg = np.concatenate([s.negative for s in scores[r.backend]])
        bins = np.linspace(min(pos.min(), neg.min()), max(pos.max(), neg.max()), 50)
        ax.hist(neg, bins=bins, alpha=0.55, label="top-1 negative", color="tab:red")
        ax.hist(pos, bins=bins, alpha=0.55, label="positive (gold)", color="tab:blue")
        ax.axvline(r.threshold, color="black", linestyle="--", label=f"c = {r.threshold:.3f}")
        ax.set_title(f"{r.backend}: {r.model_id}", fontsize=8)
        ax.set_xlabel("cosine similarity")
        ax.set_ylabel("questions")
        ax.legend(fontsize=8)
    save_figure(fig, path)
