"""Local retrieval path benchmark: bare embed, bare search, and the orchestrator's Retrieve over gRPC.

Loads the FinanceBench page corpus (about 10k pages) into a fresh knowledge base, then times, for the
FinanceBench questions: the embedding backend in-process, Qdrant search in-process, and the whole local
path through the orchestrator (question -> embedder -> retriever -> route decision), generation excluded.
Prints p50/p99 and the ratio orchestrator / (embed + search). Targets: p50 <= 25 ms, ratio <= 1.3.

    python -m benchmarks.local_path [--data ../shared/data] [--limit-pages N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import grpc
import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc
from weaverbird.v1 import (
    embedder_pb2,
    embedder_pb2_grpc,
    orchestrator_pb2,
    orchestrator_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from weaverbird_cli.stack import LocalStack, StackConfig
from weaverbird_common.encoders import build_backend
from weaverbird_eval.financebench_kb import build_corpus, embed_corpus, page_documents, upsert_service
from weaverbird_retriever.stores import ChunkRecord, open_store, point_id
from weaverbird_retriever.stores.base import SearchOptions

from benchmarks.financebench import DEFAULT_DATA, questions
from benchmarks.harness import write_result
from benchmarks.stats import percentiles, timed


def _reranker_env(args: argparse.Namespace) -> dict[str, str]:
    if args.reranker_model is None:
        return {}
    return {
        "ORCHESTRATOR_RERANKER": "onnx_cross_encoder",
        "ORCHESTRATOR_RERANKER_MODEL_PATH": str(args.reranker_model.resolve()),
        "ORCHESTRATOR_RERANK_CANDIDATES": str(args.rerank_candidates),
        "ORCHESTRATOR_RERANKER_MAX_LENGTH": str(args.reranker_max_length),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit-pages", type=int, default=None, help="use only the first N pages")
    parser.add_argument("--backend", default="use")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the question set")
    parser.add_argument(
        "--query-embedder",
        choices=["service", "in_process"],
        default="service",
        help="ORCHESTRATOR_QUERY_EMBEDDER: question vectors from the embedder service or in-process",
    )
    parser.add_argument(
        "--reranker-model",
        type=Path,
        default=None,
        help="a trained cross-encoder directory with onnx/ (weaverbird train export): Retrieve measured with "
        "ORCHESTRATOR_RERANKER=onnx_cross_encoder (int8) re-scoring the first --rerank-candidates passages",
    )
    parser.add_argument("--rerank-candidates", type=int, default=20)
    parser.add_argument("--reranker-max-length", type=int, default=256)
    args = parser.parse_args(argv)
    if not (args.data / "financebench" / "pages.jsonl").exists():
        print(f"skipped: FinanceBench data not found under {args.data}", file=sys.stderr)
        return 0

    payloads, texts = build_corpus(list(page_documents(args.data, args.limit_pages)))
    vectors = embed_corpus(args.backend, texts)
    companies = sorted({p["company"] for p in payloads if p.get("company")})
    qs = [q.question for q in questions(args.data)]
    print(f"corpus: {len(payloads)} chunks from FinanceBench pages; {len(qs)} questions x {args.rounds} rounds")

    backend = build_backend(args.backend)
    for q in qs[:5]:
        backend.embed([q], "query")  # warm-up
    qvecs, embed_ms = [], []
    for _ in range(args.rounds):
        for q in qs:
            vec, ms = timed(lambda q=q: backend.embed([q], "query"))
            qvecs.append(vec[0])
            embed_ms.append(ms)

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store("edge", path=tmp, url=None, api_key=None, collection="bench")
        store.ensure_collection(vectors.shape[1])
        records = [
            ChunkRecord(point_id(p["document_id"], p["chunk_index"]), v, p["text"], {**p})
            for p, v in zip(payloads, vectors, strict=True)
        ]
        for start in range(0, len(records), 1024):
            store.upsert(records[start : start + 1024])
        # The served mode: dense and lexical legs fused in the store (the retriever's default with text).
        hybrid = [SearchOptions(mode="hybrid", text=q) for q in qs * args.rounds]
        for v, o in zip(qvecs[:5], hybrid[:5], strict=True):
            store.search(v, args.k, None, o)
        search_ms = [
            timed(lambda v=v, o=o: store.search(v, args.k, None, o))[1] for v, o in zip(qvecs, hybrid, strict=True)
        ]
        dense_ms = [timed(lambda v=v: store.search(v, args.k))[1] for v in qvecs]
        lexical = [SearchOptions(mode="lexical", text=o.text) for o in hybrid]
        lexical_ms = [
            timed(lambda v=v, o=o: store.search(v, args.k, None, o))[1] for v, o in zip(qvecs, lexical, strict=True)
        ]
        store.close()

    with tempfile.TemporaryDirectory() as tmp:
        config = StackConfig(
            base_port=52051,
            data_dir=Path(tmp),
            generator_env={"GENERATOR_MODEL": "smollm2", "GENERATOR_MODEL_DIR": f"{tmp}/models"},
            embedder_env={"EMBEDDER_BACKEND": args.backend},
            # No company list: filters come from the KB's catalog, so the measured path includes reading
            # it, the filters, their relaxation and the coverage gate's look-ups.
            orchestrator_env={
                "ORCHESTRATOR_QUERY_EMBEDDER": args.query_embedder,
                "ORCHESTRATOR_QUERY_EMBEDDER_BACKEND": args.backend,
                **_reranker_env(args),
            },
        )
        with LocalStack(config) as stack:
            upsert_service(stack.config.addr("retriever"), payloads, vectors)
            # The same two calls made directly to the embedder and retriever services: what the
            # orchestrator adds on top of its dependencies' own service latency.
            service_embed_ms, service_search_ms = [], []
            with (
                grpc.insecure_channel(stack.config.addr("embedder")) as e_ch,
                grpc.insecure_channel(stack.config.addr("retriever")) as r_ch,
            ):
                e_stub = embedder_pb2_grpc.EmbedderServiceStub(e_ch)
                r_stub = retriever_pb2_grpc.RetrieverServiceStub(r_ch)
                for q in qs * args.rounds:
                    request = embedder_pb2.EmbedRequest(texts=[q], kind=embedder_pb2.EMBED_KIND_QUERY)
                    reply, ms = timed(lambda r=request: e_stub.Embed(r, timeout=30))
                    service_embed_ms.append(ms)
                    search = retriever_pb2.SearchRequest(vector=reply.vectors[0].values, k=args.k, text=q)
                    service_search_ms.append(timed(lambda r=search: r_stub.Search(r, timeout=30))[1])
            # One empty RPC (health Check) per service: the cost of a hop alone, through each real
            # server and its interceptors. Three hops bound how close Retrieve can get to the bare calls.
            hop_ms: dict[str, list[float]] = {}
            for service in ("orchestrator", "embedder", "retriever"):
                with grpc.insecure_channel(stack.config.addr(service)) as h_ch:
                    health = health_pb2_grpc.HealthStub(h_ch)
                    check = health_pb2.HealthCheckRequest()
                    for _ in range(50):
                        health.Check(check, timeout=10)
                    hop_ms[service] = [timed(lambda h=health, c=check: h.Check(c, timeout=10))[1] for _ in range(1000)]
            with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
                stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
                for q in qs[:5]:
                    stub.Retrieve(orchestrator_pb2.AskRequest(question=q, top_k=args.k), timeout=30)
                orch_ms: list[float] = []
                stages: dict[str, list[float]] = {"embed_ms": [], "local_search_ms": [], "total_ms": []}
                for _ in range(args.rounds):
                    for q in qs:
                        request = orchestrator_pb2.AskRequest(question=q, top_k=args.k)
                        reply, ms = timed(lambda r=request: stub.Retrieve(r, timeout=30))
                        orch_ms.append(ms)
                        for name, values in stages.items():
                            values.append(getattr(reply.route.timings, name))

    report = {
        "chunks": len(payloads),
        "backend": args.backend,
        "catalog_companies": len(companies),
        "query_embedder": args.query_embedder,
        "reranker": _reranker_env(args),
        "embed": percentiles(embed_ms),
        "search": percentiles(search_ms),
        "search_dense_only": percentiles(dense_ms),
        "search_lexical_only": percentiles(lexical_ms),
        "orchestrator_retrieve": percentiles(orch_ms),
        "embed_service_rpc": percentiles(service_embed_ms),
        "search_service_rpc": percentiles(service_search_ms),
    }
    # Where the orchestrator's time goes, as it measures itself (embed and search include their gRPC hop).
    report["orchestrator_stages_p50_ms"] = {k: float(np.percentile(v, 50)) for k, v in stages.items()}
    bare = report["embed"]["p50_ms"] + report["search"]["p50_ms"]
    report["ratio_p50"] = report["orchestrator_retrieve"]["p50_ms"] / bare
    report["empty_rpc_p50_ms"] = {k: float(np.percentile(v, 50)) for k, v in hop_ms.items()}
    # The best ratio the path's gRPC hops allow even if the orchestrator did no work at all (the
    # embedder hop only counts when question vectors come from the embedder service).
    used = [k for k in report["empty_rpc_p50_ms"] if k != "embedder" or args.query_embedder == "service"]
    report["transport_floor_ratio_p50"] = (bare + sum(report["empty_rpc_p50_ms"][k] for k in used)) / bare
    services = report["embed_service_rpc"]["p50_ms"] + report["search_service_rpc"]["p50_ms"]
    report["ratio_to_service_rpcs_p50"] = report["orchestrator_retrieve"]["p50_ms"] / services
    print(f"\n{'path':<28}{'p50 ms':>10}{'p99 ms':>10}")
    names = ("embed", "search", "search_dense_only", "search_lexical_only", "embed_service_rpc", "search_service_rpc")
    for name in (*names, "orchestrator_retrieve"):
        r = report[name]
        print(f"{name:<28}{r['p50_ms']:>10.2f}{r['p99_ms']:>10.2f}")
    own = {k: round(v, 2) for k, v in report["orchestrator_stages_p50_ms"].items()}
    print(f"orchestrator's own stage timings at p50 (ms): {own}")
    hops = {k: round(v, 2) for k, v in report["empty_rpc_p50_ms"].items()}
    print(f"empty RPC (health Check) per hop at p50 (ms): {hops}")
    print(f"ratio orchestrator / (embed + search) at p50: {report['ratio_p50']:.2f}  (target <= 1.3)")
    floor = report["transport_floor_ratio_p50"]
    print(f"transport floor: (embed + search + {len(used)} empty hops) / (embed + search) = {floor:.2f}")
    print(
        f"ratio orchestrator / (Embed RPC + Search RPC, called directly) at p50: "
        f"{report['ratio_to_service_rpcs_p50']:.2f}"
    )
    print(f"orchestrator p50 {report['orchestrator_retrieve']['p50_ms']:.1f} ms (target <= 25 ms)")
    name = "local_path" if args.query_embedder == "service" else "local_path_in_process"
    write_result(f"{name}_reranked" if args.reranker_model else name, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
