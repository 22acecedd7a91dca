"""Sentences that travel between services and must read the same wherever they are written.

The generator's prompt tells the model to answer with INSUFFICIENT when the passages are not enough,
and the orchestrator writes the very same sentence when it refuses on its own (a failed figure check,
no passages), so clients and evaluations recognise one refusal per language.
"""

from __future__ import annotations

INSUFFICIENT: dict[str, str] = {
    "en": "The provided information is insufficient to answer this question.",
    "zh": "根据所提供的资料，无法回答该问题。",
}


def insufficient(language: str) -> str:
    """The refusal sentence in `language`, English for a language without one."""
    return INSUFFICIENT.get(language, INSUFFICIENT["en"])


def says_insufficient(text: str) -> bool:
    """Whether `text` contains the refusal sentence of either language (its final stop optional)."""
    return any(sentence.rstrip(".。") in text for sentence in INSUFFICIENT.values())
