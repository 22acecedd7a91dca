"""The generator peer for evaluations: a task's prompt sent straight to an OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from weaverbird_generator.llm_client import ChatClient
from weaverbird_generator.prompt import Passage as PromptPassage
from weaverbird_generator.tasks import TaskRequest, task_module
from weaverbird_generator.tasks.common import Example as PromptExample
from weaverbird_generator.tasks.common import Turn as PromptTurn
from weaverbird_orchestrator.domain import Example, GenerationDone, Passage, PromptPrepared, Turn


class ChatGenerator:
    """The generator peer without gRPC: the task's prompt module and the LLM client, as the generator
    service runs them (no context focus), for evaluations that call the orchestrator's task code straight
    against an OpenAI-compatible server. last_text keeps the latest reply whole."""

    def __init__(self, base_url: str, timeout_s: float = 180.0) -> None:
        self._client = ChatClient(base_url, timeout_s=timeout_s)
        self.last_text = ""

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
        messages = module.build_messages(
            TaskRequest(
                question=question,
                passages=[PromptPassage(i, p.title, p.text, p.source) for i, p in enumerate(passages, 1)],
                language=language,  # type: ignore[arg-type]
                examples=[PromptExample(e.question, e.answer) for e in examples],
                instruction=instruction,
                history=[PromptTurn(t.role, t.text) for t in history],
            )
        )
        parts: list[str] = []
        async for delta in self._client.stream(
            messages, max_tokens=max_tokens or module.MAX_TOKENS, temperature=temperature
        ):
            if delta.is_final:
                self.last_text = "".join(parts)
                yield GenerationDone(
                    delta.finish_reason or "stop", delta.prompt_tokens or 0, delta.completion_tokens or 0, ""
                )
            elif delta.text:
                parts.append(delta.text)
                yield delta.text
