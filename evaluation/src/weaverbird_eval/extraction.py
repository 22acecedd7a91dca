"""JSON extraction and chart data with the real model: validation, repair, and what the user is left with.

`python -m weaverbird_eval.extraction --llm-endpoint http://127.0.0.1:8091`

30 requests written for this measurement (15 English over TAT-QA dev tables, 15 Chinese over Fin-Eva
contexts, each set 8 JSON extractions and 7 charts) go through the orchestrator's own steps
(tasks/extraction.extract_json, tasks/chart.chart_spec) with the generator's task prompts, streamed
from an OpenAI-compatible server. Passages are what retrieval would hand over: a TAT-QA table with the
first two paragraphs of its report; a Fin-Eva context with one unrelated context beside it (in turn
before and after it), so a value copied from the wrong passage shows.

Each request carries a hand-read gold answer (the values as the context states them; null for a key the
context does not hold), so beyond the validator's verdict the report says whether a *valid* output is
also *right*: validation checks keys and that figures are in the passages, not that the right row was
copied. Runs with the deployment's few-shot setting (2 examples from the banks) and without examples.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from weaverbird_generator.llm_client import ChatClient
from weaverbird_generator.settings import LOCAL_CONTEXT_BUDGET
from weaverbird_orchestrator.domain import Example, Passage, Task
from weaverbird_orchestrator.numeric_check import answer_figures, mentions
from weaverbird_orchestrator.tasks.chart import ChartOutcome, chart_spec
from weaverbird_orchestrator.tasks.examples import default_bank
from weaverbird_orchestrator.tasks.extraction import (
    ExtractionOutcome,
    extract_json,
    figure_text,
    first_json_object,
    keys_from_question,
    unsupported_figures,
)

from weaverbird_eval.chat_generator import ChatGenerator
from weaverbird_eval.datasets import DEFAULT_DATA, DEFAULT_OUT
from weaverbird_eval.extraction_cases import CASES, Case, case_passages


def examples_for(task: Task, language: str, question: str, k: int) -> tuple[list[Example], str]:
    """The deployment's few-shot examples (the orchestrator's example bank), and how they were chosen."""
    if k == 0:
        return [], "none"
    return list(default_bank().select(task, language, question, k)), "example bank (bigram similarity)"


# ---------------------------------------------------------------------------------------------
# Scoring against the gold answers
# ---------------------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", str(text).casefold())


def _magnitudes(value: Any) -> list[tuple[float, float]]:
    """(as written, scale applied) of every number of a value, year-like ones too ("2100" USD/t)."""
    text = figure_text(value)
    if not text:
        return []
    found = [(abs(f.raw), abs(f.value)) for f in answer_figures(text)]
    years = [text[m.start : m.end] for m in mentions(text) if not m.figure]
    return found + [(float(y), float(y)) for y in years if re.fullmatch(r"\d{4}", y)]


def same_value(model: Any, gold: Any) -> bool:
    """Every figure of the gold value is among the model value's (as written, or with its scale applied)."""
    if gold is None:
        return model is None
    found, wanted = _magnitudes(model), _magnitudes(gold)
    return bool(wanted) and all(
        any(math.isclose(m[0], w[0], rel_tol=1e-6) or math.isclose(m[1], w[1], rel_tol=1e-6) for m in found)
        for w in wanted
    )


def _find(name: str, options: Sequence[str]) -> str | None:
    """The option naming the same thing (normalised): equal, else the shortest one containing it ("铜" finds
    "LME期铜", "进出口" finds "跨境电商进出口" before "出口"), else the longest one it contains."""
    wanted = _norm(name)
    exact = [o for o in options if _norm(o) == wanted]
    if exact:
        return exact[0]
    longer = [o for o in options if wanted in _norm(o)]
    shorter = [o for o in options if _norm(o) and _norm(o) in wanted]
    return min(longer, key=len, default=None) or max(shorter, key=len, default=None)


def score_json(value: Any, gold: dict[str, Any]) -> tuple[int, int]:
    """(gold values the output has right, gold values)."""
    if not isinstance(value, dict):
        return 0, len(gold)
    right = 0
    for name, wanted in gold.items():
        key = _find(name, [str(k) for k in value])
        if key is None:
            right += wanted is None  # an absent key is right only where the context has no value
        else:
            right += same_value(value[key], wanted)
    return right, len(gold)


