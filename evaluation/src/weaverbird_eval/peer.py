"""PEER (plan, execute, express, review) against the single pass, on analytical questions.

`python -m weaverbird_eval.peer --llm-endpoint http://127.0.0.1:8091`

Questions (data/analytical.jsonl): FinanceBench questions that need several facts (read by id from the
shared data folder, never copied) and Chinese questions the project wrote over Fin-Eva contexts (some
need two contexts: two companies or two regions compared). Each is answered twice by the same model:

- single: the flow's retrieval of the question, then one cited answer over its top J passages;
- peer: tasks/peer.run_peer as the orchestrator's task runner calls it (sub-questions retrieved through
  the same flow, with the filters read from each sub-question), max rounds and budget as given.

The serving stack is the services' own code in this process: the embedder (USE), the retriever over a
fresh Qdrant Edge collection holding the whole KB of `weaverbird eval answers` (every FinanceBench
filing, 38,814 chunks, plus the 603 Fin-Eva contexts; vectors from the evaluation cache), the generator
servicer in front of the LLM endpoint with the local model's context budget, and the orchestrator's
QuestionFlow with its served defaults (K, J, c calibrated, catalog filters, coverage gate, no web).

Scored automatically, for both systems with the same code (tasks/review_criteria.py):
- cited claims: claim sentences that carry a marker, over all claim sentences (and answers with all cited);
- numbers supported: answers whose figures are all in the passages they cite (numeric_check, as served);
- answered: not a refusal, and the answer uses the question's own terms;
- plus, against the gold: FinanceBench strict accuracy (scoring.strict_correct) and, for the Chinese
  questions, the share of the expected figures the answer states; rounds, completion tokens, seconds.
Timings share the CPU with other work (a contended 2-core machine): compare them between the systems.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from weaverbird_common.wire_texts import INSUFFICIENT
from weaverbird_orchestrator.citations import cited_numbers
from weaverbird_orchestrator.numeric_check import answer_figures, check_answer
from weaverbird_orchestrator.tasks.review_criteria import is_claim, passage_sources, refused, sentences, uncovered

from weaverbird_eval.datasets import DEFAULT_DATA, DEFAULT_OUT
from weaverbird_eval.peer_stack import Stack, serving_stack
from weaverbird_eval.scoring import strict_correct

QUESTIONS = Path(__file__).parent / "data" / "analytical.jsonl"
SYSTEMS = ("single", "peer")


@dataclass(frozen=True)
class AnalyticalQuestion:
    id: str
    language: str
    source: str
    question: str
    gold: str
    facts: tuple[str, ...]  # figures a complete answer states (Chinese set), as the context writes them
    relevant: frozenset[str]  # "DOC#pN" evidence pages, or Fin-Eva context ids


def load_questions(data: Path, path: Path = QUESTIONS) -> list[AnalyticalQuestion]:
    """The analytical set; FinanceBench rows are resolved from the shared data by id."""
    bank = {}
    with (data / "financebench" / "questions.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            bank[row["financebench_id"]] = row
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["source"].startswith("financebench:"):
            fb = bank[row["source"].split(":", 1)[1]]
            pages = {f"{e['doc_name']}#p{e['evidence_page_num'] + 1}" for e in fb["evidence"]}
            question = AnalyticalQuestion(
                row["id"], "en", row["source"], fb["question"], fb["answer"], (), frozenset(pages)
            )
            out.append(question)
        else:
            out.append(
                AnalyticalQuestion(
                    row["id"],
                    row["language"],
                    row["source"],
                    row["question"],
                    row["gold"],
                    tuple(row["facts"]),
                    frozenset(row["contexts"]),
                )
            )
    return out


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


def facts_found(answer: str, facts: Sequence[str]) -> float | None:
    """Share of the expected figures the answer states (same value and scale); None without facts."""
    if not facts:
        return None
    said = [(abs(f.value), f.percent) for f in answer_figures(answer)]
    hits = 0
    for fact in facts:
        wanted = [(abs(f.value), f.percent) for f in answer_figures(fact)]
        hits += any(
            w_pct == s_pct and abs(w - s) <= 1e-6 * max(1.0, abs(w)) for w, w_pct in wanted for s, s_pct in said
        )
    return hits / len(facts)


def _passage_key(passage: Any) -> str:
    return passage.document_id if passage.document_id.startswith("ctx-") else f"{passage.title}#p{passage.page}"


@dataclass
class Run:
    system: str  # single | peer
    id: str
    language: str
    question: str
    answer: str
    seconds: float
    completion_tokens: int
    model_calls: int
    rounds: int
    passages: list[str]
    claims: int
    cited_claims: int
    all_cited: bool
    numbers: str  # supported | unsupported | no_numbers
    unsupported: list[str]
    refused: bool
    answered: bool
    criteria_passed: bool  # cited, supported and answered
    strict: bool | None  # FinanceBench gold
    facts_found: float | None  # Chinese set
    evidence_in_context: bool
    peer_review_passed: bool | None = None  # the loop's own verdict (its sub-questions included)
    stopped: str = ""
    sub_questions: list[str] = field(default_factory=list)
    stages: list[dict] = field(default_factory=list)


def score(
    system: str,
    q: AnalyticalQuestion,
    answer: str,
    passages: Sequence[Any],
    *,
    seconds: float,
    completion_tokens: int,
    model_calls: int,
    rounds: int,
) -> Run:
    """The criteria the review uses, applied the same way to both systems (coverage of the question's
    own terms only: the loop's sub-questions are its own business)."""
    claims = [s for s in sentences(answer) if is_claim(s)]
    cited = [s for s in claims if cited_numbers(s)]
    check = check_answer(answer, passage_sources(passages))
    was_refused = refused(answer)
    answered = bool(answer.strip()) and not was_refused and not uncovered(answer, [q.question])
    numbers = check.result if check.result != "refused" else "no_numbers"
    all_cited = len(cited) == len(claims)
    return Run(
        system=system,
        id=q.id,
        language=q.language,
        question=q.question,
        answer=answer,
        seconds=round(seconds, 1),
        completion_tokens=completion_tokens,
        model_calls=model_calls,
        rounds=rounds,
        passages=[_passage_key(p) for p in passages],
        claims=len(claims),
        cited_claims=len(cited),
        all_cited=all_cited,
        numbers=numbers,
        unsupported=list(check.unsupported),
        refused=was_refused,
        answered=answered,
        criteria_passed=all_cited and numbers != "unsupported" and answered,
        strict=strict_correct(answer, q.gold, q.question) if q.source.startswith("financebench") else None,
        facts_found=facts_found(answer, q.facts),
        evidence_in_context=any(_passage_key(p) in q.relevant for p in passages),
    )


def _share(part: float, whole: int) -> float | None:
    return part / whole if whole else None


def summarize(runs: Sequence[Run]) -> dict[str, Any]:
    with_figures = [r for r in runs if r.numbers in ("supported", "unsupported")]
    strict = [r for r in runs if r.strict is not None]
    facts = [r.facts_found for r in runs if r.facts_found is not None]
    seconds = [r.seconds for r in runs]
    rounds: dict[int, int] = {}
    for r in runs:
        rounds[r.rounds] = rounds.get(r.rounds, 0) + 1
    return {
        "questions": len(runs),
        "claims": sum(r.claims for r in runs),
        "cited_claims_share": _share(sum(r.cited_claims for r in runs), sum(r.claims for r in runs)),
        "answers_all_claims_cited": _share(sum(r.all_cited for r in runs), len(runs)),
        "answers_with_figures": len(with_figures),
        "numbers_supported": _share(sum(r.numbers == "supported" for r in with_figures), len(with_figures)),
        "answered": _share(sum(r.answered for r in runs), len(runs)),
        "refusals": sum(r.refused for r in runs),
        "all_criteria": _share(sum(r.criteria_passed for r in runs), len(runs)),
        "strict_scored": len(strict),
        "strict_accuracy": _share(sum(bool(r.strict) for r in strict), len(strict)),
        "facts_found": statistics.mean(facts) if facts else None,
        "evidence_in_context": _share(sum(r.evidence_in_context for r in runs), len(runs)),
        "rounds": dict(sorted(rounds.items())),
        "model_calls_mean": statistics.mean(r.model_calls for r in runs) if runs else None,
        "completion_tokens_mean": statistics.mean(r.completion_tokens for r in runs) if runs else None,
        "seconds_p50": statistics.median(seconds) if seconds else None,
        "seconds_mean": statistics.mean(seconds) if seconds else None,
        "peer_review_passed": _share(sum(bool(r.peer_review_passed) for r in runs), len(runs))
        if runs and runs[0].system == "peer"
        else None,
    }


def stage_timings(runs: Sequence[Run]) -> dict[str, dict[str, float]]:
    """Per stage name: how many ran and their mean milliseconds (peer runs)."""
    per: dict[str, list[float]] = {}
    for r in runs:
        for s in r.stages:
            per.setdefault(s["stage"], []).append(s["ms"])
    return {k: {"count": len(v), "mean_ms": round(statistics.mean(v), 1)} for k, v in per.items()}


# ---------------------------------------------------------------------------------------------
# The two systems
# ---------------------------------------------------------------------------------------------


async def ask_single(stack: Stack, q: AnalyticalQuestion) -> Run:
    """The flow's lookup path: one retrieval, one answer (or its refusal without evidence)."""
    from weaverbird_orchestrator.tasks.llm import complete
    from weaverbird_orchestrator.tasks.peer import has_evidence

    started = time.perf_counter()
    params = await stack.flow.params(q.question)
    retrieval = await stack.flow.retrieve(params)
    if not has_evidence(retrieval, keep_weak_local=not stack.settings.refuse_without_evidence):
        answer, passages, tokens, calls = INSUFFICIENT[q.language], [], 0, 0
    else:
        passages = retrieval.for_model()
        reply = await complete(
            stack.peers, "answer", params.question, passages, params.language, max_tokens=params.max_tokens
        )
        answer, tokens, calls = reply.text, reply.done.completion_tokens, 1
    seconds = time.perf_counter() - started
    return score("single", q, answer, passages, seconds=seconds, completion_tokens=tokens, model_calls=calls, rounds=1)


async def ask_peer(stack: Stack, q: AnalyticalQuestion, args: argparse.Namespace) -> Run:
    """run_peer wired as the task runner wires it: the question's retrieval reused, each sub-question
    retrieved through the flow with its own filters."""
    from weaverbird_orchestrator.domain import Stage
    from weaverbird_orchestrator.tasks.peer import PeerBudget, PeerOutcome, has_evidence, run_peer

    started = time.perf_counter()
    params = await stack.flow.params(q.question)
    retrieval = await stack.flow.retrieve(params)
    if not has_evidence(retrieval, keep_weak_local=not stack.settings.refuse_without_evidence):
        # The flow refuses before any task runs: the same for both systems.
        seconds = time.perf_counter() - started
        answer = INSUFFICIENT[q.language]
        run = score("peer", q, answer, [], seconds=seconds, completion_tokens=0, model_calls=0, rounds=0)
        run.peer_review_passed = False
        return run

    async def retrieve(sub_question: str) -> Any:
        return await stack.flow.retrieve(await stack.flow._sub_params(params, sub_question))

    calls = 0

    class Counting:
        """The generator peer, counting the model calls the loop makes."""

        async def generate(self, *a: Any, **k: Any) -> AsyncIterator[Any]:
            nonlocal calls
            calls += 1
            async for item in stack.peers.generate(*a, **k):
                yield item

    stages: list[Stage] = []
    outcome: PeerOutcome | None = None
    async for item in run_peer(
        params.question,
        params.language,
        retrieve=retrieve,
        generator=Counting(),
        max_rounds=args.max_rounds,
        budget=PeerBudget(max_completion_tokens=args.budget_tokens, max_seconds=args.budget_seconds),
        retrieved=retrieval,
        max_tokens=params.max_tokens,
        model_review=args.model_review,
        keep_weak_local=not stack.settings.refuse_without_evidence,
    ):
        if isinstance(item, PeerOutcome):
            outcome = item
        else:
            stages.append(item)
    assert outcome is not None
    run = score(
        "peer",
        q,
        outcome.answer,
        outcome.passages,
        seconds=time.perf_counter() - started,
        completion_tokens=outcome.completion_tokens,
        model_calls=calls,
        rounds=outcome.rounds,
    )
    run.peer_review_passed = outcome.review_passed
    run.stopped = outcome.stopped
    run.sub_questions = list(outcome.sub_questions)
    run.stages = [asdict(s) for s in stages]
    return run


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _num(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"PEER against the single pass: {report['questions']} analytical questions ({report['by_language']}), model "
        f"{report['model']} at {report['endpoint']}; PEER max rounds {report['max_rounds']}, budget "
        f"{report['budget_tokens']} completion tokens / {report['budget_seconds']:.0f} s, model review "
        f"{'on' if report['model_review'] else 'off'}. Seconds are wall time on a shared, contended CPU.",
        "",
        "| set | system | questions | cited claims | answers all cited | numbers supported | answered | "
        "refusals | all three criteria | FinanceBench strict | Chinese facts found | evidence in context | "
        "rounds | model calls | completion tokens | seconds p50 | seconds mean |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for set_name, systems in report["sets"].items():
        for system, s in systems.items():
            rounds = ", ".join(f"{k}: {v}" for k, v in s["rounds"].items())
            lines.append(
                f"| {set_name} | {system} | {s['questions']} | {_pct(s['cited_claims_share'])} of {s['claims']} | "
                f"{_pct(s['answers_all_claims_cited'])} | {_pct(s['numbers_supported'])} of "
                f"{s['answers_with_figures']} | {_pct(s['answered'])} | {s['refusals']} | {_pct(s['all_criteria'])} | "
                f"{_pct(s['strict_accuracy'])} of {s['strict_scored']} | {_pct(s['facts_found'])} | "
                f"{_pct(s['evidence_in_context'])} | {rounds} | {_num(s['model_calls_mean'], 1)} | "
                f"{_num(s['completion_tokens_mean'])} | {_num(s['seconds_p50'])} | {_num(s['seconds_mean'])} |"
            )
    stages = ", ".join(
        f"{name} {t['count']}x, mean {t['mean_ms'] / 1000:.1f} s" for name, t in report["peer_stages"].items()
    )
    lines += ["", f"PEER stages (all questions): {stages}."]
    lines += ["", f"PEER's own review passed for {_pct(report['sets']['all']['peer']['peer_review_passed'])}."]
    return "\n".join(lines) + "\n"


def build_report(runs: Sequence[Run], args: argparse.Namespace, model: str) -> dict[str, Any]:
    sets: dict[str, dict[str, Any]] = {}
    for set_name, languages in (("all", ("en", "zh")), ("en", ("en",)), ("zh", ("zh",))):
        sets[set_name] = {s: summarize([r for r in runs if r.system == s and r.language in languages]) for s in SYSTEMS}
    asked = [r.language for r in runs if r.system == "single"]
    return {
        "model": model,
        "endpoint": args.llm_endpoint,
        "questions": len(asked),
        "by_language": f"{asked.count('en')} FinanceBench, {asked.count('zh')} Chinese",
        "max_rounds": args.max_rounds,
        "budget_tokens": args.budget_tokens,
        "budget_seconds": args.budget_seconds,
        "model_review": args.model_review,
        "kb": "all 84 FinanceBench filings (38,814 chunks) + 603 Fin-Eva contexts, nothing held out",
        "sets": sets,
        "peer_stages": stage_timings([r for r in runs if r.system == "peer"]),
    }


def interleaved(questions: Sequence[AnalyticalQuestion]) -> list[AnalyticalQuestion]:
    """English and Chinese in turn, so that a partial run (or --limit) covers both languages."""
    en = [q for q in questions if q.language == "en"]
    zh = [q for q in questions if q.language != "en"]
    out: list[AnalyticalQuestion] = []
    for i in range(max(len(en), len(zh))):
        out += en[i : i + 1] + zh[i : i + 1]
    return out


async def run(args: argparse.Namespace) -> int:
    questions = interleaved(load_questions(args.data))
    if args.limit:
        questions = questions[: args.limit]
    runs: list[Run] = []
    model = await asyncio.to_thread(_model_name, args.llm_endpoint)
    table = ""
    with tempfile.TemporaryDirectory(prefix="weaverbird-peer-") as tmp:
        async with serving_stack(args.llm_endpoint, args.data, Path(tmp)) as stack:
            for i, q in enumerate(questions, 1):
                for system in SYSTEMS:
                    result = await (ask_single(stack, q) if system == "single" else ask_peer(stack, q, args))
                    runs.append(result)
                    print(
                        f"[{i}/{len(questions)}] {q.id} {system}: {result.seconds:.0f} s, rounds {result.rounds}, "
                        f"criteria {'pass' if result.criteria_passed else 'fail'}, strict {result.strict}, "
                        f"facts {result.facts_found}",
                        flush=True,
                    )
                # Written after every question: an interrupted run still leaves its partial report.
                table = write_report(runs, args, model)
    print(f"\n{table}\nwritten: {args.out / 'peer'}.md, .json")
    return 0


def write_report(runs: Sequence[Run], args: argparse.Namespace, model: str) -> str:
    """peer.md and peer.json for the runs so far; returns the markdown."""
    report = build_report(runs, args, model)
    args.out.mkdir(parents=True, exist_ok=True)
    table = markdown(report)
    (args.out / "peer.md").write_text(table, encoding="utf-8")
    payload = {"summary": report, "runs": [asdict(r) for r in runs]}
    (args.out / "peer.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    return table


def _model_name(endpoint: str) -> str:
    import urllib.request

    try:
        with urllib.request.urlopen(f"{endpoint.rstrip('/')}/v1/models", timeout=5) as reply:
            return str(json.load(reply)["data"][0]["id"]).rsplit("/", 1)[-1]
    except (OSError, KeyError, IndexError, ValueError):
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m weaverbird_eval.peer", description=__doc__.split("\n")[0])
    parser.add_argument("--llm-endpoint", required=True, help="OpenAI-compatible server, e.g. http://127.0.0.1:8091")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--max-rounds", type=int, default=2)
    parser.add_argument("--budget-tokens", type=int, default=1500)
    parser.add_argument("--budget-seconds", type=float, default=240.0)
    parser.add_argument("--model-review", action="store_true", help="also ask the model's review (task review)")
    parser.add_argument("--limit", type=int, default=0, help="first N questions only (a smoke run)")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
