"""Base against trained retrieval models (issue 35) on TAT-QA's held-out half, full corpus.

    python -m benchmarks.trained_models --reranker var/models/weaverbird-reranker-... \
        --encoder gt --encoder var/models/weaverbird-encoder-...

Rerankers: BM25 (the evaluation's) retrieves, each cross-encoder re-scores its top `--candidates` chunks in
the orchestrator's CrossEncoderReranker. Encoders: dense retrieval alone by cosine ("gt": the packaged
all-MiniLM-L6-v2 the training starts from). Held-out: `weaverbird_eval.datasets.is_held_out`; the
training queries are generated from the passages and never see these questions.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from weaverbird_eval.corpus import chunk_units
from weaverbird_eval.datasets import is_held_out, load
from weaverbird_eval.metrics import KS, collapse, score
from weaverbird_eval.retrieval import DEPTH_CHUNKS
from weaverbird_eval.systems import build_system


def _line(name: str, run: dict[str, list[str]], relevant: dict[str, frozenset[str]], extra: str = "") -> None:
    m = score(run, relevant)
    print(f"  {name:<60} R@1 {m['R@1']:.3f}  R@5 {m['R@5']:.3f}  R@10 {m['R@10']:.3f}  MRR {m['MRR']:.3f} {extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("WEAVERBIRD_DATA", "../shared/data")))
    parser.add_argument("--queries", type=int, default=300, help="first N held-out questions")
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--reranker", action="append", default=[], type=Path)
    parser.add_argument("--encoder", action="append", default=[])
    parser.add_argument(
        "--onnx", action="append", default=[], choices=["fp32", "int8"], help="also score with the ONNX export"
    )
    args = parser.parse_args()
    evalset = load("tatqa", args.data)
    chunks = chunk_units(evalset)
    sample = [q for q in evalset.queries if is_held_out(q.id)][: args.queries]
    relevant = {q.id: q.relevant for q in sample}
    print(f"tatqa held-out: {len(sample)} questions, {len(chunks.texts)} chunks")
    if args.reranker:
        from weaverbird_orchestrator.rerank.cross_encoder import CrossEncoderReranker

        bm25 = build_system("bm25")
        bm25.index(chunks.texts, evalset.language, evalset.corpus_label, chunks.metadata)
        first = {q.id: bm25.search([q.text], DEPTH_CHUNKS)[0] for q in sample}
        _line("bm25", {k: collapse(r, chunks.unit_ids, max(KS)) for k, r in first.items()}, relevant)
        from weaverbird_common.encoders.onnx_cross_encoder import OnnxCrossEncoder

        runs = [(p, "torch") for p in args.reranker] + [(p, v) for p in args.reranker for v in args.onnx]
        for path, runtime in runs:
            if runtime == "torch":
                score_texts = CrossEncoderReranker(str(path), max_length=args.max_length).score_texts
            else:
                score_texts = OnnxCrossEncoder(path, runtime, max_length=args.max_length).score
            run, ms = {}, []
            for q in sample:
                head, tail = first[q.id][: args.candidates], first[q.id][args.candidates :]
                start = time.perf_counter()
                scores = score_texts(q.text, [chunks.texts[i] for i, _ in head])
                ms.append((time.perf_counter() - start) * 1000)
                order = sorted(range(len(head)), key=lambda j: -scores[j])
                run[q.id] = collapse([(head[j][0], scores[j]) for j in order] + tail, chunks.unit_ids, max(KS))
            _line(f"bm25 + {path.name} ({runtime})", run, relevant, f"rerank p50 {np.percentile(ms, 50):.0f} ms")
    for name in args.encoder:
        from sentence_transformers import SentenceTransformer

        path = name
        if name == "gt":
            from weaverbird_cli.train.models import packaged_minilm

            path = str(packaged_minilm())
        model = SentenceTransformer(path, device="cpu", local_files_only=True)
        model.max_seq_length = args.max_length
        start = time.perf_counter()
        passages = model.encode(chunks.texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
        questions = model.encode([q.text for q in sample], normalize_embeddings=True, convert_to_numpy=True)
        took = time.perf_counter() - start
        run = {}
        for q, vector in zip(sample, questions, strict=True):
            sims = passages @ vector
            top = np.argsort(-sims)[:DEPTH_CHUNKS]
            run[q.id] = collapse([(int(i), float(sims[i])) for i in top], chunks.unit_ids, max(KS))
        _line(f"dense {Path(path).name}", run, relevant, f"(embedding {took:.0f} s)")


if __name__ == "__main__":
    main()
