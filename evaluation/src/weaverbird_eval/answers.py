"""`weaverbird eval answers`: questions through the real system, scored strictly, in three sets.

The whole stack runs on 127.0.0.1 (embedder, retriever, generator with the default local model,
orchestrator, web search off) over one knowledge base: the FinanceBench filings (minus the held-out ones
below) and the Fin-Eva contexts. Every question goes through AskStream as a client's would, with the
served defaults (route gate, K, J, numeric check). Three sets:

- ``financebench``: FinanceBench questions whose filing is in the KB;
- ``chinese``: Fin-Eva questions (Chinese, context in the KB) whose gold option states a figure, asked
  open-ended (without the options);
- ``out_of_kb``: FinanceBench questions whose own filing was left out of the KB (other filings of the
  same company may be there): the right outcome is the insufficient-information answer (or the web);
- ``out_of_kb_zh`` (``--out-of-kb-zh N``, default 0): Fin-Eva news and document questions whose own
  context was left out of the KB (never a context of the ``chinese`` set); right outcome as above.

Scores (scoring.py): accuracy strict (value with its unit/scale; yes/no) with the lenient figure beside;
citation correctness over every answered question (the model answered, whether or not the check then
withheld it; an answer citing nothing counts as not correct), judged on the model's own markers; numeric
faithfulness (among answers with figures, the served check found every figure in a cited passage: the
model's own rate, whatever the policy then did); answers with an unsupported figure before the check
acted, beside the ones it withheld and the ones shown anyway (never an answer the user saw as the
insufficient-information sentence); answers with a figure found in no passage given at
all (and, in brackets, those whose figure in no passage is not the served calculator's: its result and
formula constants are computed in code from cited figures, so no passage states them); refusals; and,
for out-of-KB questions, the share refused or routed to the web. Every answer is
scored as the user is left with it: a withheld answer is its insufficient-information replacement.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import grpc
from tqdm import tqdm

NUMBER = re.compile(r"(?<![\d.])[-−]?\$?\d[\d,]*(?:\.\d+)?(?:\s*(%|percent|thousand|million|billion|bn|m\b))?", re.I)
CITATION_MARK = re.compile(r"\[\d+(?:\s*[,-]\s*\d+)*\]")
SCALES = {"thousand": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9}
TOLERANCE = 0.01


def numbers(text: str) -> list[float]:
    """Every number in `text` as a float, scale words applied, citation markers [n] skipped."""
    out = []
    for match in NUMBER.finditer(CITATION_MARK.sub(" ", text)):
        raw = match.group(0)
        digits = re.sub(r"[^\d.\-−]", "", raw.split()[0] if " " in raw else raw).replace("−", "-").rstrip(".")
        try:
            value = float(digits)
        except ValueError:
            continue
        unit = (match.group(1) or "").lower()
        out.append(value * SCALES.get(unit, 1.0))
    return out


def same_number(a: float, b: float, tolerance: float = TOLERANCE) -> bool:
    """Equal within `tolerance` relative, up to a power of 1000 or a factor of 100 (percent)."""
    if a == b:
        return True
    for factor in (1, 1e3, 1e6, 1e9, 1e-3, 1e-6, 1e-9, 100, 1e-2):
        scaled = b * factor
        if scaled != 0 and abs(a - scaled) <= tolerance * abs(scaled):
            return True
    return False


def _is_year(x: float) -> bool:
    return x.is_integer() and 1990 <= x <= 2035


def key_numbers(gold: str) -> list[float]:
    """The numbers a gold answer asserts: years dropped unless the answer is only years."""
    found = numbers(gold)
    kept = [x for x in found if not _is_year(x)]
    return kept or found


def answer_correct(answer: str, gold: str) -> bool | None:
    """None when the gold answer has no number (not scored for accuracy)."""
    gold_numbers = key_numbers(gold)
    if not gold_numbers:
        return None
    return any(same_number(a, g) for a in numbers(answer) for g in gold_numbers)


def unsupported_numbers(answer: str, question: str, cited_texts: list[str]) -> list[float]:
    """Numbers of `answer` found in no cited passage (exact up to formatting) and not in the question."""
    support = [x for t in cited_texts for x in numbers(t)] + numbers(question)
    return [a for a in numbers(answer) if not any(same_number(a, s, tolerance=1e-9) for s in support)]


@dataclass
class AnswerRecord:
    set: str  # financebench | chinese | out_of_kb | out_of_kb_zh
    id: str
    question: str
    gold: str
    answer: str
    strict: bool | None  # None: the gold answer has no figure nor yes/no
    lenient: bool | None
    cited: list[str]  # ids of the passages cited in the answer
    citation_correct: bool | None  # None when nothing is cited
    evidence_in_context: bool  # a relevant passage was among those given to the model
    answer_check: str  # the served numeric check of the model's answer: supported | unsupported | no_numbers | refused
    unsupported: list[str]  # figures the served check found in no cited passage
    in_no_passage: list[str]  # figures found in no passage given at all
    route: str
    refused: bool
    seconds: float
    ttft_seconds: float = 0.0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    withheld: bool = False  # the "replace" policy showed the insufficient-information answer instead
    routed_task: str = ""  # the task the question was routed to (lookup, calculation, extraction, analysis)
    task: str = ""  # the task that answered (a calculation that did not verify falls back to lookup)
    # Figures of in_no_passage that the served calculator wrote (its result and formula constants,
    # computed in code from cited figures), not the model: a computed difference is in no passage by nature.
    computed: list[str] = field(default_factory=list)
    route_note: str = ""  # why the gate routed as it did (e.g. the coverage gap)
    # Passages the model's own answer cites, before any withholding (`cited` is what the user was shown).
    model_cited: list[str] = field(default_factory=list)
    given: list[str] = field(default_factory=list)  # the passages the model was given, in prompt order

    @property
    def answered(self) -> bool:
        """The model answered: not a refusal, though the check may have withheld the answer."""
        return self.withheld or not self.refused


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _shown_wrong_figure(r: AnswerRecord) -> bool:
    """Shown to the user (not withheld, not a refusal), with figures, and strictly wrong."""
    return r.strict is False and not r.withheld and not r.refused and r.answer_check in ("supported", "unsupported")


def summarize(records: Sequence[AnswerRecord]) -> dict[str, Any]:
    """The scores of one set; each counts only the answers it applies to (the counts are reported)."""
    scored = [r for r in records if r.strict is not None]
    lenient = [r for r in records if r.lenient is not None]
    citing = [r for r in records if r.citation_correct is not None]
    answered = [r for r in records if r.answered]
    with_figures = [r for r in records if r.answer_check in ("supported", "unsupported")]
    # Under the "replace" policy an unsupported answer is withheld: it turns into a refusal.
    replaced_correct = sum(bool(r.strict) and r.answer_check != "unsupported" for r in scored)
    seconds = sorted(r.seconds for r in records)
    ttft = sorted(r.ttft_seconds for r in records if r.ttft_seconds)
    return {
        "questions": len(records),
        "scored": len(scored),
        "accuracy_strict": _share(sum(bool(r.strict) for r in scored), len(scored)),
        "lenient_scored": len(lenient),
        "accuracy_lenient": _share(sum(bool(r.lenient) for r in lenient), len(lenient)),
        "answers_citing": len(citing),
        "answered": len(answered),
        # Over every answered question: citing nothing, or only other passages, is not correct.
        "citation_correct": _share(sum(bool(r.citation_correct) for r in answered), len(answered)),
        "citation_correct_among_citing": _share(sum(bool(r.citation_correct) for r in citing), len(citing)),
        "answers_with_figures": len(with_figures),
        "numeric_faithfulness": _share(sum(r.answer_check == "supported" for r in with_figures), len(with_figures)),
        "answers_with_a_figure_in_no_passage": sum(bool(r.in_no_passage) for r in records),
        "answers_with_a_stated_figure_in_no_passage": sum(
            bool(set(r.in_no_passage) - set(r.computed)) for r in records
        ),
        # Before the check acted (the model's answers), then what it did with them.
        "unsupported_before_check": sum(r.answer_check == "unsupported" for r in answered),
        "withheld": sum(r.withheld for r in records),
        # An answer the user saw as the insufficient-information sentence is never shown with a figure.
        "shown_with_unsupported_figures": sum(
            r.answer_check == "unsupported" and not r.withheld and not r.refused for r in records
        ),
        # What a check on figures cannot see: a figure the passages hold, shown for the wrong thing.
        "shown_with_a_wrong_figure": sum(_shown_wrong_figure(r) for r in scored),
        "evidence_in_context": _share(sum(r.evidence_in_context for r in records), len(records)),
        "refusals": sum(r.refused for r in records),
        "refused_or_web": _share(sum(r.refused or r.route == "web" for r in records), len(records)),
        # Out-of-KB sets: a question whose filing is held out may still be answered right from another
        # filing's comparative column (FY2021 from the FY2022 10-K); counted apart, never as a refusal.
        "refused_web_or_right": _share(
            sum(r.refused or r.route == "web" or r.strict is True for r in records), len(records)
        ),
        "accuracy_strict_if_replaced": _share(replaced_correct, len(scored)),
        "seconds_p50": seconds[len(seconds) // 2] if seconds else None,
        "ttft_seconds_p50": ttft[len(ttft) // 2] if ttft else None,
    }


def evaluate(records: Sequence[AnswerRecord]) -> dict[str, dict[str, Any]]:
    sets: dict[str, list[AnswerRecord]] = {}
    for r in records:
        sets.setdefault(r.set, []).append(r)
    return {name: summarize(rs) for name, rs in sets.items()}


def sample(items: list, n: int) -> list:
    """`n` items spread evenly over the list (questions are grouped by company in the file)."""
    if n >= len(items):
        return items
    return [items[round(i * len(items) / n)] for i in range(n)]


@dataclass
class Case:
    set: str
    id: str
    question: str
    gold: str
    relevant: frozenset[str]  # "doc#pN" (FinanceBench) or a Fin-Eva context id
    extra: dict = field(default_factory=dict)


def financebench_cases(evalset: Any, n_answerable: int, n_out: int) -> tuple[list[Case], list[Case], set[str]]:
    """(answerable, out-of-KB, held-out filings): the out-of-KB questions' filings leave the KB."""
    queries = list(evalset.queries)
    out = sample(queries, n_out) if n_out else []
    held_out = {q.extra["doc_name"] for q in out}
    answerable = sample([q for q in queries if q.extra["doc_name"] not in held_out], n_answerable)

    def case(set_name: str, q: Any) -> Case:
        return Case(set_name, q.id, q.text, q.extra["answer"], q.relevant)

    return [case("financebench", q) for q in answerable], [case("out_of_kb", q) for q in out], held_out


