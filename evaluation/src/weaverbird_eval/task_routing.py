"""`python -m weaverbird_eval.task_routing`: the task router's rules against the model's choice, on 80
questions the project wrote (EN + ZH, 20 per task; data/task_routing.jsonl, invented companies).

The rules (weaverbird_orchestrator/tasks/router.py) were written before this set and not changed after
seeing it; the model is the default local one through the generator's "classify" prompt."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

from weaverbird_generator.llm_client import ChatClient
from weaverbird_generator.tasks import TaskRequest, task_module
from weaverbird_orchestrator.tasks.router import classify, parse_task_word

TASKS = ("lookup", "calculation", "extraction", "analysis")


def load() -> list[dict[str, str]]:
    text = (resources.files("weaverbird_eval") / "data" / "task_routing.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


async def _llm(client: ChatClient, question: str, language: str) -> tuple[str, float]:
    started = time.perf_counter()
    parts = []
    messages = task_module("classify").build_messages(TaskRequest(question, (), language))  # type: ignore[arg-type]
    async for delta in client.stream(messages, max_tokens=4, temperature=0.0):
        if delta.text:
            parts.append(delta.text)
    task = parse_task_word("".join(parts))
    return (task.value if task else "unparsed"), (time.perf_counter() - started) * 1000


def _accuracy(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    out: dict[str, Any] = {"all": sum(r[key] == r["task"] for r in rows) / len(rows)}
    for language in ("en", "zh"):
        sub = [r for r in rows if r["language"] == language]
        out[language] = sum(r[key] == r["task"] for r in sub) / len(sub)
    for task in TASKS:
        sub = [r for r in rows if r["task"] == task]
        out[task] = sum(r[key] == r["task"] for r in sub) / len(sub)
    out["confusion"] = dict(Counter(f"{r['task']}->{r[key]}" for r in rows if r[key] != r["task"]))
    return out


async def evaluate(endpoint: str | None) -> dict[str, Any]:
    rows = []
    client = ChatClient(endpoint) if endpoint else None
    for item in load():
        started = time.perf_counter()
        rules = classify(item["question"]).task.value
        row = {**item, "rules": rules, "rules_ms": (time.perf_counter() - started) * 1000}
        if client:
            row["llm"], row["llm_ms"] = await _llm(client, item["question"], item["language"])
        rows.append(row)
    summary = {"questions": len(rows), "rules": _accuracy(rows, "rules")}
    summary["rules_ms_p50"] = sorted(r["rules_ms"] for r in rows)[len(rows) // 2]
    if client:
        summary["llm"] = _accuracy(rows, "llm")
        summary["llm_ms_p50"] = sorted(r["llm_ms"] for r in rows)[len(rows) // 2]
    return {"summary": summary, "rows": rows}


def report(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = [
        "# Task routing: rules vs the model (80 questions the project wrote, 20 per task, EN + ZH)",
        "",
        "| classifier | all | en | zh | lookup | calculation | extraction | analysis | ms p50 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("rules", "llm"):
        if name in s:
            a = s[name]
            cells = " | ".join(f"{a[k]:.0%}" for k in ("all", "en", "zh", *TASKS))
            lines.append(f"| {name} | {cells} | {s[f'{name}_ms_p50']:.2f} |")
    for name in ("rules", "llm"):
        if name in s:
            lines += [
                "",
                f"{name} errors: " + (", ".join(f"{k} ×{v}" for k, v in s[name]["confusion"].items()) or "none"),
            ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m weaverbird_eval.task_routing", description=__doc__.splitlines()[0])
    ap.add_argument("--llm-endpoint", default=None, help="OpenAI-compatible server; without it, rules only")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/eval"))
    args = ap.parse_args(argv)
    result = asyncio.run(evaluate(args.llm_endpoint))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "task-routing.json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    (args.out / "task-routing.md").write_text(report(result), encoding="utf-8")
    print(report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
