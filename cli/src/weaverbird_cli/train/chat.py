"""One chat completion from an OpenAI-compatible server (the generator's llama.cpp, TGI, vLLM ...)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable


def chat_asker(
    base_url: str, max_tokens: int = 48, timeout_s: float = 120.0, api_key: str = ""
) -> Callable[[list[dict[str, str]]], str]:
    """A function sending chat messages to `base_url`/v1/chat/completions, greedy, returning the reply text."""
    url = base_url.rstrip("/") + "/v1/chat/completions"
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"

    def ask(messages: list[dict[str, str]]) -> str:
        body = {"messages": messages, "temperature": 0, "max_tokens": max_tokens}
        request = urllib.request.Request(url, json.dumps(body).encode(), headers)
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            reply = json.load(response)
        return str(reply["choices"][0]["message"]["content"] or "")

    return ask
