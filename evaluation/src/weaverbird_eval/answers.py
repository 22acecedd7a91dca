"""`weaverbird eval answers`: FinanceBench questions through the real system, scored three ways.

The whole stack runs on 127.0.0.1 (embedder, retriever, generator with the local LLM, orchestrator)
over the FinanceBench filings as its knowledge base, and every question goes through the unary Ask
RPC exactly as a client's would. Scores:

- accuracy (numeric questions only): a number in the answer equals a number of the gold answer within
  1 % relative, allowing a change of scale (thousand/million/billion, or fraction vs percent), since
  "$1.58 billion" and "$1,577 million" are the same answer;
- citation correctness: among answers that cite, the share citing a passage from an evidence page
  (same filing and page);
- numeric faithfulness: among answers with numbers, the share whose every number appears in the text of
  a cited passage (numbers already in the question, and the citation markers, are not claims).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

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
    id: str
    question: str
    gold: str
    answer: str
    correct: bool | None
    cited: list[str]  # "doc#page" of passages cited in the answer
    citation_correct: bool | None  # None when nothing is cited
    evidence_in_context: bool  # an evidence page was among the passages given to the model
    unsupported: list[float]
    refused: bool
    seconds: float


def evaluate(records: list[AnswerRecord]) -> dict:
    numeric = [r for r in records if r.correct is not None]
    citing = [r for r in records if r.citation_correct is not None]
    with_numbers = [r for r in records if numbers(r.answer)]
    return {
        "questions": len(records),
        "numeric_questions": len(numeric),
        "accuracy_numeric": sum(bool(r.correct) for r in numeric) / len(numeric) if numeric else None,
        "answers_citing": len(citing),
        "citation_correct": sum(bool(r.citation_correct) for r in citing) / len(citing) if citing else None,
        "answers_with_numbers": len(with_numbers),
        "numeric_faithfulness": (
            sum(not r.unsupported for r in with_numbers) / len(with_numbers) if with_numbers else None
        ),
        "evidence_in_context": sum(r.evidence_in_context for r in records) / len(records) if records else None,
        "refusals": sum(r.refused for r in records),
        "seconds_p50": sorted(r.seconds for r in records)[len(records) // 2] if records else None,
    }


def sample(items: list, n: int) -> list:
    """`n` items spread evenly over the list (questions are grouped by company in the file)."""
    if n >= len(items):
        return items
    return [items[round(i * len(items) / n)] for i in range(n)]


def main(args: argparse.Namespace) -> int:
    from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc
    from weaverbird_cli.stack import LocalStack, StackConfig
    from weaverbird_generator.prompt import INSUFFICIENT

    from weaverbird_eval import datasets
    from weaverbird_eval.financebench_kb import build_corpus, embed_corpus, page_documents, upsert_service

    evalset = datasets.financebench(args.data, max_pages=args.max_pages)
    kept = {u.id for u in evalset.units}
    documents = list(page_documents(args.data, keep=lambda doc, page: f"{doc}#p{page}" in kept))
    payloads, texts = build_corpus(documents)
    vectors = embed_corpus(args.backend, texts)
    queries = sample(evalset.queries, args.questions)
    model = {"qwen": "qwen2.5-1.5b"}.get(args.model, args.model)
    print(f"KB: {len(payloads)} chunks ({evalset.note}); {len(queries)} questions; model {model}", flush=True)

    records: list[AnswerRecord] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = StackConfig(
            base_port=54051,
            data_dir=Path(tmp),
            generator_env={"GENERATOR_MODEL": model, "GENERATOR_MODEL_DIR": str(Path("var/models").resolve())},
            embedder_env={"EMBEDDER_BACKEND": args.backend},
            # As served: company names in questions become filters through the KB's own catalog.
        )
        with LocalStack(config, startup_timeout_s=600) as stack:
            upsert_service(stack.config.addr("retriever"), payloads, vectors)
            with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
                stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
                for q in tqdm(queries, desc="answer", unit="question"):
                    request = orchestrator_pb2.AskRequest(
                        question=q.text, top_j=args.top_j, threshold=0.0, temperature=0.0, max_tokens=256
                    )
                    start = time.perf_counter()
                    reply = stub.Ask(request, timeout=900)
                    seconds = time.perf_counter() - start
                    given = [f"{c.title}#p{c.page}" for c in reply.citations]
                    cited = [c for c in reply.citations if c.cited_in_answer]
                    cited_ids = [f"{c.title}#p{c.page}" for c in cited]
                    gold = q.extra["answer"]
                    records.append(
                        AnswerRecord(
                            q.id,
                            q.text,
                            gold,
                            reply.answer,
                            answer_correct(reply.answer, gold),
                            cited_ids,
                            any(c in q.relevant for c in cited_ids) if cited_ids else None,
                            any(g in q.relevant for g in given),
                            unsupported_numbers(reply.answer, q.text, [c.text for c in cited]),
                            INSUFFICIENT["en"].rstrip(".") in reply.answer,
                            round(seconds, 1),
                        )
                    )
    summary = {"model": model, "backend": args.backend, "top_j": args.top_j, "corpus": evalset.note}
    summary.update(evaluate(records))
    table = markdown(summary)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "answers.md").write_text(table, encoding="utf-8")
    payload = {"summary": summary, "answers": [asdict(r) for r in records]}
    (args.out / "answers.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\n{table}\nwritten: {args.out / 'answers'}.md, .json")
    return 0


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def markdown(s: dict) -> str:
    return (
        "| model | retrieval | questions | accuracy (numeric) | citation correct | numeric faithfulness | "
        "evidence in context | refusals | seconds p50 |\n|---|---|---|---|---|---|---|---|---|\n"
        f"| {s['model']} | {s['backend']}, J={s['top_j']}, {s['corpus']} | {s['questions']} | "
        f"{_pct(s['accuracy_numeric'])} of {s['numeric_questions']} | {_pct(s['citation_correct'])} of "
        f"{s['answers_citing']} | {_pct(s['numeric_faithfulness'])} of {s['answers_with_numbers']} | "
        f"{_pct(s['evidence_in_context'])} | {s['refusals']} | {s['seconds_p50']} |\n"
    )