def score_chart(outcome: ChartOutcome, gold: dict[str, Any]) -> tuple[int, int, bool]:
    """(gold values right, gold values, type as expected)."""
    total = sum(len(s) for s in gold["series"])
    spec = outcome.spec
    if spec is None:
        return 0, total, False
    right = 0
    for wanted in gold["series"]:
        best = 0
        for series in spec.series:
            hits = 0
            for category, value in wanted.items():
                found = _find(category, spec.categories)
                if found is not None:
                    got = series.values[spec.categories.index(found)]
                    hits += math.isclose(got, value, rel_tol=5e-3)
            best = max(best, hits)
        right += best
    return right, total, spec.type == gold["type"]


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------


@dataclass
class Record:
    case: str
    language: str
    kind: str
    examples: int
    outcome: str  # "first_try" | "repaired" | "invalid"
    errors: list[str]
    notes: list[str]
    result: Any  # the JSON value or the chart spec
    gold_right: int
    gold_total: int
    type_expected: bool | None
    first_output_figures: int  # figures in the model's first output
    first_output_unsupported: int  # of which no passage holds
    dropped_values: int  # chart values dropped as unsupported
    calls: int
    seconds: float
    outputs: list[str]
    examples_from: str = ""


def _first_output_figures(text: str, passages: Sequence[str]) -> tuple[int, int]:
    parsed = first_json_object(text).value
    leaves: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        else:
            leaves.append(node)

    walk(parsed)
    figures = sum(len(_magnitudes(leaf)) for leaf in leaves)
    return figures, sum(len(unsupported_figures(leaf, passages)) for leaf in leaves)


async def run_case(case: Case, passages: list[Passage], client: ChatClient, k: int) -> Record:
    # What the generator service does for a task call (prompt module, context focus, stream), without gRPC.
    generator = ChatGenerator(client, context_budget=LOCAL_CONTEXT_BUDGET, source="eval")
    texts = [p.text for p in passages]
    started = time.perf_counter()
    if case.kind == "json":
        examples, chosen = examples_for(Task.EXTRACTION, case.language, case.question, k)
        keys = keys_from_question(case.question)
        got: ExtractionOutcome = await extract_json(generator, case.question, passages, case.language, keys, examples)
        outcome = "first_try" if got.valid and not got.repaired else "repaired" if got.valid else "invalid"
        right, total = score_json(got.value, case.gold)
        result, errors, notes, type_expected, dropped = got.value, got.errors, got.notes, None, 0
    else:
        examples, chosen = examples_for(Task.ANALYSIS, case.language, case.question, k)
        chart = await chart_spec(generator, case.question, passages, case.language, examples)
        outcome = "invalid" if chart.spec is None else "repaired" if chart.repaired else "first_try"
        right, total, type_expected = score_chart(chart, case.gold)
        result = asdict(chart.spec) if chart.spec else None
        errors, notes = chart.errors, chart.notes
        dropped = sum("dropped" in e and "series" not in e.split(":")[0] for e in chart.errors)
    seconds = time.perf_counter() - started
    first = generator.calls[0].text if generator.calls else ""
    figures, unsupported = _first_output_figures(first, texts)
    return Record(
        case.id, case.language, case.kind, k, outcome, list(errors), list(notes), result, right, total,
        type_expected, figures, unsupported, dropped, len(generator.calls), round(seconds, 1),
        [c.text for c in generator.calls], chosen,
    )  # fmt: skip


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole}" + (f" ({part / whole:.0%})" if whole else "")


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    groups = sorted({(r.examples, r.kind, r.language) for r in records})
    for k, kind, language in groups:
        rs = [r for r in records if (r.examples, r.kind, r.language) == (k, kind, language)]
        valid = [r for r in rs if r.outcome != "invalid"]
        entry = {
            "examples": k,
            "kind": kind,
            "language": language,
            "requests": len(rs),
            "valid_first_try": sum(r.outcome == "first_try" for r in rs),
            "valid_after_repair": sum(r.outcome == "repaired" for r in rs),
            "invalid_reported": sum(r.outcome == "invalid" for r in rs),
            "valid_and_all_gold_right": sum(r.gold_right == r.gold_total for r in valid),
            "valid_but_a_gold_value_missed": sum(r.gold_right < r.gold_total for r in valid),
            "gold_values_right": sum(r.gold_right for r in rs),
            "gold_values": sum(r.gold_total for r in rs),
            "first_output_figures": sum(r.first_output_figures for r in rs),
            "first_output_figures_unsupported": sum(r.first_output_unsupported for r in rs),
            "calls": sum(r.calls for r in rs),
            "seconds_p50": round(statistics.median(r.seconds for r in rs), 1),
        }
        if kind == "chart":
            entry["type_as_expected"] = sum(bool(r.type_expected) for r in rs)
            entry["values_dropped"] = sum(r.dropped_values for r in rs)
        out[f"k{k}-{kind}-{language}"] = entry
    return out


