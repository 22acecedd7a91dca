"""Measures the retriever's embedded vector stores: upsert rate, optimise time, search latency, recall@10."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# Lets `python benchmarks/vector_stores.py` work from a fresh clone without `pip install -e .`.
sys.path.insert(0, str(REPO / "services" / "retriever" / "src"))

from weaverbird_retriever.stores import ChunkRecord, VectorStore, point_id  # noqa: E402
from weaverbird_retriever.stores.edge_store import EdgeStore  # noqa: E402
from weaverbird_retriever.stores.qdrant_client_store import QdrantClientStore  # noqa: E402

K = 10
COMPANIES = 10  # the filtered search keeps one company: 10% of the points
# local mode checks a filter in Python point by point (~50 µs each), so filtered runs use fewer queries.
FILTERED_QUERIES = 50
UPSERT_BATCH = 1024  # the retriever's max_upsert_batch default: what one gRPC Upsert carries


@dataclass
class Result:
    store: str
    data: str
    points: int
    upsert_s: float
    upsert_per_s: float
    optimize_s: float | None
    p50_ms: float
    p99_ms: float
    recall: float
    filtered_p50_ms: float
    filtered_recall: float
    note: str = ""


@dataclass
class Dataset:
    name: str
    vectors: np.ndarray  # unit rows
    queries: np.ndarray  # unit rows
    companies: np.ndarray  # company index per point


def make_dataset(kind: str, n: int, dim: int, queries: int, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    if kind == "random":
        x = rng.standard_normal((n, dim), dtype=np.float32)
        q = rng.standard_normal((queries, dim), dtype=np.float32)
    else:
        # Real sentence embeddings have low intrinsic dimension and topic clusters; isotropic
        # Gaussians have neither and are the worst case for any graph index. This mimics the former:
        # 500 topics plus variation in a 64-d subspace plus a little full-rank noise.
        centres = rng.standard_normal((500, dim), dtype=np.float32)
        basis = rng.standard_normal((64, dim), dtype=np.float32) / 8
        x = (
            0.5 * centres[rng.integers(0, 500, n)]
            + rng.standard_normal((n, 64), dtype=np.float32) @ basis
            + 0.05 * rng.standard_normal((n, dim), dtype=np.float32)
        )
        q = x[rng.integers(0, n, queries)] + 0.5 * rng.standard_normal((queries, dim), dtype=np.float32) / 8
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return Dataset(kind, x, q, np.arange(n) % COMPANIES)


def exact_top_k(ds: Dataset, n: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Brute-force top-K row indices per query over the first n points (optionally only where mask)."""
    sims = ds.queries @ ds.vectors[:n].T  # all queries; callers slice the rows they use
    if mask is not None:
        sims[:, ~mask[:n]] = -np.inf
    top = np.argpartition(-sims, K, axis=1)[:, :K]
    return np.take_along_axis(top, np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1), axis=1)


def records(ds: Dataset, start: int, stop: int) -> list[ChunkRecord]:
    return [
        ChunkRecord(
            point_id(f"doc-{i // 50}", i),
            ds.vectors[i],
            f"chunk {i}",
            {
                "document_id": f"doc-{i // 50}",
                "company": f"c{ds.companies[i]}",
                "year": 2015 + i % 10,
                "row": i,
            },
        )
        for i in range(start, stop)
    ]


def load(store: VectorStore, ds: Dataset, n: int) -> float:
    started = time.perf_counter()
    for start in range(0, n, UPSERT_BATCH):
        store.upsert(records(ds, start, min(n, start + UPSERT_BATCH)))
    return time.perf_counter() - started


def measure_search(
    store: VectorStore, ds: Dataset, n: int, filters: dict[str, str | int] | None = None
) -> tuple[float, float, float]:
    """(p50 ms, p99 ms, recall@K) over all queries, through the store API the retriever calls."""
    mask = ds.companies == 0 if filters else None
    queries = ds.queries[:FILTERED_QUERIES] if filters else ds.queries
    truth = exact_top_k(ds, n, mask)
    store.search(queries[0], K, filters)  # first call pays one-off page-ins; not a steady-state latency
    latencies, found = [], 0
    for qi, q in enumerate(queries):
        started = time.perf_counter()
        hits = store.search(q, K, filters)
        latencies.append(time.perf_counter() - started)
        rows = {int(h.payload["row"]) for h in hits}
        found += len(rows & set(truth[qi].tolist()))
    lat = np.asarray(latencies) * 1e3
    return float(np.percentile(lat, 50)), float(np.percentile(lat, 99)), found / (K * len(queries))


