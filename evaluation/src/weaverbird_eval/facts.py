"""`weaverbird eval facts`: statement facts read from FinanceBench filings, and figure questions answered
from them in code (no model, no retrieval: each question's own filing is the fact source).

Two measures:
- extraction: the line items FinanceBench's justifications spell out with their figures ("Accounts
  receivable+Inventories-Accounts payable" over "334+275-254") are looked up among the facts of the
  evidence pages by label and value: the share found with the right value, period and scale.
- answers: every question is read by facts.question; those it can read are answered by
  facts.answer and scored strictly (scoring.strict_correct); the rest are counted as passed on to the
  passage path. Reported per question type, with wrong answers listed for reading.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.facts.answer import FactAnswer, answer_from_facts
from weaverbird_common.facts.extract import extract_facts
from weaverbird_common.facts.model import Fact
from weaverbird_common.facts.question import read_question

from weaverbird_eval.scoring import strict_correct


def _documents(root: Path) -> dict[str, Document]:
    pages: dict[str, list[Page]] = defaultdict(list)
    for line in (root / "pages.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        pages[row["doc_name"]].append(Page(row["page_num"] + 1, row["text"]))
    docs = {}
    for name, doc_pages in pages.items():
        doc_pages.sort(key=lambda p: p.number or 0)
        year = re.search(r"_(\d{4})", name)
        docs[name] = Document(name, name, name, doc_pages, "en", name.split("_")[0],
                              int(year.group(1)) if year else None, None, "")
    return docs


class _PageCites:
    """[n] per page, numbered as pages are first cited."""

    def __init__(self) -> None:
        self.pages: dict[int | None, int] = {}

    def __call__(self, fact: Fact) -> int:
        return self.pages.setdefault(fact.page, len(self.pages) + 1)


def _norm(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", label.lower()).strip()


@dataclass
class ExtractionCheck:
    items: int = 0
    found_label: int = 0
    found_value: int = 0


def check_extraction(questions: list[dict], facts_of: dict[str, list[Fact]]) -> tuple[ExtractionCheck, list[str]]:
    """Line items named with their figures in a justification ("A+B-C" over "1+2-3")."""
    check, misses = ExtractionCheck(), []
    for q in questions:
        lines = [line.strip() for line in (q.get("justification") or "").splitlines() if line.strip()]
        for names, numbers in itertools.pairwise(lines):
            if not re.fullmatch(r"[\d.,+\-*/() ]+", numbers) or not re.search(r"[A-Za-z]", names):
                continue
            labels = [n.strip() for n in re.split(r"[+\-*/]", names) if n.strip()]
            values = [float(v.replace(",", "")) for v in re.findall(r"\d[\d,]*(?:\.\d+)?", numbers)]
            if len(labels) != len(values):
                continue
            pages = {e["evidence_page_num"] + 1 for e in q["evidence"]}
            facts = [f for f in facts_of[q["doc_name"]] if f.page in pages]
            for label, value in zip(labels, values, strict=True):
                check.items += 1
                same_label = [f for f in facts if _norm(label) in _norm(f.label) or _norm(f.label) in _norm(label)]
                if same_label:
                    check.found_label += 1
                if any(abs(abs(f.value) - value) < 0.5 for f in same_label):
                    check.found_value += 1
                else:
                    misses.append(f"{q['doc_name']}: {label} = {value}")
    return check, misses


HELD_OUT = Path(__file__).with_name("data") / "facts_heldout.jsonl"


def _held_out(facts_of: dict[str, list[Fact]], docs: dict[str, Document]) -> dict[str, object]:
    """Figure questions this project wrote over other filings' statements (gold read by hand from the
    printed statement), after the dev work and before running on them: nothing here was tuned to them."""
    rows = [json.loads(line) for line in HELD_OUT.read_text(encoding="utf-8").splitlines() if line.strip()]
    counts = {"questions": len(rows), "answered": 0, "right": 0, "wrong": 0, "passed_on": 0}
    records = []
    for row in rows:
        facts = facts_of.get(row["doc_name"]) or extract_facts(docs[row["doc_name"]])
        read = read_question(row["question"])
        language = "zh" if re.search(r"[\u4e00-\u9fff]", row["question"]) else "en"
        result = answer_from_facts(read, facts, _PageCites(), language) if read else None
        if not isinstance(result, FactAnswer):
            counts["passed_on"] += 1
            records.append({**row, "miss": getattr(result, "detail", "not a figure question")})
            continue
        right = bool(strict_correct(result.text, row["answer"], row["question"]))
        counts["answered"] += 1
        counts["right" if right else "wrong"] += 1
        records.append({**row, "answer_given": result.text, "right": right})
    return {"summary": counts, "records": records}


TATQA_SAMPLE, TATQA_SEED = 200, 7
# A second sample, drawn with another seed, that no rule was written from: the check that rules generalise.
TATQA_HELDOUT_SEED = 11


def _tatqa_markdown(rows: list[list[str]]) -> str:
    """A TAT-QA table as a pipe table, its header the first row that names a period."""
    from weaverbird_common.facts.cell_periods import period_in_cell

    head = next((i for i, row in enumerate(rows[:4]) if any(period_in_cell(c, "other", None) for c in row[1:])), 0)
    lines = [" ".join(" ".join(r) for r in rows[:head])]
    width = max(len(r) for r in rows)
    for i, row in enumerate(rows[head:]):
        cells = [c.replace("|", "/").strip() for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + "---|" * width)
    return "\n".join(lines)


def tatqa_arithmetic(data: Path, seed: int = TATQA_SEED) -> dict[str, object]:
    """A seeded sample of TAT-QA arithmetic questions answered from their table's facts by row label; and as
    routed (`routed_*`): the task router's choice, then the orchestrator's table path over the question's own
    table as the top passage. That is what is served when the search is narrowed to the report (the question
    names its company); TAT-QA's questions name none, and over its whole KB the table path stays off."""
    import random

    from weaverbird_common.facts.label_question import answer_row
    from weaverbird_orchestrator.domain import Passage, Task
    from weaverbird_orchestrator.table_path import answer_from_tables
    from weaverbird_orchestrator.tasks.router import classify

    contexts = json.loads((data / "tatqa" / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))
    pool = [(c, q) for c in contexts for q in c["questions"]
            if q["answer_type"] == "arithmetic" and q["answer_from"] in ("table", "table-text")]
    random.Random(seed).shuffle(pool)
    counts = {"questions": 0, "answered": 0, "right": 0, "wrong": 0, "passed_on": 0,
              "routed_answered": 0, "routed_right": 0, "routed_wrong": 0}
    for ctx, q in pool[:TATQA_SAMPLE]:
        counts["questions"] += 1
        text = _tatqa_markdown(ctx["table"]["table"])
        doc = Document(ctx["table"]["uid"], "TAT-QA", "tatqa", [Page(None, text)], "en", "", None, None, "")
        try:
            gold: float | None = float(str(q["answer"]).replace(",", ""))
        except ValueError:
            gold = None
        task = classify(q["question"]).task
        if task in (Task.LOOKUP, Task.CALCULATION):
            passage = Passage("table", text, 1.0, ctx["table"]["uid"], "TAT-QA", "tatqa", 0, "local")
            reply = answer_from_tables(q["question"], [passage], "en", lookup=task is Task.LOOKUP)
            if reply is not None:
                counts["routed_answered"] += 1
                answer, like = reply.answer, reply.answer.used[0]
                printed = answer.value if answer.unit in ("percent", "ratio", "times", "days") else (
                    answer.value / (like.scale if like.scale > 0 else 1.0))
                counts["routed_right" if gold is not None and _close(printed, gold) else "routed_wrong"] += 1
        result = answer_row(q["question"], extract_facts(doc))
        if result is None:
            counts["passed_on"] += 1
            continue
        counts["answered"] += 1
        counts["right" if gold is not None and _close(result.value, gold) else "wrong"] += 1
    return counts


