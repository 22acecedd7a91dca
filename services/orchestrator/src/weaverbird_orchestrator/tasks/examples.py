"""Few-shot example banks, one JSONL file per task under tasks/data/examples/, and the choice of the
examples most similar to a question (same task and language).

Similarity is the cosine of character bigram counts of the questions (the request part after the
example's own passages): it works for Chinese without segmentation, needs no model call, and picks the
example of the same kind of calculation or extraction ("growth rate", "占净值比例") first."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from weaverbird_orchestrator.domain import Example, Task

_INFORMATION = re.compile(r"<information>.*?</information>", re.DOTALL)


def _request_part(question: str) -> str:
    """What an example asks, without its passages (those vary and would dominate the similarity)."""
    return _INFORMATION.sub(" ", question).strip().lower()


def _bigrams(text: str) -> Counter[str]:
    text = re.sub(r"\s+", " ", text)
    return Counter(text[i : i + 2] for i in range(len(text) - 1))


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(v * b[k] for k, v in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


@dataclass(frozen=True)
class _Entry:
    example: Example
    language: str
    grams: Counter[str]


class ExampleBank:
    """Worked examples per task, chosen by similarity to the question."""

    def __init__(self, entries: dict[Task, list[_Entry]]) -> None:
        self._entries = entries

    @classmethod
    def from_lines(cls, lines_by_task: dict[Task, Sequence[str]]) -> ExampleBank:
        entries: dict[Task, list[_Entry]] = {}
        for task, lines in lines_by_task.items():
            for line in lines:
                if not line.strip():
                    continue
                row = json.loads(line)
                example = Example(row["question"], row["answer"])
                grams = _bigrams(_request_part(row["question"]))
                entries.setdefault(task, []).append(_Entry(example, row["language"], grams))
        return cls(entries)

    def count(self, task: Task, language: str) -> int:
        return sum(1 for e in self._entries.get(task, []) if e.language == language)

    def select(self, task: Task, language: str, question: str, k: int) -> list[Example]:
        """The k examples of this task and language most similar to the question, most similar first
        (ties keep the file's order, so the choice is deterministic)."""
        grams = _bigrams(question.lower())
        same = [e for e in self._entries.get(task, []) if e.language == language]
        ranked = sorted(enumerate(same), key=lambda ie: (-_cosine(grams, ie[1].grams), ie[0]))
        return [e.example for _, e in ranked[:k]]


@cache
def default_bank() -> ExampleBank:
    """The banks shipped in the package (a task without a file has no examples)."""
    folder = resources.files("weaverbird_orchestrator.tasks") / "data" / "examples"
    lines: dict[Task, Sequence[str]] = {}
    for task in Task:
        path = folder / f"{task.value}.jsonl"
        if path.is_file():
            lines[task] = path.read_text(encoding="utf-8").splitlines()
    return ExampleBank.from_lines(lines)
