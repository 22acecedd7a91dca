"""`weaverbird eval retrieval`: every system on every dataset, metrics at k = 1, 3, 5, 10."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from weaverbird_eval.corpus import chunk_units
from weaverbird_eval.datasets import EvalSet, is_held_out
from weaverbird_eval.metrics import KS, collapse, score
from weaverbird_eval.plotting import pyplot, save_figure
from weaverbird_eval.systems import build_system

DEPTH_CHUNKS = 100  # chunks fetched per query before collapsing to units; >= 10 units in practice


@dataclass
class RetrievalRow:
    dataset: str
    language: str
    corpus: str  # how the corpus was built or cut
    system: str
    model_id: str
    chunks: int
    queries: int
    index_s: float
    query_ms_p50: float  # whole query path: embedding (or tokenising) plus search
    metrics: dict[str, float] = field(default_factory=dict)
    # The same metrics on each half of the queries (datasets.is_held_out): settings such as the fusion
    # weights are chosen on "tune" (held-out) and reported on "report" (dev), never on the same questions.
    halves: dict[str, dict[str, float]] = field(default_factory=dict)
    # The same metrics per kind of question (datasets.Query.part), with the number of questions of each.
    parts: dict[str, dict[str, float]] = field(default_factory=dict)


def evaluate_set(evalset: EvalSet, system_names: list[str]) -> list[RetrievalRow]:
    chunks = chunk_units(evalset)
    label = evalset.corpus_label
    relevant = {q.id: q.relevant for q in evalset.queries}
    rows = []
    if not any(chunks.metadata):  # nothing to filter on: filtered-* would repeat its plain backend's row
        system_names = [n for n in system_names if not n.startswith("filtered-")]
    for name in system_names:
        system = build_system(name)
        try:
            start = time.perf_counter()
            system.index(chunks.texts, evalset.language, label, chunks.metadata)
            index_s = time.perf_counter() - start
            rankings, times = [], []
            for q in evalset.queries:  # one at a time, as users ask, so the latency is per question
                t0 = time.perf_counter()
                rankings.append(system.search([q.text], DEPTH_CHUNKS)[0])
                times.append((time.perf_counter() - t0) * 1000)
        finally:
            system.close()
        units = {q.id: collapse(r, chunks.unit_ids, max(KS)) for q, r in zip(evalset.queries, rankings, strict=True)}
        model_id = getattr(getattr(system, "backend", None), "model_id", "bm25s (Lucene, k1=1.5, b=0.75)")
        row = RetrievalRow(
            evalset.name,
            evalset.language,
            evalset.note,
            name,
            model_id,
            len(chunks.texts),
            len(evalset.queries),
            round(index_s, 1),
            round(float(np.percentile(times, 50)), 2),
            score(units, relevant),
        )
        for half, keep in (("tune", True), ("report", False)):
            part = {q: r for q, r in units.items() if is_held_out(q) == keep}
            if part:
                row.halves[half] = score(part, {q: relevant[q] for q in part})
        for kind in sorted({q.part for q in evalset.queries if q.part}):
            part = {q.id: units[q.id] for q in evalset.queries if q.part == kind}
            row.parts[kind] = {**score(part, {q: relevant[q] for q in part}), "queries": len(part)}
        m = row.metrics
        print(
            f"[{evalset.name}/{name}] {row.queries} queries, {row.chunks} chunks: "
            f"R@1 {m['R@1']:.3f} R@5 {m['R@5']:.3f} "
            f"R@10 {m['R@10']:.3f} MRR {m['MRR']:.3f} nDCG@10 {m['nDCG@10']:.3f} (index {index_s:.0f} s)",
            flush=True,
        )
        rows.append(row)
    return rows


def markdown(rows: list[RetrievalRow]) -> str:
    """A summary table, then every metric at every k."""
    lines = [
        "| dataset | lang | corpus | system | R@1 | R@3 | R@5 | R@10 | MAP@10 | MRR | nDCG@10 | query p50 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        m = r.metrics
        lines.append(
            f"| {r.dataset} | {r.language} | {r.corpus}; {r.chunks} chunks, {r.queries} queries | {r.system} | "
            f"{m['R@1']:.3f} | {m['R@3']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | {m['MAP@10']:.3f} | "
            f"{m['MRR']:.3f} | {m['nDCG@10']:.3f} | {r.query_ms_p50:.1f} |"
        )
    if any(r.parts for r in rows):
        lines += [
            "",
            "| dataset | system | kind of question | questions | R@1 | R@5 | R@10 | MRR |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            for kind, m in r.parts.items():
                lines.append(
                    f"| {r.dataset} | {r.system} | {kind} | {int(m['queries'])} | {m['R@1']:.3f} | {m['R@5']:.3f} | "
                    f"{m['R@10']:.3f} | {m['MRR']:.3f} |"
                )
    lines += [
        "",
        "| dataset (chunks) | system | k | P@k | R@k | F1@k | MAP@k | MAR@k |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for k in KS:
            m = r.metrics
            lines.append(
                f"| {r.dataset} ({r.chunks}) | {r.system} | {k} | {m[f'P@{k}']:.3f} | {m[f'R@{k}']:.3f} | "
                f"{m[f'F1@{k}']:.3f} | {m[f'MAP@{k}']:.3f} | {m[f'MAR@{k}']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def plot(rows: list[RetrievalRow], path: Path) -> None:
    """R@k against k, one panel per dataset (and corpus cut), one line per system."""
    plt = pyplot()
    panels = list(dict.fromkeys((r.dataset, r.corpus) for r in rows))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (dataset, corpus) in zip(axes[0], panels, strict=True):
        for r in rows:
            if (r.dataset, r.corpus) == (dataset, corpus):
                ax.plot(KS, [r.metrics[f"R@{k}"] for k in KS], marker="o", label=r.system)
        ax.set_title(f"{dataset}\n{corpus}", fontsize=9)
        ax.set_xlabel("k")
        ax.set_ylabel("recall@k")
        ax.set_xticks(KS)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save_figure(fig, path)
