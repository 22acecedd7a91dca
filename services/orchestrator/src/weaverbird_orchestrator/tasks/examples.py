"""Few-shot example banks, one JSONL file per task under tasks/data/examples/ (lookup, calculation,
extraction, analysis; each line {"language": "en"|"zh", "question": ..., "answer": ...}), and the choice
of the examples most similar to a question (same task and language).

Similarity is the cosine of character bigram counts of the questions (the request part after the
example's own passages), each bigram weighted by its inverse document frequency within the task and
language (so "What was the" and "是多少" weigh little and "audit" or "占净值比例" much): it works for
Chinese without segmentation, needs no model call, and picks the example of the same kind of lookup,
calculation or extraction first.

Each example carries its own tiny passage about an invented company with odd figures (issue 11): a
figure a model copies from an example into a real answer is then found in no real passage and caught.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from weaverbird_orchestrator.domain import Example, Task

log = logging.getLogger(__name__)

LANGUAGES = ("en", "zh")
_INFORMATION = re.compile(r"<information>.*?</information>", re.DOTALL)


def request_part(question: str) -> str:
    """What an example asks, without its passages (those vary and would dominate the similarity)."""
    return _INFORMATION.sub(" ", question).strip()


def _bigrams(text: str) -> Counter[str]:
    text = " ".join(text.lower().split())
    return Counter(text[i : i + 2] for i in range(len(text) - 1))


@dataclass(frozen=True)
class _Entry:
    example: Example
    language: str
    grams: Counter[str]


def _entry(row: object) -> _Entry:
    """One bank line as an entry; ValueError when it lacks a field or names another language."""
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    language, question, answer = row.get("language"), row.get("question"), row.get("answer")
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    if not isinstance(question, str) or not question.strip() or not isinstance(answer, str) or not answer.strip():
        raise ValueError("question and answer must be non-empty strings")
    return _Entry(Example(question, answer), language, _bigrams(request_part(question)))


def _norm(vector: Mapping[str, float]) -> float:
    return math.sqrt(sum(v * v for v in vector.values()))


class _Pool:
    """The examples of one task and language, as idf-weighted bigram vectors."""

    def __init__(self, entries: list[_Entry]) -> None:
        df = Counter(g for e in entries for g in e.grams)
        n = len(entries)
        self._idf = {g: math.log((n + 1) / (count + 1)) + 1 for g, count in df.items()}
        self.examples = [e.example for e in entries]
        self._vectors = [self.weigh(e.grams) for e in entries]
        self._norms = [_norm(v) for v in self._vectors]

    def weigh(self, grams: Counter[str]) -> dict[str, float]:
        # A bigram no example has cannot match; its weight only scales the query's norm, for every example alike.
        return {g: count * self._idf.get(g, 1.0) for g, count in grams.items()}

    def ranked(self, question: str) -> list[Example]:
        query = self.weigh(_bigrams(request_part(question)))
        query_norm = _norm(query)

        def similarity(i: int) -> float:
            vector, norm = self._vectors[i], self._norms[i]
            dot = sum(v * vector.get(g, 0.0) for g, v in query.items())
            return dot / (query_norm * norm) if query_norm and norm else 0.0

        # Ties keep the file's order, so the choice is deterministic.
        order = sorted(range(len(self.examples)), key=lambda i: (-similarity(i), i))
        return [self.examples[i] for i in order]


class ExampleBank:
    """Worked examples per task: the first ones of a bank (a prompt prefix that never varies, so the model
    server caches it) or the ones most similar to the question."""

    def __init__(self, entries: Mapping[Task, list[_Entry]]) -> None:
        self._pools = {
            (task, language): _Pool([e for e in task_entries if e.language == language])
            for task, task_entries in entries.items()
            for language in LANGUAGES
        }

    @classmethod
    def from_lines(cls, lines_by_task: Mapping[Task, Iterable[str]], origin: str = "bank") -> ExampleBank:
        """Parses JSONL lines per task. A bad line is skipped with a warning rather than taking every task's
        examples down (tests/unit/orchestrator/test_task_examples.py checks the shipped banks have none)."""
        entries: dict[Task, list[_Entry]] = {}
        for task, lines in lines_by_task.items():
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    entries.setdefault(task, []).append(_entry(json.loads(line)))
                except ValueError as exc:  # json.JSONDecodeError is a ValueError
                    log.warning("%s %s.jsonl line %d skipped: %s", origin, task.value, number, exc)
        return cls(entries)

    def count(self, task: Task, language: str) -> int:
        pool = self._pools.get((task, language))
        return len(pool.examples) if pool else 0

    def first(self, task: Task, language: str, k: int) -> list[Example]:
        """The first k examples of this task and language in the bank's order: the same for every question."""
        pool = self._pools.get((task, language))
        return pool.examples[: max(k, 0)] if pool else []

    def select(self, task: Task, language: str, question: str, k: int) -> list[Example]:
        """The k examples of this task and language most similar to the question, most similar first."""
        pool = self._pools.get((task, language))
        if k <= 0 or pool is None:
            return []
        return pool.ranked(question)[:k]


def load_bank(root: Traversable | Path | None = None) -> ExampleBank:
    """The banks in a folder (default: the package's tasks/data/examples), one <task>.jsonl per task; a
    task without a file has no examples."""
    folder = root if root is not None else resources.files("weaverbird_orchestrator.tasks") / "data" / "examples"
    lines: dict[Task, list[str]] = {}
    for task in Task:
        path = folder / f"{task.value}.jsonl"
        if path.is_file():
            lines[task] = path.read_text(encoding="utf-8").splitlines()
    return ExampleBank.from_lines(lines, origin=str(folder))


@cache
def default_bank() -> ExampleBank:
    """The banks shipped in the package, read once."""
    return load_bank()
