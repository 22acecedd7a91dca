"""What the servicer shows the model of each passage: number, title, source and text; without the source
when GENERATOR_PROMPT_SOURCES is off (fewer prompt tokens for a CPU)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from weaverbird.v1 import generator_pb2
from weaverbird_generator.llm_client import Delta
from weaverbird_generator.servicer import GeneratorServicer
from weaverbird_generator.settings import GeneratorSettings


class CapturingClient:
    """A chat server that records the messages it is sent and answers one token."""

    def __init__(self) -> None:
        self.messages: list[list[dict[str, str]]] = []

    async def stream(self, messages: list[dict[str, str]], **_: Any) -> AsyncIterator[Delta]:
        self.messages.append(messages)
        yield Delta(text="ok")
        yield Delta(finish_reason="stop", prompt_tokens=10, completion_tokens=1)


class Context:
    def __init__(self) -> None:
        self.events: list[generator_pb2.GenerateEvent] = []

    async def write(self, event: generator_pb2.GenerateEvent) -> None:
        self.events.append(event)

    def time_remaining(self) -> float | None:
        return None


REQUEST = generator_pb2.GenerateRequest(
    question="What was revenue in 2024?",
    language="en",
    passages=[
        generator_pb2.ContextPassage(
            number=1, title="NORTHWIND_2024 / Results", text="Revenue was USD 5 million.", source="nw.pdf, page 3"
        )
    ],
)


async def _prompt(**settings: Any) -> str:
    client = CapturingClient()
    servicer = GeneratorServicer(client, "fake", GeneratorSettings(**settings))  # type: ignore[arg-type]
    context = Context()
    await servicer.GenerateStream(REQUEST, context)  # type: ignore[arg-type]
    assert context.events[-1].done.finish_reason == "stop"
    return "\n".join(m["content"] for m in client.messages[0])


async def test_the_model_reads_each_passages_source_by_default() -> None:
    prompt = await _prompt()
    assert '<passage id="1" title="NORTHWIND_2024 / Results" source="nw.pdf, page 3">' in prompt


async def test_the_source_can_be_left_out() -> None:
    prompt = await _prompt(prompt_sources=False)
    assert '<passage id="1" title="NORTHWIND_2024 / Results">' in prompt
    assert "nw.pdf" not in prompt and "source=" not in prompt
