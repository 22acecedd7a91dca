"""`python -m weaverbird_eval.arithmetic`: arithmetic in code against arithmetic by the model, on TAT-QA.

Same questions, same model, same passages: each TAT-QA dev question of answer type "arithmetic" (a
seeded sample) gets its own table (passage 1, as markdown rows) and paragraphs (passages 2..) as the
served path would give them after retrieval. Two paths:
- plain: the generator's cited-answer prompt (task "answer"); the answer counts as right when one of
  its numbers equals the gold value;
- figures + code: the generator's "figures" prompt with the served few-shot examples, then the
  orchestrator's own compute() (figures checked against their passages, formula evaluated in Python).
Right = within 1 % of the gold `answer`, up to a power of 1000 or a factor of 100 (TAT-QA's `scale`),
and without its sign: both paths may carry a decrease in words ("fell by 12.6").
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from weaverbird_generator.llm_client import ChatClient
from weaverbird_generator.prompt import Passage
from weaverbird_generator.tasks import TaskRequest, task_module
from weaverbird_orchestrator.domain import Task
from weaverbird_orchestrator.tasks.calculation import compute
from weaverbird_orchestrator.tasks.examples import default_bank

from weaverbird_eval.answers import numbers, same_number

DATA = Path("../shared/data/tatqa/tatqa_dataset_dev.json")


def _table(rows: list[list[str]]) -> str:
    return "\n".join("| " + " | ".join(" ".join(c.split()) for c in row) + " |" for row in rows)


def sample(path: Path, limit: int, seed: str) -> list[dict[str, Any]]:
    """Arithmetic questions in a fixed order by a salted hash of their uid, the first `limit`."""
    items = []
    for context in json.loads(path.read_text(encoding="utf-8")):
        passages = [Passage(1, "Table", _table(context["table"]["table"]), "table")]
        for p in sorted(context["paragraphs"], key=lambda p: p["order"]):
            passages.append(Passage(len(passages) + 1, "Paragraph", p["text"], f"paragraph {p['order']}"))
        for q in context["questions"]:
            if q["answer_type"] == "arithmetic" and isinstance(q["answer"], int | float):
                key = hashlib.sha256(f"{seed}:{q['uid']}".encode()).hexdigest()
                items.append({"key": key, "question": q, "passages": passages})
    items.sort(key=lambda x: x["key"])
    return items[:limit]


def right(value: float | None, gold: float) -> bool:
    return value is not None and same_number(abs(value), abs(gold))


async def _run(client: ChatClient, task: str, request: TaskRequest, max_tokens: int) -> tuple[str, float]:
    started = time.perf_counter()
    parts = []
    async for delta in client.stream(task_module(task).build_messages(request), max_tokens=max_tokens, temperature=0.0):
        if delta.text:
            parts.append(delta.text)
    return "".join(parts), time.perf_counter() - started


async def evaluate(endpoint: str, limit: int, seed: str) -> dict[str, Any]:
    client = ChatClient(endpoint)
    bank = default_bank()
    rows = []
    for item in sample(DATA, limit, seed):
        q, passages = item["question"], item["passages"]
        plain, plain_s = await _run(client, "answer", TaskRequest(q["question"], passages, "en"), 120)
        examples = bank.select(Task.CALCULATION, "en", q["question"], 2)
        figures, figures_s = await _run(client, "figures", TaskRequest(q["question"], passages, "en", examples), 160)
        outcome = compute(figures, [p.text for p in passages], "en")
        gold = float(q["answer"])
        rows.append(
            {
                "uid": q["uid"],
                "question": q["question"],
                "gold": gold,
                "scale": q["scale"],
                "derivation": q["derivation"],
                "plain_answer": plain,
                "plain_right": any(right(x, gold) for x in numbers(plain)),
                "plain_s": round(plain_s, 1),
                "figures_output": figures,
                "code_result": outcome.result,
                "code_error": outcome.error,
                "code_right": right(outcome.result, gold),
                "code_s": round(figures_s, 1),
            }
        )
        print(
            f"{len(rows):3d} plain={rows[-1]['plain_right']!s:5} code={rows[-1]['code_right']!s:5} {q['question'][:70]}"
        )
    n = len(rows)
    computed = [r for r in rows if not r["code_error"]]
    summary = {
        "questions": n,
        "plain_accuracy": sum(r["plain_right"] for r in rows) / n,
        "code_accuracy": sum(r["code_right"] for r in rows) / n,
        "code_computed": len(computed) / n,
        "code_accuracy_when_computed": sum(r["code_right"] for r in computed) / len(computed) if computed else 0.0,
        "code_then_plain_accuracy": sum(bool(r["code_right"] or (r["code_error"] and r["plain_right"])) for r in rows)
        / n,
        "plain_s_p50": sorted(r["plain_s"] for r in rows)[n // 2],
        "code_s_p50": sorted(r["code_s"] for r in rows)[n // 2],
    }
    return {"summary": summary, "rows": rows}


def report(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = [
        "# Arithmetic in code vs by the model (TAT-QA dev, arithmetic questions)",
        "",
        f"{s['questions']} questions (seeded sample), each with its own table and paragraphs; Qwen2.5-Coder-1.5B "
        "Q4_K_M on llama.cpp, greedy; seconds measured on a CPU shared with other jobs.",
        "",
        "| path | accuracy | computed | right when computed | s p50 |",
        "|---|---|---|---|---|",
        f"| plain answer (model does the arithmetic) | {s['plain_accuracy']:.1%} | - | - | {s['plain_s_p50']} |",
        f"| figures + code | {s['code_accuracy']:.1%} | {s['code_computed']:.1%} | "
        f"{s['code_accuracy_when_computed']:.1%} | {s['code_s_p50']} |",
        f"| served (figures + code; plain answer when no calculation verifies) | {s['code_then_plain_accuracy']:.1%} "
        "| - | - | - |",
        "",
        "| # | question | gold | plain | code | code error |",
        "|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(result["rows"], 1):
        lines.append(
            f"| {i} | {r['question'][:80]} | {r['gold']} ({r['scale'] or '-'}) | {'✓' if r['plain_right'] else '✗'} "
            f"| {'✓' if r['code_right'] else '✗'} {r['code_result'] if r['code_result'] is not None else ''} "
            f"| {r['code_error'][:60]} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m weaverbird_eval.arithmetic", description=__doc__.splitlines()[0])
    ap.add_argument("--llm-endpoint", required=True, help="OpenAI-compatible server, e.g. http://127.0.0.1:8091")
    ap.add_argument("--limit", type=int, default=24)
    ap.add_argument("--seed", default="arithmetic-v1")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/eval"))
    args = ap.parse_args(argv)
    result = asyncio.run(evaluate(args.llm_endpoint, args.limit, args.seed))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "arithmetic.json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    (args.out / "arithmetic.md").write_text(report(result), encoding="utf-8")
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
