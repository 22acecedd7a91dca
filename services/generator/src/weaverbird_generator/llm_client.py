"""Streams chat completions from TGI or any OpenAI-compatible server through huggingface_hub."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import httpx2
from huggingface_hub import AsyncInferenceClient
from huggingface_hub.errors import HfHubHTTPError, OverloadedError, TextGenerationError, ValidationError

log = logging.getLogger(__name__)

# OpenAI/vLLM convention for "no key". Passing *some* key matters: with none, huggingface_hub falls back
# to the machine's Hugging Face token and would send it as a Bearer header to whatever endpoint this is.
_NO_KEY = "EMPTY"


class GeneratorError(RuntimeError):
    """The LLM server failed to produce an answer."""


class GeneratorUnavailable(GeneratorError):
    """The LLM server cannot be reached, is still loading, or dropped the connection."""


class GeneratorTimeout(GeneratorError):
    """The LLM server did not finish within the deadline."""


class GeneratorRequestError(GeneratorError):
    """The LLM server rejected the request, e.g. the prompt does not fit its context window."""


@dataclass(frozen=True, slots=True)
class Delta:
    """One streamed piece: token text, or (last item only) finish_reason and token counts.

    `usage_exact` is False when the server sent no usage: completion_tokens then counts content chunks
    (one token per chunk on llama.cpp, TGI and vLLM) and prompt_tokens is 0.
    """

    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    usage_exact: bool = True
    cached_tokens: int = 0  # prompt tokens the server took from its prompt cache (llama.cpp reports them)

    @property
    def is_final(self) -> bool:
        return self.finish_reason is not None


class ChatClient:
    """Chat-completion streaming against `base_url` (e.g. http://127.0.0.1:8080, a TGI URL, or .../v1)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 300.0,
        model: str | None = None,
        cache_prompt: bool | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # llama.cpp's per-request `cache_prompt` (default on there); None = send nothing, for servers
        # (TGI) that do not know the field.
        self.cache_prompt = cache_prompt
        self.api_key = api_key or _NO_KEY
        self.timeout_s = timeout_s
        self.model = model
        # Flipped off when a server rejects stream_options (older TGI); then usage is counted from chunks.
        self._include_usage = True

    async def stream(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        top_p: float = 0.9,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        timeout_s: float | None = None,
    ) -> AsyncGenerator[Delta, None]:
        """Yields Delta(text=...) per token piece, then exactly one final Delta with finish_reason and usage.

        The whole generation must finish within `timeout_s` (default: the client's); closing the iterator
        early (consumer cancelled) closes the HTTP stream, which makes llama.cpp/TGI stop generating.
        """
        budget = timeout_s if timeout_s is not None else self.timeout_s
        deadline = time.monotonic() + budget
        kwargs: dict[str, Any] = {
            "max_tokens": max_tokens,
            "temperature": temperature,
            "top_p": top_p,
            "stop": list(stop) if stop else None,
            "seed": seed,
        }
        args = (messages, kwargs, deadline, budget)
        # aclosing: when our consumer closes us, close the inner generator (and its HTTP stream) right
        # away instead of whenever the garbage collector finalises it.
        if self._include_usage:
            try:
                async with aclosing(self._stream_once(*args, include_usage=True)) as it:
                    async for delta in it:
                        yield delta
                return
            except _UsageRejected:
                log.info("server at %s rejected stream_options; counting tokens from chunks", self.base_url)
                self._include_usage = False
        async with aclosing(self._stream_once(*args, include_usage=False)) as it:
            async for delta in it:
                yield delta

    async def _stream_once(
        self,
        messages: Sequence[dict[str, Any]],
        kwargs: dict[str, Any],
        deadline: float,
        budget: float,
        *,
        include_usage: bool,
    ) -> AsyncGenerator[Delta, None]:
        # One AsyncInferenceClient per request on purpose: it parks every streamed response on its exit
        # stack until close(), so a shared client would keep abandoned streams (and the server's generation)
        # alive. Closing it here ends the HTTP stream as soon as the consumer stops.
        client = AsyncInferenceClient(base_url=self.base_url, api_key=self.api_key, timeout=budget)
        emitted = 0
        content_chunks = 0
        finish_reason: str | None = None
        usage: Any = None
        try:
            async with asyncio.timeout_at(_loop_time(deadline)):
                chunks = await client.chat_completion(
                    list(messages),
                    model=self.model,
                    stream=True,
                    stream_options={"include_usage": True} if include_usage else None,
                    extra_body={"cache_prompt": self.cache_prompt} if self.cache_prompt is not None else None,
                    **kwargs,
                )
            iterator = aiter(chunks)
            while True:
                async with asyncio.timeout_at(_loop_time(deadline)):
                    try:
                        chunk = await anext(iterator)
                    except StopAsyncIteration:
                        break
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    text = choice.delta.content if choice.delta is not None else None
                    if text:
                        content_chunks += 1
                        emitted += 1
                        yield Delta(text=text)
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        except TimeoutError as e:  # asyncio.timeout_at and InferenceTimeoutError (a TimeoutError) alike
            if isinstance(e.__cause__, httpx2.ConnectTimeout):
                # huggingface_hub wraps every httpx timeout of the request, connecting included.
                raise GeneratorUnavailable(f"LLM server at {self.base_url} is not reachable: {e}") from e
            raise GeneratorTimeout(
                f"LLM server at {self.base_url} did not finish within the deadline ({emitted} tokens streamed)"
            ) from e
        except HfHubHTTPError as e:
            status = e.response.status_code if e.response is not None else None
            if include_usage and emitted == 0 and status in (400, 422) and "stream_options" in _body(e):
                raise _UsageRejected from e
            raise _http_error(self.base_url, status, e) from e
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as e:
            raise GeneratorUnavailable(f"LLM server at {self.base_url} is not reachable: {e}") from e
        except httpx2.TimeoutException as e:  # a read stalled mid-stream (these are not wrapped)
            raise GeneratorTimeout(
                f"LLM server at {self.base_url} stopped sending after {emitted} tokens: {e!r}"
            ) from e
        except httpx2.TransportError as e:
            raise GeneratorUnavailable(
                f"connection to LLM server at {self.base_url} failed after {emitted} tokens: {e!r}"
            ) from e
        except TextGenerationError as e:
            # An in-stream {"error": ...} event (TGI style), parsed by huggingface_hub into its own types.
            if isinstance(e, OverloadedError):
                raise GeneratorUnavailable(f"LLM server at {self.base_url} is overloaded: {e}") from e
            if isinstance(e, ValidationError):
                raise GeneratorRequestError(f"LLM server at {self.base_url} rejected the request: {e}") from e
            raise GeneratorError(f"LLM server at {self.base_url} failed mid-stream: {e}") from e
        except ValueError as e:
            # Not JSON, or JSON that is not a chat.completion.chunk: the endpoint is not what we think it is.
            raise GeneratorError(f"LLM server at {self.base_url} sent a malformed stream: {e}") from e
        finally:
            await client.close()

        if usage is not None:
            yield Delta(
                finish_reason=finish_reason or "stop",
                prompt_tokens=int(usage.prompt_tokens or 0),
                completion_tokens=int(usage.completion_tokens or 0),
                cached_tokens=_cached_tokens(usage),
            )
        else:
            yield Delta(
                finish_reason=finish_reason or "stop",
                prompt_tokens=0,
                completion_tokens=content_chunks,
                usage_exact=False,
            )


def _cached_tokens(usage: Any) -> int:
    """usage.prompt_tokens_details.cached_tokens (OpenAI's field, filled by llama.cpp), 0 when absent.

    huggingface_hub's usage type declares no such field but keeps every key it received (it is a dict).
    """
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    if not isinstance(details, dict):
        return 0
    try:
        return max(int(details.get("cached_tokens") or 0), 0)
    except (TypeError, ValueError):
        return 0


class _UsageRejected(Exception):
    """Internal: the server refused stream_options before sending anything; retry without it."""


def _loop_time(deadline: float) -> float:
    """Converts a time.monotonic() deadline to the running loop's clock."""
    loop = asyncio.get_running_loop()
    return loop.time() + (deadline - time.monotonic())


def _body(e: HfHubHTTPError) -> str:
    # The response text is only available if huggingface_hub read it (it does for small error bodies).
    try:
        return (e.response.text or "") + str(e)
    except Exception:
        return str(e)


def _http_error(base_url: str, status: int | None, e: HfHubHTTPError) -> GeneratorError:
    detail = _body(e)[:500]
    if status in (502, 503, 504):
        # llama.cpp answers 503 while loading; proxies in front of TGI answer 502/504.
        return GeneratorUnavailable(f"LLM server at {base_url} is unavailable (HTTP {status}): {detail}")
    if status == 408:
        return GeneratorTimeout(f"LLM server at {base_url} timed out (HTTP 408): {detail}")
    if status is not None and 400 <= status < 500:
        return GeneratorRequestError(f"LLM server at {base_url} rejected the request (HTTP {status}): {detail}")
    return GeneratorError(f"LLM server at {base_url} failed (HTTP {status}): {detail}")


__all__ = [
    "ChatClient",
    "Delta",
    "GeneratorError",
    "GeneratorRequestError",
    "GeneratorTimeout",
    "GeneratorUnavailable",
]
