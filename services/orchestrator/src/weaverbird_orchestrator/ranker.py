"""Merges local and web passages into one ranking, dropping duplicates."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from weaverbird_orchestrator.domain import Passage


def _fingerprint(text: str) -> str:
    # Whitespace-insensitive: the same paragraph seen on two pages, or twice in the KB, counts once.
    return hashlib.sha1(" ".join(text.split()).lower().encode()).hexdigest()


def rank(*groups: Iterable[Passage]) -> list[Passage]:
    """Orders passages by cosine similarity, best first, keeping the best copy of duplicate texts.

    Local and web scores come from the same encoder, so they are directly comparable.
    """
    best: dict[str, Passage] = {}
    for group in groups:
        for passage in group:
            key = _fingerprint(passage.text)
            if key not in best or passage.score > best[key].score:
                best[key] = passage
    return sorted(best.values(), key=lambda p: p.score, reverse=True)