# Fin-Eva questions that only make sense with their four options in front of the reader.
_NEEDS_OPTIONS = re.compile(r"选项|以下|下列|哪个是|哪一项|正确的是|错误的是|不正确")


def chinese_cases(data: Path, n: int) -> tuple[list[Case], list[dict], list[str]]:
    """(cases, payloads, texts to embed): Fin-Eva questions with a figure in their gold option, and every
    context of the files they come from as the KB."""
    from weaverbird_orchestrator.numeric_check import answer_figures

    from weaverbird_eval.datasets import fineva

    evalset = fineva(data)
    cases = []
    for q in evalset.queries:
        row = q.extra
        gold = (row.get(row.get("answer", ""), "") or "").strip()
        if q.id.startswith("financial_product_analysis") or _NEEDS_OPTIONS.search(q.text):
            continue  # fund descriptions: qualitative answers
        # The figure must be what is asked, not one the question already states ("1050亿美元 ... 哪些领域").
        if not gold or not [f for f in answer_figures(gold) if f.text not in q.text]:
            continue
        cases.append(Case("chinese", q.id, q.text, gold, q.relevant))
    payloads, texts = [], []
    for unit in evalset.units:
        headline = re.match(r"【([^】]{2,40})】", unit.text)
        title = headline.group(1) if headline else unit.text[:24]
        payloads.append(
            {"document_id": unit.id, "title": title, "source": f"fineva/{unit.id}", "chunk_index": 0, "text": unit.text}
        )
        texts.append(f"{title}\n{unit.text}")
    return sample(cases, n), payloads, texts


