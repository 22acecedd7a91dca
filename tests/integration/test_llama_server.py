"""Real llama.cpp (SmolLM2 via xllamacpp) streamed through ChatClient, in-process and as a child process."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from weaverbird_generator.llama_server import LlamaServer, LlamaServerError, _health_ok
from weaverbird_generator.llm_client import ChatClient, Delta, GeneratorTimeout, GeneratorUnavailable
from weaverbird_generator.model_files import ModelNotAvailable, ensure_model
from weaverbird_generator.prompt import Passage, build_messages

pytestmark = pytest.mark.integration

MESSAGES = build_messages(
    "What was ACME's revenue in 2023?",
    [Passage(1, "ACME 10-K", "ACME's revenue in 2023 was $12.3 billion.", "https://acme.example/10k")],
    "en",
)


def _smollm2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return ensure_model("smollm2", tmp_path_factory.mktemp("models"))
    except ModelNotAvailable as e:
        pytest.skip(str(e))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with LlamaServer(_smollm2(tmp_path_factory), port=0, ctx_size=2048, n_threads=2, parallel=2) as srv:
        yield srv


async def _collect(client: ChatClient, **kwargs: object) -> list[Delta]:
    params: dict[str, object] = {"max_tokens": 24, "temperature": 0.0, "seed": 7}
    params.update(kwargs)
    return [d async for d in client.stream(MESSAGES, **params)]  # type: ignore[arg-type]


async def test_stream_yields_tokens_then_finish_and_usage(server: LlamaServer) -> None:
    assert _health_ok(server.base_url)
    deltas = await _collect(ChatClient(server.base_url, timeout_s=60))
    *tokens, final = deltas
    assert tokens and all(d.text and not d.is_final for d in tokens)
    assert final.text == "" and final.finish_reason in ("stop", "length")
    assert final.usage_exact
    assert final.prompt_tokens is not None and final.prompt_tokens > 50  # the system rules alone are longer
    assert final.completion_tokens is not None and 1 <= final.completion_tokens <= 24


async def test_max_tokens_gives_length(server: LlamaServer) -> None:
    *_, final = await _collect(ChatClient(server.base_url), max_tokens=3)
    assert final.finish_reason == "length" and final.completion_tokens == 3


async def test_same_seed_same_text(server: LlamaServer) -> None:
    client = ChatClient(server.base_url)
    a = await _collect(client, temperature=0.8, seed=123)
    b = await _collect(client, temperature=0.8, seed=123)
    assert "".join(d.text for d in a) == "".join(d.text for d in b)


async def test_closing_early_frees_the_server(server: LlamaServer) -> None:
    client = ChatClient(server.base_url)
    stream = client.stream(MESSAGES, max_tokens=2000, temperature=1.0, seed=1)
    async with contextlib.aclosing(stream):
        async for _ in stream:
            break
    # Both slots must be usable straight away: the abandoned generation was cancelled, not left running.
    started = time.monotonic()
    deltas = await _collect(client)
    assert deltas[-1].is_final and time.monotonic() - started < 30


async def test_deadline_raises_generator_timeout(server: LlamaServer) -> None:
    with pytest.raises(GeneratorTimeout, match="deadline"):
        await _collect(ChatClient(server.base_url), max_tokens=2000, temperature=1.0, timeout_s=0.05)


async def test_closed_port_raises_generator_unavailable() -> None:
    with pytest.raises(GeneratorUnavailable, match="not reachable"):
        await _collect(ChatClient(f"http://127.0.0.1:{_closed_port()}", timeout_s=5))


def test_stop_closes_the_port(tmp_path_factory: pytest.TempPathFactory) -> None:
    srv = LlamaServer(_smollm2(tmp_path_factory), ctx_size=512).start()
    url = srv.base_url
    srv.stop()
    srv.stop()  # idempotent
    assert not _health_ok(url, timeout=1)
    with pytest.raises(LlamaServerError):
        _ = srv.base_url


def test_busy_port_fails_cleanly(tmp_path_factory: pytest.TempPathFactory) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = LlamaServer(_smollm2(tmp_path_factory), port=s.getsockname()[1], ctx_size=512)
        with pytest.raises(LlamaServerError, match="could not start"):
            busy.start()


async def test_child_process_mode(tmp_path_factory: pytest.TempPathFactory) -> None:
    srv = LlamaServer(_smollm2(tmp_path_factory), ctx_size=1024, in_process=False)
    with srv:
        assert srv._proc is not None
        pid_alive = srv._proc.poll() is None
        deltas = await _collect(ChatClient(srv.base_url), max_tokens=4)
        assert pid_alive and deltas[-1].finish_reason == "length"
        url = srv.base_url
    assert not _health_ok(url, timeout=1)
