"""gRPC adapter of the generator: validates, builds the prompt and streams from the LLM server."""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import AsyncExitStack, aclosing

import grpc
from weaverbird.v1 import generator_pb2, generator_pb2_grpc
from weaverbird_common.clients import hop_timeout
from weaverbird_common.docs.chunker import count_tokens
from weaverbird_common.errors import DeadlineExceeded, InvalidArgument, Unavailable
from weaverbird_common.questions import detect_language
from weaverbird_common.telemetry import generator_metrics

from weaverbird_generator.context_focus import focus
from weaverbird_generator.llm_client import (
    ChatClient,
    GeneratorError,
    GeneratorRequestError,
    GeneratorTimeout,
    GeneratorUnavailable,
)
from weaverbird_generator.prompt import Passage, build_messages
from weaverbird_generator.settings import GeneratorSettings
from weaverbird_generator.tasks import TaskRequest, task_module
from weaverbird_generator.tasks.common import Example, Turn
from weaverbird_generator.validation import validate_generate

log = logging.getLogger(__name__)


def _record_tokens(prompt: int, completion: int, decode_start: float) -> None:
    generator_metrics.GENERATOR_TOKENS.labels(kind="prompt").inc(prompt)
    generator_metrics.GENERATOR_TOKENS.labels(kind="completion").inc(completion)
    decode_s = time.perf_counter() - decode_start
    if completion > 1 and decode_s > 0:
        # Decode speed after the first token: prompt processing is measured as time to first token.
        generator_metrics.GENERATOR_TOKENS_PER_SECOND.observe((completion - 1) / decode_s)


class GeneratorServicer(generator_pb2_grpc.GeneratorServiceServicer):
    """Serves GenerateStream over one chat-completion server (TGI, vLLM, llama.cpp ...)."""

    def __init__(self, client: ChatClient, model_id: str, settings: GeneratorSettings) -> None:
        self._client = client
        self._model_id = model_id
        self._s = settings
        # Calls beyond the LLM server's parallel slots wait here, not in llama.cpp's queue: llama.cpp sees
        # a closed connection only once it has read a request's prompt, so a cancelled call queued there
        # would still cost a full prompt read later; one cancelled while waiting here costs nothing.
        slots = settings.llm_concurrency_limit
        self._llm_slots = asyncio.Semaphore(slots) if slots else None

    async def warm_up(self) -> None:
        """Reads each language's fixed rules once, so llama.cpp's prompt cache holds them before the first question.

        Best effort: a failure only means the first question pays for the rules itself.
        """
        for language in ("en", "zh"):
            started = time.perf_counter()
            try:
                async for _ in self._client.stream(build_messages("-", [], language), max_tokens=1):
                    pass
            except GeneratorError as exc:
                log.warning("prompt cache warm-up (%s) failed: %s", language, exc)
                return
            log.info("prompt cache warm-up (%s) took %.1f s", language, time.perf_counter() - started)

    def _validate(self, request: generator_pb2.GenerateRequest) -> None:
        validate_generate(request, max_question_chars=self._s.max_question_chars, max_passages=self._s.max_passages)

    async def GenerateStream(self, request: generator_pb2.GenerateRequest, context: grpc.aio.ServicerContext) -> None:
        """Streams with context.write() rather than `yield`: a cancelled or expired call then always lands
        inside this coroutine, and leaving `aclosing` closes the HTTP stream to the LLM server at once
        (an async generator abandoned at a `yield` is only closed when it is garbage-collected, and
        llama.cpp would generate on until then)."""
        self._validate(request)
        language = request.language or detect_language(request.question)
        # GENERATOR_PROMPT_SOURCES=false leaves the source out of the prompt (citations keep it).
        sources = self._s.prompt_sources
        passages = [Passage(p.number, p.title, p.text, p.source if sources else "") for p in request.passages]
        task = task_module(request.task)
        # The model reads only what bears on the question (a CPU reads prompts slowly); numbers unchanged.
        focused = focus(request.question, passages, self._s.context_budget) if task.FOCUS else passages
        messages = task.build_messages(
            TaskRequest(
                question=request.question,
                passages=focused,
                language=language,  # type: ignore[arg-type]
                examples=[Example(e.question, e.answer) for e in request.examples],
                instruction=request.instruction,
                history=[Turn(t.role, t.text) for t in request.history],
            )
        )
        await context.write(
            generator_pb2.GenerateEvent(
                prompt=generator_pb2.PromptInfo(
                    prompt_tokens=sum(count_tokens(m["content"]) for m in messages),
                    context_tokens=sum(count_tokens(p.text) for p in focused),
                    context_tokens_full=sum(count_tokens(p.text) for p in passages),
                    passages_used=[p.number for p in focused],
                )
            )
        )
        s = request.sampling
        max_tokens = min(s.max_tokens or task.MAX_TOKENS or self._s.max_tokens, self._s.max_tokens)
        try:
            async with AsyncExitStack() as stack:
                if self._llm_slots is not None:
                    await stack.enter_async_context(self._llm_slots)
                # The caller's deadline bounds the LLM call too: min(GENERATOR_REQUEST_TIMEOUT_S, time left).
                timeout_s = hop_timeout(self._s.request_timeout_s, context.time_remaining(), "the LLM call")
                started = time.perf_counter()
                first_token_at: float | None = None
                deltas = await stack.enter_async_context(
                    aclosing(
                        self._client.stream(
                            messages,
                            max_tokens=max_tokens,
                            temperature=s.temperature or self._s.temperature,
                            top_p=s.top_p or self._s.top_p,
                            seed=s.seed or None,
                            timeout_s=timeout_s,
                        )
                    )
                )
                async for delta in deltas:
                    if delta.is_final:
                        _record_tokens(
                            delta.prompt_tokens or 0, delta.completion_tokens or 0, first_token_at or started
                        )
                        await context.write(
                            generator_pb2.GenerateEvent(
                                done=generator_pb2.GenerateDone(
                                    finish_reason=delta.finish_reason or "stop",
                                    prompt_tokens=delta.prompt_tokens or 0,
                                    completion_tokens=delta.completion_tokens or 0,
                                    model_id=self._model_id,
                                    cached_tokens=delta.cached_tokens,
                                )
                            )
                        )
                    elif delta.text:
                        first_token_at = first_token_at or time.perf_counter()
                        await context.write(generator_pb2.GenerateEvent(token=delta.text))
        except GeneratorTimeout as exc:
            raise DeadlineExceeded(str(exc)) from exc
        except GeneratorRequestError as exc:
            raise InvalidArgument(str(exc)) from exc
        except (GeneratorUnavailable, GeneratorError) as exc:
            raise Unavailable(str(exc)) from exc
