"""Evaluation questions never become training queries: exact or near copies (normalised text, or most
of the tokens shared) are dropped while generating and fail the run if any reach the written data."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# A query sharing this much of its tokens (Jaccard over word / CJK-character tokens) with an evaluation
# question is a near copy: templates like "What was X's revenue in FY2017?" reach ~0.6 with a
# different company or year, so only the same question reworded or re-punctuated passes 0.8.
NEAR_COPY_OVERLAP = 0.8
_TOKEN = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]")
_FILLER = frozenset({"the", "a", "an", "of", "in", "for", "was", "were", "is", "what", "did", "how", "much", "s"})


class LeakageError(RuntimeError):
    """Training queries include evaluation questions."""


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(_TOKEN.findall(text))


def tokens(text: str) -> frozenset[str]:
    return frozenset(t for t in _TOKEN.findall(unicodedata.normalize("NFKC", text).lower()) if t not in _FILLER)


@dataclass(frozen=True)
class Leak:
    query: str
    question: str
    overlap: float


class EvaluationGuard:
    """Finds evaluation questions among candidate queries: exact after normalising, or near by overlap.
    An inverted index over tokens keeps the check linear in practice (tens of thousands of each)."""

    def __init__(self, questions: Iterable[str], threshold: float = NEAR_COPY_OVERLAP) -> None:
        self.threshold = threshold
        self.questions = [q for q in dict.fromkeys(questions) if q.strip()]
        self._exact = {normalise(q): q for q in self.questions}
        self._tokens = [tokens(q) for q in self.questions]
        self._index: dict[str, list[int]] = {}
        for i, toks in enumerate(self._tokens):
            for tok in toks:
                self._index.setdefault(tok, []).append(i)

    def __len__(self) -> int:
        return len(self.questions)

    def leak(self, query: str) -> Leak | None:
        exact = self._exact.get(normalise(query))
        if exact is not None:
            return Leak(query, exact, 1.0)
        mine = tokens(query)
        if not mine:
            return None
        shared: dict[int, int] = {}
        for tok in mine:
            for i in self._index.get(tok, ()):
                shared[i] = shared.get(i, 0) + 1
        best, best_i = 0.0, -1
        for i, n in shared.items():
            overlap = n / len(mine | self._tokens[i])
            if overlap > best:
                best, best_i = overlap, i
        return Leak(query, self.questions[best_i], best) if best >= self.threshold else None

    def check(self, queries: Sequence[str]) -> None:
        """Raises LeakageError naming the first leaks: the gate on data about to be trained on."""
        leaks = [leak for q in queries if (leak := self.leak(q)) is not None]
        if leaks:
            shown = "; ".join(f"{lk.query!r} ~ {lk.question!r} ({lk.overlap:.2f})" for lk in leaks[:3])
            raise LeakageError(f"{len(leaks)} training queries are evaluation questions or near copies: {shown}")
