"""(query, positive, hard negatives) pairs from KB documents: seeded, deduplicated, with provenance,
and no evaluation question among the queries."""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from weaverbird_common.docs.documents import Document
from weaverbird_common.docs.text_units import CJK_RE
from weaverbird_common.facts.extract import extract_facts
from weaverbird_common.training.generated import clean_question
from weaverbird_common.training.leakage import EvaluationGuard, normalise
from weaverbird_common.training.negatives import NegativeMiner
from weaverbird_common.training.passages import Passage, document_passages
from weaverbird_common.training.questions import Question, fact_questions, heading_question, inverse_cloze


@dataclass
class TrainingPair:
    query: str
    language: str
    kind: str  # "table-row" | "heading" | "inverse-cloze" | "generated"
    positive: str
    negatives: list[str]
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> TrainingPair:
        return cls(**json.loads(line))


@dataclass(frozen=True)
class Limits:
    facts_per_document: int = 40
    prose_per_document: int = 20
    negatives: int = 3


@dataclass
class _Draft:
    question: Question
    kind: str
    positive: Passage
    positive_text: str
    label: str
    provenance: dict[str, Any]
    twin: int = -1  # a Chinese question mines with its English twin's BM25 ranking


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


def _fact_drafts(
    doc: Document,
    on_page: dict[int, list[int]],
    passages: list[Passage],
    miner: NegativeMiner,
    limits: Limits,
    rng: random.Random,
) -> list[_Draft]:
    rows: dict[tuple[str, str], tuple[Any, int]] = {}
    for fact in extract_facts(doc):
        label = _squash(fact.label).strip()
        holder = next((i for i in on_page.get(fact.page or 0, []) if label and label in _squash(passages[i].body)), -1)
        if holder < 0:
            continue
        miner.add_line_item(fact.label, holder)
        rows.setdefault((label, fact.period.label()), (fact, holder))
    picked = sorted(rows.values(), key=lambda r: (r[0].page or 0, r[0].label, r[0].period.label()))
    rng.shuffle(picked)
    picked.sort(key=lambda r: not r[0].concept)  # known line items first, in shuffled order
    drafts: list[_Draft] = []
    used = 0
    for fact, holder in picked:
        questions = fact_questions(fact, rng)
        if not questions:
            continue
        if used >= limits.facts_per_document:
            break
        used += 1
        provenance = {
            "document_id": doc.document_id,
            "title": doc.title,
            "page": fact.page or 0,
            "passage_id": passages[holder].id,
            "label": fact.label,
            "concept": fact.concept,
            "period": fact.period.label(),
            "value": fact.value,
        }
        first = len(drafts)
        for question in questions:
            twin = first if question.language != "en" else -1
            drafts.append(
                _Draft(
                    question,
                    "table-row",
                    passages[holder],
                    passages[holder].text,
                    fact.label,
                    {**provenance, "template": question.template},
                    twin,
                )
            )
    return drafts


def _prose_drafts(
    doc: Document, mine: list[int], passages: list[Passage], limits: Limits, rng: random.Random
) -> list[_Draft]:
    drafts: list[_Draft] = []
    order = list(mine)
    rng.shuffle(order)
    for i in order:
        if len(drafts) >= limits.prose_per_document:
            break
        p = passages[i]
        provenance = {"document_id": doc.document_id, "title": doc.title, "page": p.page, "passage_id": p.id}
        if (q := heading_question(doc.company, p.heading)) is not None and rng.random() < 0.3:
            drafts.append(_Draft(q, "heading", p, p.text, "", {**provenance, "template": q.template}))
        elif (cloze := inverse_cloze(p.body, rng)) is not None:
            q, rest = cloze
            head = p.text[: len(p.text) - len(p.body)]  # title / heading line above the body
            drafts.append(_Draft(q, "inverse-cloze", p, head + rest, "", {**provenance, "template": q.template}))
    return drafts


