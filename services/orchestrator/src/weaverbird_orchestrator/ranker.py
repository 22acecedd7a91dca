"""Merges local and web passages into one ranking, dropping duplicates."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from weaverbird_orchestrator.domain import Passage


def _fingerprint(text: str) -> str:
    # Whitespace-insensitive: the same paragraph seen on two pages, or twice in the KB, counts once.
    return hashlib.sha1(" ".join(text.split()).lower().encode()).hexdigest()


def best_cosine(passages: Sequence[Passage]) -> float:
    """Highest cosine among passages (-1 when there are none): the number the route threshold c is on.

    Hybrid retrieval orders hits by fused rank, so the first hit need not have the highest cosine."""
    return max((p.score for p in passages), default=-1.0)


def _dedupe(passages: Iterable[Passage]) -> list[Passage]:
    best: dict[str, Passage] = {}
    for passage in passages:
        key = _fingerprint(passage.text)
        if key not in best or passage.score > best[key].score:
            best[key] = passage
    return list(best.values())


def rank(local: Iterable[Passage], web: Iterable[Passage] = ()) -> list[Passage]:
    """One ranking, keeping the best copy of duplicate texts.

    Local passages alone keep the retriever's order (hybrid fusion, or the reranker's). With web
    passages, which have no lexical leg, both are ordered by cosine: they come from the same encoder,
    so their cosines are directly comparable.
    """
    local, web = list(local), list(web)
    if not web:
        kept = {id(p) for p in _dedupe(local)}
        return [p for p in local if id(p) in kept]
    return sorted(_dedupe([*local, *web]), key=lambda p: p.score, reverse=True)
