"""What a question carries besides its passages, on its way from the orchestrator to the generator:
the earlier turns of the conversation and the worked examples of a task prompt. One definition, so
code that runs the generator's prompts in the orchestrator's process (evaluation) passes them as they are."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    """One earlier turn of a conversation (client-held history)."""

    role: str  # "user" | "assistant"
    text: str


@dataclass(frozen=True)
class Example:
    """A worked example for a task prompt (few-shot)."""

    question: str
    answer: str