def run(
    name: str,
    open_store: Callable[[], VectorStore],
    ds: Dataset,
    n: int,
    *,
    optimize: bool,
    note: str = "",
    ef_sweep: Sequence[int] = (),
) -> list[Result]:
    print(f"  {name}: {ds.name} {n:,} points ...", flush=True)
    store = open_store()
    try:
        store.ensure_collection(ds.vectors.shape[1])
        upsert_s = load(store, ds, n)
        optimize_s = None
        if optimize and isinstance(store, EdgeStore):
            started = time.perf_counter()
            store.optimize()
            optimize_s = time.perf_counter() - started
        assert store.stats().points == n, "every upserted point must be stored"
        p50, p99, recall = measure_search(store, ds, n)
        fp50, _, frecall = measure_search(store, ds, n, {"company": "c0"})
        out = [Result(name, ds.name, n, upsert_s, n / upsert_s, optimize_s, p50, p99, recall, fp50, frecall, note)]
        for ef in ef_sweep:
            assert isinstance(store, EdgeStore)
            store.hnsw_ef = ef
            p50, p99, recall = measure_search(store, ds, n)
            fp50, _, frecall = measure_search(store, ds, n, {"company": "c0"})
            row = Result(
                f"{name} ef={ef}",
                ds.name,
                n,
                upsert_s,
                n / upsert_s,
                optimize_s,
                p50,
                p99,
                recall,
                fp50,
                frecall,
                "same shard, other hnsw_ef",
            )
            out.append(row)
        return out
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=100_000, help="points for Qdrant Edge")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--local-points", type=int, default=2_000, help="cap for qdrant-client local mode on disk")
    parser.add_argument("--memory-points", type=int, default=10_000, help="cap for qdrant-client in memory")
    parser.add_argument(
        "--ef", type=int, nargs="*", default=[100, 512], help="hnsw_ef values to sweep besides the store default (256)"
    )
    parser.add_argument("--quick", action="store_true", help="skip the auto-optimise and clustered runs")
    parser.add_argument("--data-dir", type=Path, default=None, help="where shards go (default: a temp dir)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="Local mode is not recommended")

    began = time.perf_counter()
    # Shared machines make timings noisy; the load average says how busy the CPUs were meanwhile.
    load_before = _load()
    root = Path(tempfile.mkdtemp(prefix="wb-vector-bench-", dir=args.data_dir))
    dirs = iter(range(1_000))

    def edge(**kwargs: object) -> Callable[[], VectorStore]:
        return lambda: EdgeStore(root / f"edge-{next(dirs)}", "bench", **kwargs)  # type: ignore[arg-type]

    def local() -> VectorStore:
        return QdrantClientStore.local(str(root / f"local-{next(dirs)}"), "bench")

    try:
        rand = make_dataset("random", args.points, args.dim, args.queries, args.seed)
        print(
            f"Vector store benchmark: {args.dim}-d unit vectors, k={K}, {args.queries} queries "
            f"({FILTERED_QUERIES} filtered on one company in {COMPANIES})"
        )
        results: list[Result] = []
        # Bulk pattern: auto-optimise off during the load, one optimise at the end.
        results += run("edge", edge(optimize_threshold=None), rand, args.points, optimize=True, ef_sweep=args.ef)
        if not args.quick:
            # What the retriever does by default: gRPC-sized upserts, optimise whenever 20k points are
            # unindexed; the optimise time is inside the upsert time.
            results += run("edge auto", edge(), rand, args.points, optimize=False, note="default policy")
        small = min(args.local_points, args.points)
        results += run("edge", edge(optimize_threshold=None), rand, small, optimize=True, note="local's size")
        results += run("local (disk)", local, rand, small, optimize=False, note="capped: one sqlite commit per point")
        mem = min(args.memory_points, args.points)
        results += run(
            "local (memory)",
            lambda: QdrantClientStore.memory("bench"),
            rand,
            mem,
            optimize=False,
            note="capped: search O(n)",
        )
        if not args.quick:
            clus = make_dataset("clustered", args.points, args.dim, args.queries, args.seed + 1)
            results += run("edge", edge(optimize_threshold=None), clus, args.points, optimize=True, ef_sweep=[100])
        print_table(results)
        print(
            f"\nTotal {time.perf_counter() - began:.0f} s on {_cpus()} CPU(s); load average {load_before} -> {_load()}."
        )
        if args.json:
            args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def print_table(results: Sequence[Result]) -> None:
    head = (
        f"{'store':<18}{'data':<10}{'points':>8}{'upsert s':>10}{'pts/s':>8}{'optim s':>9}"
        f"{'p50 ms':>8}{'p99 ms':>8}{'R@10':>7}{'filt p50':>9}{'filt R@10':>10}  note"
    )
    print("\n" + head + "\n" + "-" * len(head))
    for r in results:
        opt = "-" if r.optimize_s is None else f"{r.optimize_s:.1f}"
        print(
            f"{r.store:<18}{r.data:<10}{r.points:>8,}{r.upsert_s:>10.1f}{r.upsert_per_s:>8,.0f}{opt:>9}"
            f"{r.p50_ms:>8.2f}{r.p99_ms:>8.2f}{r.recall:>7.3f}{r.filtered_p50_ms:>9.2f}{r.filtered_recall:>10.3f}"
            f"  {r.note}"
        )


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "?"


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    main()
