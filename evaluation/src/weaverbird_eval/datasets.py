"""The three evaluation sets, read by path from the shared data folder (never copied into the repo).

Every set is a corpus of *units* (what a relevance judgement names: a filing page, a TAT-QA table or
paragraph, a Fin-Eva context) and queries that name their relevant units. The system chunks units
itself, so a retrieved chunk counts for the unit it came from.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# Where the evaluations read the shared data and write their reports (paths from the repository root).
DEFAULT_DATA = Path("..") / "shared" / "data"
DEFAULT_OUT = Path("benchmarks") / "results" / "eval"


@dataclass(frozen=True)
class Unit:
    id: str
    title: str  # what the system embeds above the chunk (filing name, report id, ...)
    text: str


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    relevant: frozenset[str]  # unit ids
    # Dataset-specific extras the answer evaluation needs (FinanceBench answer, evidence, ...).
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    # The kind of question within its set (Fin-Eva file, TAT-QA answer source, FinanceBench question type):
    # the retrieval report breaks its metrics down by it, since one kind can hold most of the misses.
    part: str = ""


@dataclass
class EvalSet:
    name: str
    language: str  # "en" or "zh": picks BM25 tokenisation and the prompt language
    units: list[Unit]
    queries: list[Query]
    note: str = ""  # how the corpus was cut, when it was
    corpus_name: str = ""  # sets over the same corpus share its cached embeddings (default: the name)

    @property
    def corpus_label(self) -> str:
        """Cache key of the corpus's embeddings: its name and size."""
        return f"{self.corpus_name or self.name}-{len(self.units)}"

    def __post_init__(self) -> None:
        ids = {u.id for u in self.units}
        missing = [q.id for q in self.queries if not q.relevant <= ids]
        if missing:
            raise ValueError(f"{self.name}: queries name units outside the corpus: {missing[:3]}")


def is_held_out(query_id: str) -> bool:
    """Stable half split: held-out pairs set c, the other half ("dev") measures it. By hash, so a
    query's side never changes when the corpus or the order of rows does."""
    return hashlib.sha1(query_id.encode()).digest()[0] % 2 == 0