def chinese_out_of_kb(data: Path, n: int, keep: Iterable[Case]) -> list[Case]:
    """`n` Fin-Eva questions, spread over the file, that can be asked open-ended (no options needed, no
    anonymised fund descriptions) and whose contexts serve none of the `keep` cases: their contexts
    leave the KB, so the right outcome is the insufficient-information answer."""
    from weaverbird_eval.datasets import fineva

    kept_contexts = {unit for case in keep for unit in case.relevant}
    candidates = [
        Case("out_of_kb_zh", q.id, q.text, (q.extra.get(q.extra.get("answer", ""), "") or "").strip(), q.relevant)
        for q in fineva(data).queries
        if not q.id.startswith("financial_product_analysis")
        and not _NEEDS_OPTIONS.search(q.text)
        and not q.relevant & kept_contexts
    ]
    return sample(candidates, n) if n else []


# The line the served calculator writes under the figures (tasks.calculation.calculation_line).
_CALCULATION_LINE = re.compile(r"^(?:Calculation:|计算：).*$", re.MULTILINE)


def _passage_id(c: Any, set_name: str) -> str:
    return c.document_id if set_name in ("chinese", "out_of_kb_zh") else f"{c.title}#p{c.page}"


def ask(stub: Any, case: Case, top_j: int) -> AnswerRecord:
    from weaverbird.v1 import orchestrator_pb2
    from weaverbird_orchestrator.numeric_check import answer_figures, check_answer

    from weaverbird_eval.scoring import is_refusal, strict_correct

    # Temperature unset: the served default (greedy), as a user of the page or the CLI gets it.
    request = orchestrator_pb2.AskRequest(question=case.question, max_tokens=256)
    if top_j:
        request.top_j = top_j
    start = time.perf_counter()
    first = 0.0
    tokens: list[str] = []
    route = "local"
    route_note = ""
    routed_task = ""
    citations: list[Any] = []
    done = None
    for event in stub.AskStream(request, timeout=900):
        kind = event.WhichOneof("event")
        if kind == "route":
            route = "web" if event.route.route == orchestrator_pb2.ROUTE_WEB else "local"
            route_note = event.route.note
            routed_task = _task_name(event.route.task)
        elif kind == "token":
            first = first or time.perf_counter()
            tokens.append(event.token)
        elif kind == "citations":
            citations = list(event.citations.citations)
        elif kind == "done":
            done = event.done
    seconds = time.perf_counter() - start
    assert done is not None, "the stream ended without a done event"
    # What the user is left with: a withheld answer (figures in no cited passage) shows its replacement.
    answer = done.replacement_answer or "".join(tokens)
    # The citation flags come from the model's answer, also when the check then withheld it.
    model_cited_ids = [_passage_id(c, case.set) for c in citations if c.cited_in_answer]
    cited_ids = model_cited_ids if not done.replacement_answer else []
    check_name = orchestrator_pb2.AnswerCheck.Name(done.answer_check).removeprefix("ANSWER_CHECK_").lower()
    # Without its markers the answer is checked against every passage given, each read on its own (a table's
    # unit, or a scale written beside a number, belongs to its own passage).
    given = [f"{c.title}\n{c.text}" for c in citations]
    anywhere = check_answer(re.sub(r"\[\d+\]", "", answer), given)
    in_no_passage = list(anywhere.unsupported) if citations else [f.text for f in answer_figures(answer)]
    computed_line = _CALCULATION_LINE.search(answer) if done.calculation.result_text else None
    computed = {f.text for f in answer_figures(computed_line.group())} if computed_line else set()
    return AnswerRecord(
        set=case.set,
        id=case.id,
        question=case.question,
        gold=case.gold,
        answer=answer,
        strict=strict_correct(answer, case.gold, case.question),
        lenient=answer_correct(answer, case.gold),
        cited=cited_ids,
        citation_correct=any(c in case.relevant for c in model_cited_ids) if model_cited_ids else None,
        model_cited=model_cited_ids,
        given=[_passage_id(c, case.set) for c in citations],
        evidence_in_context=any(_passage_id(c, case.set) in case.relevant for c in citations),
        answer_check=check_name,
        unsupported=list(done.unsupported_numbers),
        in_no_passage=in_no_passage,
        route=route,
        refused=is_refusal(answer) or done.answer_check == orchestrator_pb2.ANSWER_CHECK_REFUSED,
        withheld=bool(done.replacement_answer),
        seconds=round(seconds, 1),
        ttft_seconds=round(first - start, 1) if first else 0.0,
        prompt_tokens=done.prompt_tokens,
        cached_tokens=done.cached_tokens,
        routed_task=routed_task,
        task=_task_name(done.task),
        computed=[f for f in in_no_passage if f in computed],
        route_note=route_note,
    )


