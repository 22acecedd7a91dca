"""One chat completion at a time for `train questions`, through the generator's own client (ChatClient:
llama.cpp, TGI or any OpenAI-compatible server, a base URL with or without /v1, an optional API key)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from weaverbird_generator.llm_client import ChatClient


def chat_asker(
    base_url: str, max_tokens: int = 48, timeout_s: float = 120.0, api_key: str = ""
) -> Callable[[list[dict[str, str]]], str]:
    """A function sending chat messages to `base_url`, greedy, returning the reply text. Raises the
    client's GeneratorError when the server is unreachable, rejects the request or runs out of time."""
    client = ChatClient(base_url, api_key=api_key or None, timeout_s=timeout_s)

    async def _reply(messages: list[dict[str, str]]) -> str:
        return "".join([d.text async for d in client.stream(messages, max_tokens=max_tokens, temperature=0.0)])

    def ask(messages: list[dict[str, str]]) -> str:
        return asyncio.run(_reply(messages))

    return ask