def _close(value: float, gold: float) -> bool:
    """TAT-QA's gold rounded to two places: within 1 % (or 0.01)."""
    return abs(value - gold) <= max(0.01 * abs(gold), 0.01)


def run(data: Path, out: Path) -> int:
    root = data / "financebench"
    questions = [json.loads(line) for line in (root / "questions.jsonl").open(encoding="utf-8") if line.strip()]
    docs = _documents(root)
    facts_of = {name: extract_facts(doc) for name, doc in docs.items() if name in {q["doc_name"] for q in questions}}
    check, misses = check_extraction(questions, facts_of)
    by_type: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    records = []
    for q in questions:
        kind = q["question_type"]
        by_type[kind]["questions"] += 1
        read = read_question(q["question"])
        facts = facts_of.get(q["doc_name"], [])
        if read is None or not facts:
            by_type[kind]["passed_on"] += 1
            continue
        result = answer_from_facts(read, facts, _PageCites())
        if not isinstance(result, FactAnswer):
            by_type[kind]["passed_on"] += 1
            records.append({"id": q["financebench_id"], "question": q["question"], "miss": result.detail})
            continue
        right = strict_correct(result.text, q["answer"], q["question"])
        by_type[kind]["answered"] += 1
        by_type[kind]["right" if right else "wrong"] += 1
        records.append({"id": q["financebench_id"], "question": q["question"], "gold": q["answer"],
                        "answer": result.text, "right": bool(right)})
    held_out = _held_out(facts_of, docs)
    tatqa = tatqa_arithmetic(data) if (data / "tatqa").exists() else {}
    tatqa_other = tatqa_arithmetic(data, TATQA_HELDOUT_SEED) if (data / "tatqa").exists() else {}
    summary = {
        "tatqa_arithmetic": tatqa,
        "tatqa_arithmetic_other_seed": tatqa_other,
        "held_out": held_out["summary"],
        "extraction": {"items": check.items, "label_found": check.found_label, "value_found": check.found_value,
                       "misses": misses},
        "answers": {k: dict(v) for k, v in by_type.items()},
        "facts_per_filing": {k: len(v) for k, v in facts_of.items()},
    }
    out.mkdir(parents=True, exist_ok=True)
    report = {"summary": summary, "records": records, "held_out": held_out["records"]}
    (out / "facts.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    total = {k: sum(v.get(k, 0) for v in by_type.values()) for k in ("questions", "answered", "right", "wrong")}
    print(f"extraction: {check.found_value}/{check.items} justification line items found with their value "
          f"({check.found_label} by label)")
    for kind, row in sorted(by_type.items()):
        print(f"{kind:18s} {dict(row)}")
    print(f"all: {total}; strict right {total['right']}/{total['questions']} = "
          f"{total['right'] / max(1, total['questions']):.1%}; wrong shown {total['wrong']}")
    print(f"TAT-QA arithmetic (seeded sample of {TATQA_SAMPLE}, answered by row label; routed_*: router, then the "
          f"table path over the question's own table): {tatqa}")
    print(f"TAT-QA arithmetic (sample of {TATQA_SAMPLE}, seed {TATQA_HELDOUT_SEED}, held out): {tatqa_other}")
    print(f"held-out (project-written, {HELD_OUT.name}): {held_out['summary']}")
    print(f"written: {out / 'facts.json'}")
    return 0
