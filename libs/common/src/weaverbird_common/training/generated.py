"""Questions a language model writes over KB passages: user-like training queries (the InPars / GPL recipe).

Template questions ("What was 3M's accounts receivable in 2022?") are not what users ask, and a reranker
trained on them alone learnt little that carries to real questions (docs/results/training.md). Here a
local model, through any OpenAI-compatible chat endpoint (the generator's llama.cpp server), reads one
passage and writes one question it answers. Slow on a CPU (1-6 s a question with the 1.5B model), so the
writing is its own step (`weaverbird train questions`), appends to a JSONL file as it goes, and resumes
where it stopped; `weaverbird train data --generated FILE` turns the questions into pairs with mined
negatives and the same evaluation leakage gate as every other query.

A written question is kept only if it reads as a question a user could type: one line ending in a
question mark, 5-30 words, no meta wording about "the passage", and no figure of the passage other than a
year, date or span (a question holding its own answer teaches the model to match numbers, not meaning).
The cleaning runs again when pairs are built, on what the model wrote, so a file written before a change
to it is read with the current rules.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from weaverbird_common.periods import QUARTER_RE
from weaverbird_common.training.passages import Passage

# Asked once per passage; greedy decoding, so one passage always gets the same question.
SYSTEM_PROMPT = (
    "You write one question that a financial analyst could ask and that the passage answers. "
    "Ask about what the passage reports (an amount, a change, a reason, a policy). Do not put the answer or "
    "any figure from the passage in the question. Name the company and the period when the passage gives "
    "them. Output only the question, in one line."
)
MAX_PASSAGE_CHARS = 1200  # the passage as the model reads it: ~300 tokens, ~3 s on this CPU
MIN_BODY_WORDS = 25  # shorter chunks (a heading, a lone table row) answer too little to ask about
QUESTION_WORDS = (5, 30)

_META = re.compile(r"(?i)\b(?:passage|text above|the excerpt|provided (?:text|information))\b")
_FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)?")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# Dates and spans name a period, not an answer: "December 31, 2019", "27 May 2019", "the 12 weeks ended",
# "364-day"; so do quarters ("Q4 2018", periods.QUARTER_RE).
_PERIOD_WORDS = re.compile(
    r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|\b\d{1,3}[- ](?:days?|weeks?|months?|years?|quarters?)\b"
)

Ask = Callable[[list[dict[str, str]]], str]


def messages(passage: Passage) -> list[dict[str, str]]:
    """The chat request for one passage: its title and heading line, then the chunk, cut to a budget. A
    document with no known company shows the chunk alone: its title is a file name ("TAT-QA report
    1a2b3c4d"), which the model would otherwise ask about as if it were a company."""
    text = passage.text if passage.company != passage.document_id else passage.body
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"Passage:\n{text[:MAX_PASSAGE_CHARS]}\n\nQuestion:"},
    ]


def clean_question(written: str, passage: Passage) -> str | None:
    """The model's question if a user could have typed it (see the module docstring), else None."""
    lines = [line.strip() for line in written.strip().splitlines() if line.strip()]
    if not lines:
        return None
    question = re.sub(r"^(?:question|q)\s*[:：]\s*", "", lines[0], flags=re.IGNORECASE).strip('"“” ')
    words = len(question.split())
    if not question.endswith(("?", "？")) or not QUESTION_WORDS[0] <= words <= QUESTION_WORDS[1]:
        return None
    if _META.search(question):
        return None
    passage_figures = {f.replace(",", "") for f in _FIGURE.findall(passage.body)}
    for figure in _FIGURE.findall(QUARTER_RE.sub(" ", _PERIOD_WORDS.sub(" ", question))):
        plain = figure.replace(",", "")
        if plain in passage_figures and not _YEAR.match(plain):
            return None
    return question


def sample_passages(passages: Sequence[Passage], count: int, seed: int) -> list[Passage]:
    """A seeded sample of passages with enough text to ask about, spread over documents."""
    fit = [p for p in passages if len(p.body.split()) >= MIN_BODY_WORDS]
    rng = random.Random(f"{seed}:generated")
    rng.shuffle(fit)
    # Round-robin over documents: a 300-page filing must not take the whole sample.
    by_doc: dict[str, list[Passage]] = {}
    for p in fit:
        by_doc.setdefault(p.document_id, []).append(p)
    out: list[Passage] = []
    queues = list(by_doc.values())
    while len(out) < count and queues:
        queues = [q for q in queues if q]
        for q in queues:
            if len(out) >= count:
                break
            out.append(q.pop())
    return out


def read_generated(path: Path) -> list[dict[str, Any]]:
    """The records a `train questions` run wrote (none when the file does not exist yet)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_questions(
    passages: Sequence[Passage], ask: Ask, out: Path, model: str, skip: set[str] | None = None
) -> Iterator[dict[str, Any]]:
    """Asks for one question per passage, appending each record to `out` as it comes (so a stopped run
    loses nothing); passages whose id is in `skip` (already written) are not asked again. Yields each
    record, kept or not, for progress."""
    skip = skip or set()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        for p in passages:
            if p.id in skip:
                continue
            written = ask(messages(p))
            question = clean_question(written, p)
            record = {
                "passage_id": p.id,
                "document_id": p.document_id,
                "page": p.page,
                "written": written.strip(),
                "query": question,  # None: rejected by clean_question
                "model": model,
            }
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()
            yield record
