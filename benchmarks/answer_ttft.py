"""Time to first token of whole answers, through the running system, before and after each prompt step.

The full stack runs on 127.0.0.1 with the default model (Qwen2.5-Coder-1.5B on llama.cpp) over one KB
holding the demo notes and the FinanceBench filings. The 12 demo questions (README's two among them)
and 20 FinanceBench questions (the same ones `weaverbird eval answers` asks) go through AskStream, as a
user's `weaverbird ask` would, once per configuration:

- ``full``: the passages as retrieved, llama.cpp's prompt cache off (how it was before);
- ``cache``: the same, with the prompt cache on and warmed with the fixed rules at start-up;
- ``focused``: the cache, plus query-focused context under the token budget (today's default);
- ``focused-nosources``: ``focused`` without each passage's source in the prompt;
- ``focused-repacked``: ``focused`` with llama.cpp's repacked weights (the default until 2026-11-27).

For each: TTFT and total time (p50/p95), prompt tokens and cached tokens as llama.cpp counts them, and
whether the answer holds the expected figure (demo questions: QUESTIONS.md; FinanceBench: the gold
answer, scored as in `weaverbird eval answers`). One stack per configuration, one question at a time.

    python -m benchmarks.answer_ttft [--configs full,cache,focused] [--financebench 20] [--quick]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from weaverbird.v1 import common_pb2, orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_cli.commands import ingest
from weaverbird_cli.stack import LocalStack, StackConfig, free_base_port
from weaverbird_orchestrator.numeric_check import answer_figures, check_answer

from benchmarks.harness import DEMO_KB, REPO, demo_questions, results_dir, write_result
from benchmarks.stats import percentiles

CONFIGS: dict[str, dict[str, str]] = {
    "full": {"GENERATOR_CONTEXT_BUDGET_TOKENS": "0", "GENERATOR_PROMPT_CACHE": "false"},
    "cache": {"GENERATOR_CONTEXT_BUDGET_TOKENS": "0", "GENERATOR_PROMPT_CACHE": "true"},
    "focused": {"GENERATOR_PROMPT_CACHE": "true"},  # the default budget
    # Passage sources left out of the prompt: faster, answered worse (docs/experiments.md, "With task routing").
    "focused-nosources": {"GENERATOR_PROMPT_CACHE": "true", "GENERATOR_PROMPT_SOURCES": "false"},
    # Weights repacked for the CPU at load: read prompts slower on this AVX2 box (benchmarks/prompt_reading.py).
    "focused-repacked": {"GENERATOR_PROMPT_CACHE": "true", "GENERATOR_LLAMA_REPACK": "true"},
}
MODEL_DIR = REPO / "var" / "models"


def right_figure(answer: str, expected: str) -> bool:
    """Whether the answer states one of the amounts of QUESTIONS.md's answer, growth rates and margins left
    out ("USD 1,284.6 million (about USD 1.28 billion), up 16.5%": 1,284.6 million or 1.28 billion). Read as
    the numeric check reads figures, so "612.4亿美元" is not "USD 612.4 million" although the digits are."""
    head = re.split(r"\bup\b|同比|\bmargin\b|annualised", expected)[0]
    return any(check_answer(figure.text, [head]).result == "supported" for figure in answer_figures(answer))


def ask(stub: Any, question: str) -> dict[str, Any]:
    start = time.perf_counter()
    first: float | None = None
    answer: list[str] = []
    prompt_estimate = 0
    done = None
    routed, compute = "", ""
    for event in stub.AskStream(orchestrator_pb2.AskRequest(question=question, temperature=0.01), timeout=900):
        kind = event.WhichOneof("event")
        if kind == "route":
            routed = common_pb2.Task.Name(event.route.task)
        elif kind == "stage" and event.stage.stage == "compute":
            compute = event.stage.detail
        elif kind == "prompt":
            prompt_estimate = event.prompt.prompt_tokens
        elif kind == "token":
            first = first or time.perf_counter()
            answer.append(event.token)
        elif kind == "done":
            done = event.done
    end = time.perf_counter()
    assert done is not None, "the stream ended without a done event"
    return {
        "question": question,
        "answer": "".join(answer),
        "ttft_ms": ((first or end) - start) * 1000,
        "total_ms": (end - start) * 1000,
        "prompt_tokens": done.prompt_tokens,
        "prompt_tokens_estimate": prompt_estimate,
        "cached_tokens": done.cached_tokens,
        "completion_tokens": done.completion_tokens,
        # The task the router chose, and whether a calculation was computed or fell back to a lookup.
        "task": routed,
        "calculated": done.HasField("calculation"),
        "compute": compute,  # the calculation's formula = result, or why none verified
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Times over the answers the model wrote; a refusal by the gate (no model call) is counted apart."""
    asked = [r for r in runs if r["prompt_tokens"] > 0] or runs
    scored = [r for r in runs if r.get("correct") is not None]
    return {
        "questions": len(runs),
        "refused_without_model": len(runs) - len([r for r in runs if r["prompt_tokens"] > 0]),
        "ttft": percentiles([r["ttft_ms"] for r in asked]),
        "total": percentiles([r["total_ms"] for r in asked]),
        "prompt_tokens_mean": sum(r["prompt_tokens"] for r in asked) / len(asked),
        "cached_tokens_mean": sum(r["cached_tokens"] for r in asked) / len(asked),
        "correct": sum(bool(r["correct"]) for r in scored),
        "scored": len(scored),
        "ttft_by_task": {
            task: percentiles([r["ttft_ms"] for r in asked if r.get("task") == task])
            for task in sorted({r.get("task", "") for r in asked})
        },
        "samples": runs,
    }


