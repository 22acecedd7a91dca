"""The generator peer for evaluations: a task's prompt sent straight to an OpenAI-compatible server."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from weaverbird_generator.context_focus import focus
from weaverbird_generator.llm_client import ChatClient
from weaverbird_generator.prompt import Passage as PromptPassage
from weaverbird_generator.tasks import TaskRequest, task_module
from weaverbird_orchestrator.domain import Example, GenerationDone, Passage, PromptPrepared, Turn


@dataclass
class Call:
    """One model call as an evaluation reports it."""

    task: str
    text: str
    seconds: float
    prompt_tokens: int
    completion_tokens: int


class ChatGenerator:
    """The generator peer without gRPC: the task's prompt module and the LLM client, as the generator
    service runs them, for evaluations that call the orchestrator's task code straight against an
    OpenAI-compatible server. last_text keeps the latest reply whole, `calls` every call made.

    context_budget > 0 applies the service's context focus to the tasks that use it (0: no focus).
    Temperature 0 is sent as 0 (greedy); the service would send its default instead.
    """

    def __init__(
        self, base_url: str | ChatClient, timeout_s: float = 180.0, *, context_budget: int = 0, source: str = ""
    ) -> None:
        self._client = base_url if isinstance(base_url, ChatClient) else ChatClient(base_url, timeout_s=timeout_s)
        self._context_budget = context_budget
        self._source = source  # GenerationDone.source of the replies
        self.last_text = ""
        self.calls: list[Call] = []

    async def generate(
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
    ) -> AsyncIterator[str | PromptPrepared | GenerationDone]:
        module = task_module(task)
        numbered = [PromptPassage(i, p.title, p.text, p.source) for i, p in enumerate(passages, 1)]
        if module.FOCUS and self._context_budget:
            numbered = focus(question, numbered, self._context_budget)
        messages = module.build_messages(
            TaskRequest(
                question=question,
                passages=numbered,
                language=language,  # type: ignore[arg-type]
                examples=examples,
                instruction=instruction,
                history=history,
            )
        )
        started, parts = time.perf_counter(), []
        done = GenerationDone("stop", 0, 0, self._source)
        async for delta in self._client.stream(
            messages, max_tokens=max_tokens or module.MAX_TOKENS, temperature=temperature
        ):
            if delta.is_final:
                done = GenerationDone(
                    delta.finish_reason or "stop", delta.prompt_tokens or 0, delta.completion_tokens or 0, self._source
                )
            elif delta.text:
                parts.append(delta.text)
                yield delta.text
        self.last_text = "".join(parts)
        seconds = time.perf_counter() - started
        self.calls.append(Call(task, self.last_text, seconds, done.prompt_tokens, done.completion_tokens))
        yield done