def _task_name(task: int) -> str:
    from weaverbird.v1 import common_pb2

    return common_pb2.Task.Name(task).removeprefix("TASK_").lower()  # type: ignore[arg-type]


def main(args: argparse.Namespace) -> int:
    import numpy as np
    from weaverbird_cli.stack import LocalStack, StackConfig

    from weaverbird_eval import datasets
    from weaverbird_eval.financebench_kb import (
        build_corpus,
        embed_corpus,
        page_documents,
        upsert_facts_service,
        upsert_service,
    )

    evalset = datasets.financebench(args.data, max_pages=args.max_pages)
    answerable, out_of_kb, held_out = financebench_cases(evalset, args.questions, args.out_of_kb)
    kept = {u.id for u in evalset.units}
    documents = list(page_documents(args.data, keep=lambda doc, page: f"{doc}#p{page}" in kept))
    payloads, texts = build_corpus(documents)
    vectors = embed_corpus(args.backend, texts)  # the whole corpus (cached); held-out filings masked below
    keep = np.array([p["document_id"] not in held_out and p["title"] not in held_out for p in payloads])
    fb_payloads = [p for p, k in zip(payloads, keep, strict=True) if k]
    fb_vectors = vectors[keep]
    chinese, zh_payloads, zh_texts = chinese_cases(args.data, args.chinese) if args.chinese else ([], [], [])
    out_of_kb_zh = chinese_out_of_kb(args.data, args.out_of_kb_zh, chinese) if zh_payloads else []
    zh_vectors = embed_corpus(args.backend, zh_texts) if zh_texts else None
    if out_of_kb_zh and zh_vectors is not None:
        gone = {unit for case in out_of_kb_zh for unit in case.relevant}
        zh_keep = np.array([p["document_id"] not in gone for p in zh_payloads])
        zh_payloads = [p for p, k in zip(zh_payloads, zh_keep, strict=True) if k]
        zh_vectors = zh_vectors[zh_keep]
    # The held-out filings leave the KB whichever sets are asked, so a run of fewer sets asks the same
    # answerable questions over the same KB (a before/after comparison needs that).
    cases = [c for c in answerable + chinese + out_of_kb + out_of_kb_zh if c.set in args.sets.split(",")]
    model = {"qwen": "qwen2.5-coder-1.5b"}.get(args.model, args.model)
    print(
        f"KB: {len(fb_payloads)} FinanceBench chunks ({len(held_out)} filings held out) + {len(zh_payloads)} "
        f"Fin-Eva contexts; questions: {len(answerable)} FinanceBench, {len(chinese)} Chinese, "
        f"{len(out_of_kb)} out-of-KB, {len(out_of_kb_zh)} Chinese out-of-KB; model {model}",
        flush=True,
    )

    records: list[AnswerRecord] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = StackConfig(
            base_port=54051,
            data_dir=Path(tmp),
            generator_env={
                "GENERATOR_MODEL": model,
                "GENERATOR_MODEL_DIR": str(Path("var/models").resolve()),
                # Unset = the served default (query-focused context on the local model).
                **(
                    {"GENERATOR_CONTEXT_BUDGET_TOKENS": str(args.context_budget)}
                    if args.context_budget is not None
                    else {}
                ),
            },
            embedder_env={"EMBEDDER_BACKEND": args.backend},
            orchestrator_env=(
                {"ORCHESTRATOR_NUMERIC_CHECK_POLICY": args.numeric_check_policy} if args.numeric_check_policy else {}
            ),
        )
        with LocalStack(config, startup_timeout_s=900) as stack:
            from weaverbird.v1 import orchestrator_pb2_grpc

            upsert_service(stack.config.addr("retriever"), fb_payloads, fb_vectors)
            # The statement facts the ingester would store for the same filings (none of the held-out ones).
            kb_documents = [d for d in documents if d.document_id not in held_out and d.title not in held_out]
            upsert_facts_service(stack.config.addr("retriever"), kb_documents)
            if zh_vectors is not None:
                upsert_service(stack.config.addr("retriever"), zh_payloads, zh_vectors, language="zh")
            with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
                stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
                for case in tqdm(cases, desc="answer", unit="question"):
                    records.append(ask(stub, case, args.top_j))
    summary = {
        "model": model,
        "backend": args.backend,
        "top_j": args.top_j or "served default",
        "context_budget": "served default" if args.context_budget is None else args.context_budget,
        "numeric_check_policy": args.numeric_check_policy or "served default",
        "corpus": evalset.note,
        "held_out_filings": sorted(held_out),
        "held_out_fineva_contexts": sorted({u for c in out_of_kb_zh for u in c.relevant}),
        "sets": evaluate(records),
    }
    table = markdown(summary)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "answers.md").write_text(table, encoding="utf-8")
    payload = {"summary": summary, "answers": [asdict(r) for r in records]}
    (args.out / "answers.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\n{table}\nwritten: {args.out / 'answers'}.md, .json")
    return 0


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def markdown(summary: dict) -> str:
    lines = [
        f"Model {summary['model']}, retrieval {summary['backend']} (served hybrid), J = {summary['top_j']}, "
        f"context budget {summary.get('context_budget', 'served default')} tokens, numeric check policy "
        f"{summary.get('numeric_check_policy', 'served default')}.",
        "",
        "| set | questions | accuracy strict | (lenient) | citation correct (of answered) | model's numeric "
        "faithfulness | unsupported before the check | withheld | shown with an unsupported figure | shown with a "
        "wrong figure | figure in no passage (not computed in code) | refusals | refused or web | strict if "
        "unsupported replaced | TTFT p50 s | seconds p50 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summary["sets"].items():
        lines.append(
            f"| {name} | {s['questions']} | {_pct(s['accuracy_strict'])} of {s['scored']} | "
            f"{_pct(s['accuracy_lenient'])} of {s['lenient_scored']} | {_pct(s['citation_correct'])} of "
            f"{s.get('answered', s['answers_citing'])} | {_pct(s['numeric_faithfulness'])} of "
            f"{s['answers_with_figures']} | {s.get('unsupported_before_check', 'n/a')} | "
            f"{s.get('withheld', 0)} | {s.get('shown_with_unsupported_figures', 'n/a')} | "
            f"{s.get('shown_with_a_wrong_figure', 'n/a')} of {s['scored']} | "
            f"{s['answers_with_a_figure_in_no_passage']} "
            f"({s.get('answers_with_a_stated_figure_in_no_passage', 'n/a')}) | "
            f"{s['refusals']} | {_pct(s['refused_or_web'])} | "
            f"{_pct(s['accuracy_strict_if_replaced'])} | {s['ttft_seconds_p50']} | {s['seconds_p50']} |"
        )
    return "\n".join(lines) + "\n"