def run_config(
    name: str, env: dict[str, str], demo: list[Any], fb: list[Any], fb_kb: Any, model: str | None = None
) -> dict[str, Any]:
    from weaverbird_eval.answers import answer_correct
    from weaverbird_eval.financebench_kb import upsert_service

    with tempfile.TemporaryDirectory() as tmp:
        config = StackConfig(
            base_port=free_base_port(6),
            data_dir=Path(tmp),
            # The served slot count (2): with one slot, an English question after a Chinese one finds the
            # other language's rules in the cache and reads its own again (~220 tokens, ~5 s).
            generator_env={
                "GENERATOR_MODEL_DIR": str(MODEL_DIR),
                **({"GENERATOR_MODEL": model} if model else {}),
                **env,
            },
        )
        print(f"[{name}] starting the stack ({env}) ...", flush=True)
        with LocalStack(config, startup_timeout_s=900) as stack:
            ingest([str(DEMO_KB)], stack.config.addr("ingester"), quiet=True)
            if fb_kb is not None:
                upsert_service(stack.config.addr("retriever"), *fb_kb)
            with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
                stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
                out: dict[str, list[dict[str, Any]]] = {"demo": [], "financebench": []}
                for q in demo:
                    r = ask(stub, q.question)
                    r["correct"] = right_figure(r["answer"], q.expected)
                    out["demo"].append(r)
                    print(
                        f"[{name}] demo ttft {r['ttft_ms'] / 1000:.1f}s prompt {r['prompt_tokens']} "
                        f"(cached {r['cached_tokens']}) correct={r['correct']}",
                        flush=True,
                    )
                for q in fb:
                    r = ask(stub, q.text)
                    r["correct"] = answer_correct(r["answer"], q.extra["answer"])
                    out["financebench"].append(r)
                    print(
                        f"[{name}] financebench {r['task']} ttft {r['ttft_ms'] / 1000:.1f}s total "
                        f"{r['total_ms'] / 1000:.1f}s prompt {r['prompt_tokens']} "
                        f"(cached {r['cached_tokens']}) correct={r['correct']}",
                        flush=True,
                    )
    return {kind: summarize(runs) for kind, runs in out.items() if runs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="full,cache,focused")
    parser.add_argument("--financebench", type=int, default=20, help="FinanceBench questions (0 = none)")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--quick", action="store_true", help="the default configuration, demo questions only")
    parser.add_argument("--merge", action="store_true", help="keep the other configurations of an earlier result file")
    parser.add_argument(
        "--model", default=None, help="GENERATOR_MODEL to measure instead of the default (a name or a .gguf path)"
    )
    args = parser.parse_args(argv)
    configs = ["focused"] if args.quick else args.configs.split(",")
    n_fb = 0 if args.quick else args.financebench

    demo = demo_questions()
    fb: list[Any] = []
    fb_kb = None
    if n_fb:
        from weaverbird_eval import datasets
        from weaverbird_eval.answers import sample
        from weaverbird_eval.financebench_kb import build_corpus, embed_corpus, page_documents

        evalset = datasets.financebench(args.data)
        kept = {u.id for u in evalset.units}
        documents = list(page_documents(args.data, keep=lambda doc, page: f"{doc}#p{page}" in kept))
        payloads, texts = build_corpus(documents)
        fb_kb = (payloads, embed_corpus("use", texts))
        fb = sample(evalset.queries, n_fb)

    results = {name: run_config(name, CONFIGS[name], demo, fb, fb_kb, args.model) for name in configs}
    name = "answer_ttft" + (f"_{Path(args.model).stem}" if args.model else "")
    earlier = results_dir() / f"{name}.json"
    if args.merge and earlier.exists():
        kept = json.loads(earlier.read_text())["results"]
        results = {**{k: v for k, v in kept.items() if k not in results}, **results}
    report = {
        "model": f"{args.model or 'qwen2.5-coder-1.5b (Q4_K_M)'} on llama.cpp, 2 slots (served default)",
        "configs": {name: CONFIGS[name] for name in results},
        "results": results,
    }
    path = write_result(name, report)
    for config, by_kind in results.items():
        for kind, s in by_kind.items():
            print(
                f"{config:8s} {kind:12s} TTFT p50 {s['ttft']['p50_ms'] / 1000:5.1f}s "
                f"p95 {s['ttft']['p95_ms'] / 1000:5.1f}s "
                f"total p50 {s['total']['p50_ms'] / 1000:5.1f}s prompt {s['prompt_tokens_mean']:.0f} "
                f"cached {s['cached_tokens_mean']:.0f} correct {s['correct']}/{s['scored']}"
            )
            for task, t in s.get("ttft_by_task", {}).items():
                print(f"{'':8s} {'':12s}   {task}: TTFT p50 {t['p50_ms'] / 1000:5.1f}s over {t['n']}")
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
