"""What every task prompt is built from, and the pieces they share (passages, examples, history)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from weaverbird_generator.prompt import Language, Passage, format_passages, neutralise


@dataclass(frozen=True)
class Example:
    question: str
    answer: str


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant"
    text: str


@dataclass(frozen=True)
class TaskRequest:
    question: str
    passages: Sequence[Passage]
    language: Language
    examples: Sequence[Example] = ()
    instruction: str = ""
    history: Sequence[Turn] = field(default_factory=tuple)


def information_block(passages: Sequence[Passage], language: Language) -> str:
    """The numbered passages inside <information>, or a note that there are none."""
    if not passages:
        return "<information>\n(none)\n</information>" if language == "en" else "<information>\n（无）\n</information>"
    return f"<information>\n{format_passages(passages)}\n</information>"


def example_turns(examples: Sequence[Example]) -> list[dict[str, str]]:
    """Few-shot examples as earlier user/assistant turns: small models copy a format best from turns."""
    turns: list[dict[str, str]] = []
    for e in examples:
        turns.append({"role": "user", "content": neutralise(e.question).strip()})
        turns.append({"role": "assistant", "content": e.answer.strip()})
    return turns


def history_text(history: Sequence[Turn], max_turns: int = 6) -> str:
    """The last turns of a conversation as "user: ..." lines (untrusted text, neutralised)."""
    lines = [f"{t.role}: {' '.join(neutralise(t.text).split())}" for t in history[-max_turns:]]
    return "\n".join(lines)