def _generated_drafts(generated: Sequence[dict[str, Any]], passages: list[Passage]) -> list[_Draft]:
    """Drafts from `train questions` records (training/generated.py) whose passage is in this KB, the
    model's text cleaned again with the current rules."""
    index = {p.id: p for p in passages}
    drafts: list[_Draft] = []
    for record in generated:
        p = index.get(record.get("passage_id", ""))
        query = clean_question(record.get("written", ""), p) if p is not None else None
        if p is None or query is None:
            continue
        language = "zh" if CJK_RE.search(query) else "en"
        provenance = {
            "document_id": p.document_id,
            "title": p.title,
            "page": p.page,
            "passage_id": p.id,
            "template": "generated",
            "model": record.get("model", ""),
        }
        drafts.append(_Draft(Question(query, language, "generated"), "generated", p, p.text, "", provenance))
    return drafts


def build_pairs(
    documents: Iterable[Document],
    guard: EvaluationGuard,
    seed: int = 13,
    limits: Limits | None = None,
    generated: Sequence[dict[str, Any]] = (),
) -> tuple[list[TrainingPair], dict[str, Any]]:
    """Pairs and counts (made, dropped as evaluation near copies, dropped as duplicates, by kind).
    `generated`: questions a model wrote over these documents' passages (`read_generated`)."""
    limits = limits or Limits()
    docs = list(documents)
    passages = document_passages(docs)
    miner = NegativeMiner(passages)
    by_doc: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, p in enumerate(passages):
        by_doc[p.document_id][p.page].append(i)
    drafts: list[_Draft] = []
    for doc in docs:
        rng = random.Random(f"{seed}:{doc.document_id}")  # a document's pairs do not depend on the others
        on_page = by_doc.get(doc.document_id, {})
        start = len(drafts)
        facts = _fact_drafts(doc, on_page, passages, miner, limits, rng)
        for d in facts:
            if d.twin >= 0:
                d.twin += start
        drafts += facts
        drafts += _prose_drafts(doc, [i for rows in on_page.values() for i in rows], passages, limits, rng)
    drafts += _generated_drafts(generated, passages)
    stats: Counter[str] = Counter()
    english = [i for i, d in enumerate(drafts) if d.twin < 0]
    rankings = dict(zip(english, miner.search([drafts[i].question.text for i in english]), strict=True))
    pairs: list[TrainingPair] = []
    seen: set[str] = set()
    for i, d in enumerate(drafts):
        key = normalise(d.question.text)
        if key in seen:
            stats["dropped: duplicate query"] += 1
            continue
        if guard.leak(d.question.text) is not None:
            stats["dropped: evaluation near copy"] += 1
            continue
        seen.add(key)
        rng = random.Random(f"{seed}:{i}")
        negatives = miner.pick(d.positive, rankings[d.twin if d.twin >= 0 else i], d.label, limits.negatives, rng)
        if not negatives:
            stats["dropped: no negative"] += 1
            continue
        provenance = {
            **d.provenance,
            "seed": seed,
            "positive": d.positive.id,
            "negatives": [{"passage_id": p.id, "why": why} for p, why in negatives],
        }
        pairs.append(
            TrainingPair(
                d.question.text,
                d.question.language,
                d.kind,
                d.positive_text,
                [p.text for p, _ in negatives],
                provenance,
            )
        )
        stats[f"pairs: {d.kind} {d.question.language}"] += 1
    stats["passages"] = len(passages)
    stats["documents"] = len(docs)
    stats["pairs"] = len(pairs)
    guard.check([p.query for p in pairs])  # the gate: fails the run, whatever the filtering above did
    return pairs, dict(sorted(stats.items()))


def write_pairs(pairs: Sequence[TrainingPair], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(p.to_json() + "\n" for p in pairs), encoding="utf-8")


def read_pairs(path: Path, guard: EvaluationGuard | None = None) -> list[TrainingPair]:
    """Pairs of a `train data` file; with `guard`, the leakage gate runs again before any training."""
    pairs = [TrainingPair.from_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not pairs:
        raise ValueError(f"{path}: no training pairs")
    if guard is not None:
        guard.check([p.query for p in pairs])
    return pairs