def markdown(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        "# JSON extraction and chart data (issue 15, item 3)",
        "",
        f"Model {meta['model']} at {meta['endpoint']}, temperature 0, {meta['requests']} requests "
        f"(15 EN over TAT-QA dev tables, 15 ZH over Fin-Eva contexts; each 8 JSON + 7 charts), with "
        f"few-shot examples per prompt: {' and '.join(str(k) for k in meta['runs'])} "
        f"(chosen by: {', '.join(meta['examples_from']) or '-'}); {meta['done']} runs done. "
        "Shared CPU server (other jobs running): seconds are contended.",
        "",
        "Valid = the validator accepted it (keys, figures in the passages; charts: a spec survived). "
        "Gold = hand-read values of the context: a valid output can still hold a wrong (but real) figure.",
        "",
        "| examples | kind | lang | requests | valid 1st try | valid after repair | invalid (reported) | "
        "valid & all gold right | valid, a gold value wrong or left out | gold values right | figures in 1st outputs "
        "not in passages | chart type as expected | chart values dropped | calls | s/request p50 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary.values():
        lines.append(
            f"| {s['examples']} | {s['kind']} | {s['language']} | {s['requests']} | {s['valid_first_try']} | "
            f"{s['valid_after_repair']} | {s['invalid_reported']} | {s['valid_and_all_gold_right']} | "
            f"{s['valid_but_a_gold_value_missed']} | {_share(s['gold_values_right'], s['gold_values'])} | "
            f"{_share(s['first_output_figures_unsupported'], s['first_output_figures'])} | "
            f"{s.get('type_as_expected', '-')} | {s.get('values_dropped', '-')} | {s['calls']} | "
            f"{s['seconds_p50']} |"
        )
    return "\n".join(lines) + "\n"


async def run(args: argparse.Namespace) -> int:
    cases = [c for c in CASES if not args.cases or c.id in args.cases.split(",")]
    passages = case_passages(cases, args.data)
    client = ChatClient(args.llm_endpoint, timeout_s=args.timeout)
    slots = asyncio.Semaphore(args.concurrency)
    ks = sorted({int(k) for k in args.examples.split(",")}, reverse=True)

    records: list[Record] = []

    async def one(case: Case, k: int) -> None:
        async with slots:
            record = await run_case(case, passages[case.id], client, k)
            print(f"{case.id} k={k}: {record.outcome} gold {record.gold_right}/{record.gold_total} "
                  f"({record.seconds}s, {record.calls} calls)", flush=True)  # fmt: skip
            records.append(record)
            # Written after every request: an interrupted run still leaves its partial report.
            write_report(records, args, len(cases), ks)

    await asyncio.gather(*(one(c, k) for k in ks for c in cases))
    print(write_report(records, args, len(cases), ks))
    return 0


def write_report(records: Sequence[Record], args: argparse.Namespace, requests: int, ks: Sequence[int]) -> str:
    """extraction.md and extraction.json for the records so far; returns the markdown."""
    summary = summarize(records)
    meta = {
        "model": args.model,
        "endpoint": args.llm_endpoint,
        "requests": requests,
        "done": len(records),
        "examples": max(ks),
        "runs": list(ks),
        "examples_from": sorted({r.examples_from for r in records if r.examples}),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    table = markdown(summary, meta)
    (args.out / "extraction.md").write_text(table, encoding="utf-8")
    payload = {"meta": meta, "summary": summary, "records": [asdict(r) for r in records]}
    (args.out / "extraction.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m weaverbird_eval.extraction", description=__doc__)
    parser.add_argument("--llm-endpoint", default="http://127.0.0.1:8091", help="OpenAI-compatible server")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct (q4_k_m)", help="label for the report")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared evaluation data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--examples", default="2,0", help="few-shot examples per prompt, comma list of runs")
    parser.add_argument("--cases", default="", help="comma list of case ids (default: all)")
    parser.add_argument("--concurrency", type=int, default=2, help="requests in flight at once")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per model call")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
