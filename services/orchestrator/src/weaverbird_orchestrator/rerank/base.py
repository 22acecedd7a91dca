"""What every reranker returns, and the ordering they share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from weaverbird_orchestrator.domain import Passage


class RerankerUnavailable(Exception):
    """The reranker's package or model files are missing here."""


@dataclass(frozen=True)
class Reranked:
    """A passage and the reranker's score for it. `passage.score` stays the retrieval cosine, which
    the route gate compares with c; `rerank_score` only orders (None: not re-scored)."""

    passage: Passage
    rerank_score: float | None


@runtime_checkable
class Reranker(Protocol):
    name: str  # "none", "cross_encoder:<dir>", "embedder:<model id>"

    def score_texts(self, question: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, higher is better; blocking (call it off the event loop)."""
        ...

    def rerank(self, question: str, passages: Sequence[Passage]) -> list[Reranked]:
        """`passages` best first by this reranker's score; ties keep their input order."""
        ...


def order_by_scores(passages: Sequence[Passage], scores: Sequence[float]) -> list[Reranked]:
    if len(scores) != len(passages):
        raise ValueError(f"{len(scores)} scores for {len(passages)} passages")
    # sorted() is stable, so equal scores keep the retrieval order.
    order = sorted(range(len(passages)), key=lambda i: -scores[i])
    return [Reranked(passages[i], float(scores[i])) for i in order]


class ScoringReranker:
    """`rerank` for any reranker that defines `score_texts`."""

    name = "scoring"

    def score_texts(self, question: str, texts: Sequence[str]) -> list[float]:
        raise NotImplementedError

    def passage_text(self, passage: Passage) -> str:
        """What the model reads of a passage (cross-encoders: under its title and heading, as trained)."""
        return passage.text

    def rerank(self, question: str, passages: Sequence[Passage]) -> list[Reranked]:
        if not passages:
            return []
        return order_by_scores(passages, self.score_texts(question, [self.passage_text(p) for p in passages]))


class NoReranker:
    """Identity: the retrieval order, with the cosine as the score. The CPU default."""

    name = "none"

    def score_texts(self, question: str, texts: Sequence[str]) -> list[float]:
        # No score of its own: decreasing values keep the given order.
        return [float(-i) for i in range(len(texts))]

    def rerank(self, question: str, passages: Sequence[Passage]) -> list[Reranked]:
        return [Reranked(p, p.score) for p in passages]
