"""One whole (non-streamed) generator call for a task step: the steps parse the model's full output."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from weaverbird_orchestrator.domain import Example, GenerationDone, Passage, PromptPrepared, Turn


class Generator(Protocol):
    def generate(
        self,
        question: str,
        passages: list[Passage],
        language: str,
        temperature: float,
        max_tokens: int,
        *,
        task: str = "",
        examples: Sequence[Example] = (),
        instruction: str = "",
        history: Sequence[Turn] = (),
    ) -> AsyncIterator[str | PromptPrepared | GenerationDone]: ...


@dataclass(frozen=True)
class Completion:
    text: str
    done: GenerationDone
    prompt: PromptPrepared | None


async def complete(
    generator: Generator,
    task: str,
    question: str,
    passages: Sequence[Passage] = (),
    language: str = "en",
    *,
    examples: Sequence[Example] = (),
    instruction: str = "",
    history: Sequence[Turn] = (),
    max_tokens: int = 0,
) -> Completion:
    """Runs one task prompt to the end (greedy) and returns its whole text."""
    parts: list[str] = []
    done = GenerationDone("unknown", 0, 0, "")
    prompt: PromptPrepared | None = None
    async for item in generator.generate(
        question,
        list(passages),
        language,
        0.0,
        max_tokens,
        task=task,
        examples=examples,
        instruction=instruction,
        history=history,
    ):
        if isinstance(item, GenerationDone):
            done = item
        elif isinstance(item, PromptPrepared):
            prompt = item
        else:
            parts.append(item)
    return Completion("".join(parts), done, prompt)
