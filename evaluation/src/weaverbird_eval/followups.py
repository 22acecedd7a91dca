"""Follow-up questions: retrieval of the follow-up's gold passage with and without rewriting.

`python -m weaverbird_eval.followups --llm-endpoint http://127.0.0.1:8091`

The pairs (data/followups.jsonl) are written by the project: a standalone first question (sometimes two
turns), then a follow-up that only makes sense with it, and the gold of the follow-up: FinanceBench pages
(the evidence of a FinanceBench question the follow-up rewords elliptically, or a page checked by hand)
and Fin-Eva contexts. Each follow-up is searched through the served retrieval (`served-use`: hybrid,
catalog filters, period step; systems.py) over the whole corpus, as:

- typed: the follow-up as the user typed it (what retrieval gets without rewriting);
- previous+typed: the last user question and the follow-up joined (a cheap classic baseline);
- rules: tasks/followup.rewrite_with_rules (the orchestrator's default);
- llm: tasks/followup.rewrite_with_llm (task "rewrite" on the model; its checks fall back to the rules);
- reference: the standalone question written by hand (an upper bound for any rewriter).

The rules and the prompt were tuned on the pairs of the "tune" half (datasets.is_held_out) only; both
halves are reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from weaverbird_common.questions import alias_map
from weaverbird_orchestrator.domain import Turn
from weaverbird_orchestrator.tasks.followup import (
    clean_model_rewrite,
    needs_rewrite,
    rewrite_with_llm,
    rewrite_with_rules,
)

from weaverbird_eval import datasets
from weaverbird_eval.chat_generator import ChatGenerator
from weaverbird_eval.corpus import chunk_units, corpus_catalog
from weaverbird_eval.datasets import DEFAULT_DATA, DEFAULT_OUT
from weaverbird_eval.metrics import collapse, score
from weaverbird_eval.retrieval import DEPTH_CHUNKS
from weaverbird_eval.systems import build_system

PAIRS = Path(__file__).parent / "data" / "followups.jsonl"
WAYS = ("typed", "previous+typed", "rules", "llm", "reference")
SYSTEM = "served-use"


@dataclass(frozen=True)
class Pair:
    id: str
    language: str
    dataset: str  # "financebench" | "fineva": which corpus holds the gold
    kind: str  # metric | period | company | chain: what the follow-up changes
    history: tuple[Turn, ...]
    followup: str
    reference: str
    gold: frozenset[str]
    source: str


def load_pairs(path: Path = PAIRS) -> list[Pair]:
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        pairs.append(
            Pair(
                row["id"],
                row["language"],
                row["dataset"],
                row["kind"],
                tuple(Turn(t["role"], t["text"]) for t in row["history"]),
                row["followup"],
                row["reference"],
                frozenset(row["gold"]),
                row.get("source", ""),
            )
        )
    return pairs


@dataclass
class Rewrites:
    texts: dict[str, str]  # way -> query
    needs_rewrite: bool
    rules_ms: float
    llm_ms: float
    llm_raw: str
    llm_fell_back: bool


async def rewrite_all(
    pairs: Sequence[Pair], generator: ChatGenerator | None, catalogs: dict[str, tuple[list[str], dict[str, str]]]
) -> dict[str, Rewrites]:
    out = {}
    for pair in pairs:
        known, aliases = catalogs[pair.dataset]
        started = time.perf_counter()
        rules = rewrite_with_rules(pair.followup, pair.history, known, aliases)
        rules_ms = (time.perf_counter() - started) * 1000
        previous = [t.text for t in pair.history if t.role == "user"][-1]
        texts = {
            "typed": pair.followup,
            "previous+typed": f"{previous} {pair.followup}",
            "rules": rules,
            "reference": pair.reference,
        }
        llm_ms, raw, fell_back = 0.0, "", False
        if generator is not None:
            started = time.perf_counter()
            texts["llm"] = await rewrite_with_llm(
                generator, pair.followup, pair.history, pair.language, known_companies=known, aliases=aliases
            )
            llm_ms = (time.perf_counter() - started) * 1000
            raw = generator.last_text
            fell_back = texts["llm"] != clean_model_rewrite(raw)
        need = needs_rewrite(pair.followup, pair.history, known, aliases)
        out[pair.id] = Rewrites(texts, need, rules_ms, llm_ms, raw, fell_back)
        print(f"[{pair.id}] {pair.followup!r}\n    rules: {rules!r}\n    llm:   {texts.get('llm', '-')!r}", flush=True)
    return out


@dataclass
class PairResult:
    id: str
    language: str
    kind: str
    half: str
    followup: str
    queries: dict[str, str]
    gold_rank: dict[str, int | None]  # way -> 1-based rank of the first gold unit in the top 10
    llm_ms: float
    llm_raw: str
    llm_fell_back: bool


@dataclass
class Report:
    corpus: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # group -> way -> metric
    latency_ms: dict[str, float] = field(default_factory=dict)
    pairs: list[PairResult] = field(default_factory=list)


def _metrics(rankings: dict[str, list[str]], relevant: dict[str, frozenset[str]]) -> dict[str, float]:
    full = score(rankings, relevant)
    return {"R@1": full["R@1"], "R@5": full["R@5"], "MRR": full["MRR"], "pairs": float(len(rankings))}


def evaluate(pairs: Sequence[Pair], data: Path, generator: ChatGenerator | None) -> Report:
    report = Report()
    corpora: dict[str, Any] = {}
    catalogs: dict[str, tuple[list[str], dict[str, str]]] = {}
    for name in sorted({p.dataset for p in pairs}):
        evalset = datasets.load(name, data)
        chunks = chunk_units(evalset)
        missing = [p.id for p in pairs if p.dataset == name and not p.gold <= {u.id for u in evalset.units}]
        if missing:
            raise ValueError(f"{name}: gold outside the corpus for {missing}")
        catalog = corpus_catalog(chunks.metadata)  # what the retriever's Catalog RPC reports for this KB
        catalogs[name] = (sorted(catalog), alias_map(catalog))
        corpora[name] = (evalset, chunks)
        report.corpus[name] = f"{len(evalset.units)} units, {len(chunks.texts)} chunks, {len(catalog)} companies"
    rewrites = asyncio.run(rewrite_all(pairs, generator, catalogs))
    ways = [w for w in WAYS if generator is not None or w != "llm"]
    ranked: dict[tuple[str, str], list[str]] = {}
    for name, (evalset, chunks) in corpora.items():
        system = build_system(SYSTEM)
        try:
            system.index(chunks.texts, evalset.language, f"{name}-{len(evalset.units)}", chunks.metadata)
            for pair in (p for p in pairs if p.dataset == name):
                for way in ways:
                    ranking = system.search([rewrites[pair.id].texts[way]], DEPTH_CHUNKS)[0]
                    ranked[(pair.id, way)] = collapse(ranking, chunks.unit_ids, 10)
        finally:
            system.close()
    groups = {
        "all": list(pairs),
        "en": [p for p in pairs if p.language == "en"],
        "zh": [p for p in pairs if p.language == "zh"],
        "tune half": [p for p in pairs if datasets.is_held_out(p.id)],
        "report half": [p for p in pairs if not datasets.is_held_out(p.id)],
    }
    for kind in sorted({p.kind for p in pairs}):
        groups[f"kind={kind}"] = [p for p in pairs if p.kind == kind]
    for group, members in groups.items():
        report.metrics[group] = {
            way: _metrics({p.id: ranked[(p.id, way)] for p in members}, {p.id: p.gold for p in members}) for way in ways
        }
    report.latency_ms = {
        "rules_p50": statistics.median(r.rules_ms for r in rewrites.values()),
        "rules_max": max(r.rules_ms for r in rewrites.values()),
    }
    if generator is not None:
        llm = [r.llm_ms for r in rewrites.values()]
        report.latency_ms |= {"llm_p50": statistics.median(llm), "llm_max": max(llm)}
    for pair in pairs:
        r = rewrites[pair.id]
        ranks: dict[str, int | None] = {}
        for way in ways:
            hits = [i for i, unit in enumerate(ranked[(pair.id, way)], 1) if unit in pair.gold]
            ranks[way] = hits[0] if hits else None
        half = "tune" if datasets.is_held_out(pair.id) else "report"
        report.pairs.append(
            PairResult(
                pair.id,
                pair.language,
                pair.kind,
                half,
                pair.followup,
                r.texts,
                ranks,
                r.llm_ms,
                r.llm_raw,
                r.llm_fell_back,
            )
        )
    return report


def markdown(report: Report, endpoint: str) -> str:
    ways = list(next(iter(report.metrics.values())).keys())
    lines = [
        "# Follow-up questions: retrieval with and without rewriting",
        "",
        f"Served retrieval (`{SYSTEM}`: hybrid dense + lexical, catalog filters, period step) over whole corpora: "
        + "; ".join(f"{k}: {v}" for k, v in report.corpus.items())
        + f". LLM: Qwen2.5-Coder-1.5B (Q4_K_M) at {endpoint}, greedy. Gold = the follow-up's page(s) / context; "
        "R@k is the share of a pair's gold units in the top k (ranx), so a two-page gold found once counts 0.5.",
        "",
        "| pairs | n | " + " | ".join(f"{w} R@1 / R@5 / MRR" for w in ways) + " |",
        "|---|---|" + "---|" * len(ways),
    ]
    for group, by_way in report.metrics.items():
        n = int(next(iter(by_way.values()))["pairs"])
        cells = [f"{m['R@1']:.3f} / {m['R@5']:.3f} / {m['MRR']:.3f}" for m in by_way.values()]
        lines.append(f"| {group} | {n} | " + " | ".join(cells) + " |")
    lat = report.latency_ms
    lines += [
        "",
        f"Rewrite latency: rules p50 {lat['rules_p50']:.2f} ms (max {lat['rules_max']:.2f} ms)"
        + (
            f"; LLM p50 {lat['llm_p50']:.0f} ms (max {lat['llm_max']:.0f} ms), CPU shared with other jobs"
            if "llm_p50" in lat
            else ""
        )
        + ".",
    ]
    if any(p.llm_raw for p in report.pairs):
        fell = sum(p.llm_fell_back for p in report.pairs)
        lines.append(f"LLM outputs rejected by the checks (rules used instead): {fell} of {len(report.pairs)}.")
    lines += [
        "",
        "Per pair: the first gold unit's rank in the top 10 (- = not there); (rules) = the model's rewrite was "
        "rejected by its checks and the rules' used.",
        "",
        "| pair | half | follow-up | rules | llm | rank typed / rules / llm / reference |",
        "|---|---|---|---|---|---|",
    ]
    for p in report.pairs:
        shown = [w for w in ("typed", "rules", "llm", "reference") if w in p.gold_rank]
        rank = " / ".join("-" if p.gold_rank[w] is None else str(p.gold_rank[w]) for w in shown)
        llm = p.queries.get("llm", "-") + (" (rules)" if p.llm_fell_back else "")
        lines.append(f"| {p.id} | {p.half} | {p.followup} | {p.queries['rules']} | {llm} | {rank} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m weaverbird_eval.followups", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--llm-endpoint", default="", help="OpenAI-compatible server for the llm rewrite")
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", module="ranx")
    warnings.filterwarnings("ignore", category=Warning, message=".*unsafe cast.*")
    pairs = load_pairs(args.pairs)
    generator = ChatGenerator(args.llm_endpoint) if args.llm_endpoint else None
    report = evaluate(pairs, args.data, generator)
    table = markdown(report, args.llm_endpoint or "(none)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "followups.md").write_text(table, encoding="utf-8")
    payload = {
        "corpus": report.corpus,
        "metrics": report.metrics,
        "latency_ms": report.latency_ms,
        "pairs": [asdict(p) for p in report.pairs],
    }
    (args.out / "followups.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\n{table}\nwritten: {args.out / 'followups'}.md, .json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
