"""`make bench`: every stack benchmark in turn, then one markdown report of their numbers.

Each benchmark runs in its own process (one stack at a time on this 2-core machine) and writes
`<results>/<name>.json`; this module then renders `<results>/REPORT.md` from those files. A benchmark
that fails is reported as failed and the others still run.

    python -m benchmarks.suite [--quick] [--only local_path,web_path,...] [--report-only]

`--quick` runs small versions into var/bench-quick so the committed full-size results stay intact.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.harness import DEFAULT_RESULTS, REPO, RESULTS_ENV, machine_facts

# result name -> (module, full-size arguments, quick arguments)
BENCHMARKS: dict[str, tuple[str, list[str], list[str]]] = {
    "local_path": ("local_path", [], ["--limit-pages", "1500", "--rounds", "1"]),
    # The same path with question vectors computed in the orchestrator (one gRPC hop less).
    "local_path_in_process": (
        "local_path",
        ["--query-embedder", "in_process"],
        ["--limit-pages", "1500", "--rounds", "1", "--query-embedder", "in_process"],
    ),
    "web_path": ("web_path", [], ["--runs", "5"]),
    "ingest": ("ingest", [], ["--docs", "20"]),
    # Answers computed from statement facts (no model call): first token through AskStream.
    "fact_answers": ("fact_answers", [], ["--runs", "1"]),
    "concurrency": ("concurrency", [], ["--quick"]),
    "ttft": ("ttft", [], ["--quick", "--model", "smollm2"]),
    # llama.cpp's prompt reading with and without repacked weights (the GENERATOR_LLAMA_REPACK default).
    "prompt_reading": ("prompt_reading", [], ["--quick"]),
    # Whole answers through the stack with the default model, before/after each prompt step.
    "answer_ttft": ("answer_ttft", [], ["--quick"]),
    "fallback_replay": ("fallback_replay", [], ["--quick"]),
    # The same stream routed by the cosine gate alone, at the calibrated c and at 0.40.
    "fallback_replay_cosine_only": ("fallback_replay", ["--no-coverage-gate"], ["--quick", "--no-coverage-gate"]),
    "fallback_replay_c0.40_cosine_only": (
        "fallback_replay",
        ["--threshold", "0.40", "--no-coverage-gate"],
        ["--quick", "--threshold", "0.40", "--no-coverage-gate"],
    ),
}


def _table_head(*columns: str) -> list[str]:
    """The blank line, header row and separator row that open a section's table."""
    return ["", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def _row(*cells: object) -> str:
    """One table row (cells as they print)."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _ms(block: dict[str, Any] | None, key: str = "p50_ms") -> str:
    return f"{block[key]:.1f}" if block else "n/a"


def _local_path(r: dict[str, Any]) -> list[str]:
    lines = [
        f"FinanceBench corpus, {r['chunks']} chunks, embedder `{r['backend']}`, "
        f"{r.get('catalog_companies', 0)} companies in the KB catalog (filters from the question), query vectors from "
        f"{'the orchestrator itself' if r.get('query_embedder') == 'in_process' else 'the embedder service'}, "
        "generation excluded.",
        *_table_head("step", "p50 ms", "p99 ms"),
        *(
            f"| {label} | {_ms(r[key])} | {_ms(r[key], 'p99_ms')} |"
            for label, key in (
                ("bare embedding (in process)", "embed"),
                ("bare search (in process)", "search"),
                ("Embed RPC to the embedder service", "embed_service_rpc"),
                ("Search RPC to the retriever service", "search_service_rpc"),
                ("orchestrator Retrieve over gRPC", "orchestrator_retrieve"),
            )
        ),
        "",
        f"Ratio orchestrator / (bare embed + bare search) at p50: **{r['ratio_p50']:.2f}** (target 1.3); "
        f"orchestrator / (Embed RPC + Search RPC): **{r['ratio_to_service_rpcs_p50']:.2f}**.",
    ]
    if "empty_rpc_p50_ms" in r:
        hops = ", ".join(f"{k} {v:.2f} ms" for k, v in r["empty_rpc_p50_ms"].items())
        lines += [
            "",
            f"Empty RPC (health Check) per hop at p50: {hops}. Transport floor, (bare + the path's empty hops) "
            f"/ bare: **{r['transport_floor_ratio_p50']:.2f}**.",
        ]
    return lines


def _web_path(r: dict[str, Any]) -> list[str]:
    w = r["web_path"]
    return [
        f"Search, fetch N={r['pages']} pages (one hangs), extract, embed, score; deadline {r['deadline_s']} s.",
        "",
        f"p50 **{w['p50_ms']:.0f} ms**, p99 **{w['p99_ms']:.0f} ms** over {w['n']} runs; "
        f"within the deadline: {r['within_deadline_share']:.0%}.",
    ]


def _fact_answers(r: dict[str, Any]) -> list[str]:
    t = r["first_token_ms"]
    return [
        f"{r['questions']} figure and metric questions x {r['runs']} runs through AskStream, answered from "
        f"statement facts ({r['answered_from_facts']} of {r['questions']} questions): first token p50 "
        f"**{t['p50_ms']:.0f} ms**, p95 {t['p95_ms']:.0f} ms (target p50 <= {r['target_p50_ms']} ms).",
    ]


def _ingest(r: dict[str, Any]) -> list[str]:
    return [
        f"{r['documents']} FinanceBench pages as documents ({r['chunks']} chunks) through Kafka and the ingester.",
        *_table_head("measure", "value"),
        f"| ingest throughput | {r['chunks_per_s']:.1f} chunks/s ({r['documents_per_s']:.1f} documents/s) |",
        f"| bare embedding | {r['bare_embedding_chunks_per_s']:.1f} chunks/s |",
        f"| ratio ingest / bare embedding | **{r['ratio_to_bare_embedding']:.2f}** |",
        f"| Kafka publish to searchable, one document | {r['kafka_to_searchable_ms_one_document']:.0f} ms |",
    ]


def _concurrency(r: dict[str, Any]) -> list[str]:
    lines = [
        f"Closed-loop clients against the orchestrator; model {r['model']}; KB {r['kb']}; "
        f"Ask with max_tokens {r['max_tokens']}.",
        *_table_head("mode", "clients", "requests", "errors", "req/s", "p50 ms", "p99 ms", "first token p50 ms"),
    ]
    for lv in r["levels"]:
        first = lv.get("first_token")
        errors = lv["errors"] if not lv["errors_by_code"] else f"{lv['errors']} {lv['errors_by_code']}"
        latency = lv["latency"]
        lines.append(
            _row(lv["mode"], lv["clients"], lv["requests"], errors, f"{lv['throughput_rps']:.1f}", _ms(latency),
                 _ms(latency, "p99_ms"), _ms(first) if first else "-")
        )  # fmt: skip
    return lines


def _ttft(r: dict[str, Any]) -> list[str]:
    lines = [
        f"{r['model_note']}; {r['passages_per_prompt']} passages of about {r['passage_tokens_estimate']} "
        "tokens per prompt, through the generator's GenerateStream.",
        *_table_head("language", "prompt tokens", "TTFT p50 ms", "TTFT p99 ms", "prompt tok/s", "decode tok/s"),
    ]
    for lang, s in r["by_language"].items():
        ttft = s["ttft"]
        speeds = f"{s['prompt_tokens_per_s_p50']:.1f}", f"{s['decode_tokens_per_s_p50']:.1f}"
        lines.append(
            _row(lang, f"{s['prompt_tokens_mean']:.0f}", f"{ttft['p50_ms']:.0f}", f"{ttft['p99_ms']:.0f}", *speeds)
        )
    return lines


def _prompt_reading(r: dict[str, Any]) -> list[str]:
    lines = [
        f"{r['model_note']}; llama.cpp server alone, {r['prompts']} RAG prompts per start, {r['rounds']} starts per "
        "variant (alternating), prompt cache off; llama.cpp's own timings.",
        *_table_head("weights", "prompt tokens", "prompt tok/s p50", "decode tok/s p50"),
    ]
    lines += [
        _row(name, f"{s['prompt_tokens_mean']:.0f}", f"{s['prompt_tokens_per_s_p50']:.1f}",
             f"{s['decode_tokens_per_s_p50']:.1f}")
        for name, s in r["variants"].items()
    ]  # fmt: skip
    lines += [
        "",
        f"plain / repacked: prompt reading **{r['prompt_speed_ratio_plain_over_repacked']:.2f}x**, decode "
        f"{r['decode_speed_ratio_plain_over_repacked']:.2f}x.",
    ]
    return lines


def _answer_ttft(r: dict[str, Any]) -> list[str]:
    lines = [
        f"{r['model']}; questions through AskStream on the running stack (demo notes + FinanceBench KB). "
        "TTFT and total over the answers the model wrote (gate refusals counted apart).",
        *_table_head(
            "configuration",
            "questions",
            "TTFT p50 s",
            "TTFT p95 s",
            "total p50 s",
            "prompt tokens",
            "cached tokens",
            "right figure",
        ),
    ]
    for name, by_set in r["results"].items():
        for kind, s in by_set.items():
            lines.append(
                f"| {name}, {kind} | {s['questions']} | {s['ttft']['p50_ms'] / 1000:.1f} | "
                f"{s['ttft'].get('p95_ms', s['ttft']['p99_ms']) / 1000:.1f} | {s['total']['p50_ms'] / 1000:.1f} | "
                f"{s['prompt_tokens_mean']:.0f} | {s['cached_tokens_mean']:.0f} | {s['correct']} of {s['scored']} |"
            )
    # Runs since task routing record the routed task of each answer: one line per configuration and set.
    for name, by_set in r["results"].items():
        for kind, s in by_set.items():
            if by_task := s.get("ttft_by_task"):
                parts = [
                    f"{t.removeprefix('TASK_').lower()} {v['p50_ms'] / 1000:.1f} s ({v['n']})"
                    for t, v in by_task.items()
                ]
                lines.append(f"\nTTFT p50 by task, {name}, {kind}: " + ", ".join(parts))
    return lines


def _fallback_replay(r: dict[str, Any]) -> list[str]:
    lines = [
        f"{r['questions']} FinanceBench questions in a seeded random order; their {r['filings_on_web']} filings "
        f"start on the (local) web, the KB starts with the demo notes; embedder `{r['embedder']}`, "
        f"c = {r['threshold_c']}, coverage gate {'on' if r.get('coverage_gate') else 'off'}.",
        *_table_head(
            "window",
            "questions",
            "fallback rate",
            "local",
            "local, top passage from own filing",
            "documents queued",
            "KB points",
        ),
    ]
    rows = [*r["first_pass"], *([{**r["second_pass"], "window": "second pass"}] if r.get("second_pass") else [])]
    for w in rows:
        lines.append(
            f"| {w['window']} | {w['questions']} | {w['fallback_rate']:.2f} | {w['local']} | "
            f"{w['local_from_own_filing']} | {w['documents_queued']} | {w['kb_points']} |"
        )
    return lines


SECTIONS: dict[str, tuple[str, Callable[[dict[str, Any]], list[str]]]] = {
    "local_path": ("Local retrieval path", _local_path),
    "local_path_in_process": ("Local retrieval path, query embedding in the orchestrator", _local_path),
    "web_path": ("Web path under its deadline", _web_path),
    "ingest": ("Ingest throughput", _ingest),
    "fact_answers": ("Answers computed from statement facts", _fact_answers),
    "concurrency": ("Orchestrator under concurrent load", _concurrency),
    "ttft": ("Time to first token of the local model", _ttft),
    "prompt_reading": ("Prompt reading speed of llama.cpp, plain against repacked weights", _prompt_reading),
    "answer_ttft": ("Time to first token of whole answers, before/after each prompt step", _answer_ttft),
    "fallback_replay": ("Fallback replay: the KB grows through Kafka (calibrated c, coverage gate)", _fallback_replay),
    "fallback_replay_cosine_only": ("Fallback replay, cosine gate alone (calibrated c)", _fallback_replay),
    "fallback_replay_c0.40_cosine_only": ("Fallback replay, cosine gate alone, c = 0.40", _fallback_replay),
}


def report(results: Path, failed: dict[str, str]) -> str:
    lines = ["# WeaverBird benchmark report", ""]
    facts = machine_facts()
    lines += [
        f"Rendered {time.strftime('%Y-%m-%d %H:%M')} on {facts['cpu_count']} cores ({facts['cpu_model']}), "
        f"{facts.get('memory_gib', '?')} GiB, commit {facts['git_commit']}. "
        "Each section says when it was measured; tests never assert on these numbers.",
        "",
    ]
    for name, (title, render) in SECTIONS.items():
        lines += [f"## {title}", ""]
        path = results / f"{name}.json"
        if name in failed:
            lines += [f"**Failed in this run**: {failed[name]}", ""]
        if not path.exists():
            lines += [f"Not measured (`python -m benchmarks.suite --only {name}`).", ""]
            continue
        data = json.loads(path.read_text())
        try:
            lines += render(data)
        except (KeyError, TypeError) as exc:  # an older result file without a newer field
            lines += [f"Result file {path.name} lacks {exc}; rerun `python -m benchmarks.suite --only {name}`."]
        when = data.get("measured_at", "unknown time")
        load = data.get("machine", {}).get("loadavg_1_5_15")
        lines += ["", f"_Measured {when}" + (f", load average {load}_" if load else "_"), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small runs into var/bench-quick")
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="comma list of benchmarks to run")
    parser.add_argument("--report-only", action="store_true", help="render REPORT.md from existing results")
    args = parser.parse_args(argv)
    results = REPO / "var" / "bench-quick" if args.quick else Path(os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS)
    results.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, RESULTS_ENV: str(results)}
    failed: dict[str, str] = {}
    names = [] if args.report_only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:  # checked before anything runs
        print(f"error: unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    for index, name in enumerate(names, start=1):
        module, full, quick = BENCHMARKS[name]
        command = [sys.executable, "-m", f"benchmarks.{module}", *(quick if args.quick else full)]
        print(f"\n=== [{index}/{len(names)}] {' '.join(command[1:])}", flush=True)
        start = time.perf_counter()
        code = subprocess.run(command, cwd=REPO, env=env, check=False).returncode
        print(f"=== {name}: exit {code} after {time.perf_counter() - start:.0f} s", flush=True)
        if code != 0:
            failed[name] = f"exit code {code}"
    path = results / "REPORT.md"
    path.write_text(report(results, failed), encoding="utf-8")
    print(f"\nwrote {path}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