def financebench(data: Path, max_pages: int | None = None, seed: int = 7) -> EvalSet:
    """`pages.jsonl` as the corpus (a unit per page), `questions.jsonl` as queries.

    `max_pages` keeps every evidence page plus a seeded random sample of the other pages, for
    backends too slow to embed all ~10k pages; the cut is recorded in `note`.
    """
    root = data / "financebench"
    questions = [json.loads(line) for line in (root / "questions.jsonl").open(encoding="utf-8") if line.strip()]
    evidence = {_page_id(e["doc_name"], e["evidence_page_num"]) for q in questions for e in q["evidence"]}
    units = []
    for line in (root / "pages.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if row["text"].strip():
            units.append(Unit(_page_id(row["doc_name"], row["page_num"]), row["doc_name"], row["text"]))
    note = f"{len(units)} pages"
    if max_pages is not None and max_pages < len(units):
        gold = [u for u in units if u.id in evidence]
        rest = [u for u in units if u.id not in evidence]
        random.Random(seed).shuffle(rest)
        units = gold + rest[: max(0, max_pages - len(gold))]
        note = f"{len(units)} of {note}: all evidence pages + a seeded sample"
    kept = {u.id for u in units}
    queries = []
    for q in questions:
        relevant = frozenset(_page_id(e["doc_name"], e["evidence_page_num"]) for e in q["evidence"]) & kept
        if relevant:  # a few evidence pages are empty scans
            queries.append(
                Query(q["financebench_id"], q["question"], relevant, extra=q, part=q.get("question_type", ""))
            )
    return EvalSet("financebench", "en", units, queries, note)


FRESH_QUESTIONS = Path(__file__).with_name("data") / "retrieval_fresh.jsonl"


def financebench_fresh(data: Path) -> EvalSet:
    """Questions this project wrote over the FinanceBench filings (none of FinanceBench's own, EN and ZH),
    after the glossary's first version and before looking at any result on them: a check that what was
    built on the FinanceBench questions holds on others. The whole FinanceBench corpus is the KB; a
    question's relevant pages are those of its filing holding every `page_has` pattern (the statement's
    title and its line items), so the gold is defined by the text, not picked by hand."""
    corpus = financebench(data)
    by_doc: dict[str, list[Unit]] = {}
    for unit in corpus.units:
        by_doc.setdefault(unit.title, []).append(unit)
    queries = []
    for line in FRESH_QUESTIONS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        patterns = [re.compile(p, re.IGNORECASE) for p in row["page_has"]]
        relevant = frozenset(u.id for u in by_doc.get(row["doc_name"], []) if all(p.search(u.text) for p in patterns))
        if not relevant:
            raise ValueError(f"{row['id']}: no page of {row['doc_name']} holds {row['page_has']}")
        queries.append(Query(row["id"], row["question"], relevant, extra=row))
    return EvalSet("financebench-fresh", "en", corpus.units, queries, corpus.note, corpus_name="financebench")


def _page_id(doc_name: str, page_num: int) -> str:
    return f"{doc_name}#p{page_num + 1}"  # 1-based, as the PDF loader and citations number pages


def tatqa(data: Path) -> EvalSet:
    """TAT-QA dev: each context's table and paragraphs are units; relevant = `rel_paragraphs`, plus
    the table when the answer comes from it (`answer_from` table or table-text)."""
    contexts = json.loads((data / "tatqa" / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))
    units: list[Unit] = []
    queries: list[Query] = []
    for ctx in contexts:
        uid = ctx["table"]["uid"]
        title = f"TAT-QA report {uid[:8]}"
        units.append(Unit(f"{uid}#table", title, _table_text(ctx["table"]["table"])))
        for p in ctx["paragraphs"]:
            units.append(Unit(f"{uid}#p{p['order']}", title, p["text"]))
        for q in ctx["questions"]:
            relevant = {f"{uid}#p{order}" for order in q.get("rel_paragraphs", [])}
            if q.get("answer_from") in ("table", "table-text"):
                relevant.add(f"{uid}#table")
            if relevant:
                queries.append(
                    Query(q["uid"], q["question"], frozenset(relevant), extra=q, part=q.get("answer_from", ""))
                )
    return EvalSet("tatqa", "en", units, queries, f"{len(contexts)} dev contexts")


def _table_text(rows: list[list[str]]) -> str:
    # Markdown pipe rows, as the loaders write an HTML or Markdown table: the form the chunker keeps whole
    # (before 2026-11-29 the rows had no outer pipes, and 151 of 278 tables were read partly as prose).
    return "\n".join("| " + " | ".join(" ".join(cell.split()) for cell in row) + " |" for row in rows)


FINEVA_FILES = (
    "financial_event_interpretation.csv",
    "financial_product_analysis.csv",
    "financial_document_extraction.csv",
)


def fineva(data: Path) -> EvalSet:
    """Fin-Eva (Chinese): every question against all contexts of the three files; relevant = its own."""
    units: dict[str, Unit] = {}
    queries = []
    for name in FINEVA_FILES:
        with (data / "fineva" / name).open(encoding="utf-8-sig", newline="") as fh:
            for row in csv.DictReader(fh):
                context, question = row["context"].strip(), row["question"].strip()
                if not context or not question:
                    continue
                cid = "ctx-" + hashlib.sha1(context.encode()).hexdigest()[:12]
                units.setdefault(cid, Unit(cid, "", context))
                stem = name.split(".")[0]
                queries.append(Query(f"{stem}:{row['id']}", question, frozenset({cid}), extra=row, part=stem))
    return EvalSet("fineva", "zh", list(units.values()), queries, f"{len(units)} distinct contexts")


LOADERS: dict[str, Callable[..., EvalSet]] = {
    "financebench": financebench,
    "tatqa": tatqa,
    "fineva": fineva,
    "financebench-fresh": financebench_fresh,
}


def load(name: str, data: Path, max_pages: int | None = None) -> EvalSet:
    if name not in LOADERS:
        raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(LOADERS)}")
    if name == "financebench":
        return financebench(data, max_pages=max_pages)
    return LOADERS[name](data)
