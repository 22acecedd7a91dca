"""Real llama.cpp (SmolLM2 via xllamacpp) streamed through ChatClient, in-process and as a child process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from weaverbird_generator.llama_server import LlamaServer, LlamaServerError, _health_ok
from weaverbird_generator.llm_client import (
    ChatClient,
    Delta,
    GeneratorRequestError,
    GeneratorTimeout,
    GeneratorUnavailable,
)
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
    # Without the prompt cache: a cached prompt is read in other batches (its last token alone), which moves
    # the logits a little, enough to change what temperature 0.8 samples (seen when this test ran first).
    client = ChatClient(server.base_url, cache_prompt=False)
    a = await _collect(client, temperature=0.8, seed=123)
    b = await _collect(client, temperature=0.8, seed=123)
    assert "".join(d.text for d in a) == "".join(d.text for d in b)


async def test_the_default_decoding_answers_alike_without_a_seed(server: LlamaServer) -> None:
    """The client's default temperature (GENERATOR_TEMPERATURE's, 0: greedy) and no seed: the same prompt
    gets the same answer, also after another prompt changed what the server's prompt cache holds."""
    client = ChatClient(server.base_url)
    other = build_messages("What was ACME's net income?", [Passage(1, "ACME", "Net income was 1.1 bn.", "")], "en")

    async def text(messages: list[dict[str, str]]) -> str:
        return "".join([d.text async for d in client.stream(messages, max_tokens=24)])

    first = await text(MESSAGES)
    await text(other)
    assert await text(MESSAGES) == first


def _busy_slots(server: LlamaServer) -> list[bool]:
    with urllib.request.urlopen(f"{server.base_url}/slots", timeout=5) as resp:
        return [bool(slot["is_processing"]) for slot in json.loads(resp.read())]


async def test_closing_early_cancels_generation(server: LlamaServer) -> None:
    stream = ChatClient(server.base_url).stream(MESSAGES, max_tokens=2000, temperature=1.0, seed=1)
    async with contextlib.aclosing(stream):
        async for _ in stream:
            assert any(_busy_slots(server))
            break
    # The abandoned generation must stop (llama.cpp notices the closed connection), not run to 2000 tokens.
    deadline = time.monotonic() + 10
    while any(_busy_slots(server)):
        assert time.monotonic() < deadline, "slot still generating after the client closed the stream"
        await asyncio.sleep(0.1)


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


@pytest.mark.parametrize("repack", [False, True], ids=["plain-weights", "repacked-weights"])
async def test_child_process_mode(tmp_path_factory: pytest.TempPathFactory, repack: bool) -> None:
    # The child gets the weight layout as a flag of its own command line: an unknown flag would end it.
    srv = LlamaServer(_smollm2(tmp_path_factory), ctx_size=1024, in_process=False, repack_weights=repack)
    with srv:
        assert srv._proc is not None
        pid_alive = srv._proc.poll() is None
        deltas = await _collect(ChatClient(srv.base_url), max_tokens=4)
        assert pid_alive and deltas[-1].finish_reason == "length"
        url = srv.base_url
    assert not _health_ok(url, timeout=1)


# --- ChatClient against a scripted fake server (TGI-like behaviour llama.cpp does not show) ---------


async def _fake_server(responses: list[bytes]) -> tuple[asyncio.Server, str, list[bytes]]:
    """Answers successive HTTP requests with the given raw responses; records the request bodies."""
    bodies: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        )
        bodies.append(await reader.readexactly(length))
        writer.write(responses[min(len(bodies), len(responses)) - 1])
        await writer.drain()
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    return srv, f"http://127.0.0.1:{port}", bodies


def _http(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def _sse(*chunks: dict[str, object]) -> bytes:
    base = {"created": 0, "id": "x", "model": "m", "system_fingerprint": "f", "object": "chat.completion.chunk"}
    events = b"".join(b"data: " + json.dumps({**base, **c}).encode() + b"\n\n" for c in chunks)
    return _http("200 OK", events + b"data: [DONE]\n\n", "text/event-stream")


async def test_server_rejecting_stream_options_falls_back_to_counting() -> None:
    rejected = _http("422 Unprocessable Entity", b'{"error":"unknown field stream_options"}')
    ok = _sse(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"content": " there"}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    )
    srv, url, bodies = await _fake_server([rejected, ok, ok])
    async with srv:
        client = ChatClient(url)
        deltas = [d async for d in client.stream(MESSAGES, max_tokens=5)]
        assert [d.text for d in deltas[:-1]] == ["Hi", " there"]
        final = deltas[-1]
        assert (final.finish_reason, final.completion_tokens, final.usage_exact) == ("stop", 2, False)
        assert b"stream_options" in bodies[0] and b"stream_options" not in bodies[1]
        await _collect(client)  # remembered: no second rejection
        assert len(bodies) == 3 and b"stream_options" not in bodies[2]


async def test_loading_server_is_unavailable() -> None:
    srv, url, _ = await _fake_server([_http("503 Service Unavailable", b'{"error":"Loading model"}')])
    async with srv:
        with pytest.raises(GeneratorUnavailable, match="503"):
            await _collect(ChatClient(url))


async def test_context_overflow_is_a_request_error() -> None:
    body = b'{"error":{"code":400,"message":"the request exceeds the available context size"}}'
    srv, url, _ = await _fake_server([_http("400 Bad Request", body)])
    async with srv:
        with pytest.raises(GeneratorRequestError, match="context size"):
            await _collect(ChatClient(url))


async def test_no_hugging_face_token_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret_must_not_leak")
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(_http("503 Service Unavailable", b"{}"))
        await writer.drain()
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with srv:
        url = f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"
        with pytest.raises(GeneratorUnavailable):
            await _collect(ChatClient(url))
    assert seen and b"hf_secret_must_not_leak" not in seen[0]


def _status(url: str, api_key: str | None = None, body: bytes | None = None) -> int:
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {api_key}"} if api_key else {})
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


async def test_a_keyed_server_refuses_requests_without_its_key(tmp_path_factory: pytest.TempPathFactory) -> None:
    # As the generator runs it: a child process, the key handed over on stdin (not on its command line).
    key = "k-" + "7" * 40
    srv = LlamaServer(_smollm2(tmp_path_factory), ctx_size=1024, in_process=False, api_key=key)
    with srv:
        assert srv._proc is not None
        cmdline = await asyncio.to_thread(Path(f"/proc/{srv._proc.pid}/cmdline").read_bytes)
        assert key.encode() not in cmdline
        completion = json.dumps({"prompt": "Hello", "n_predict": 2}).encode()
        for path, body in (("/completion", completion), ("/slots", None), ("/props", None), ("/metrics", None)):
            assert _status(f"{srv.base_url}{path}", body=body) == 401, path
            assert _status(f"{srv.base_url}{path}", api_key="wrong-key", body=body) == 401, path
        assert _status(f"{srv.base_url}/slots", api_key=key) == 200
        with pytest.raises(GeneratorRequestError):
            await _collect(ChatClient(srv.base_url), max_tokens=2)  # no key
        deltas = await _collect(ChatClient(srv.base_url, api_key=key), max_tokens=2)
        assert deltas[-1].finish_reason == "length"
