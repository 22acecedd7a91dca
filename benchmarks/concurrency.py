"""The orchestrator under concurrent load: 1, 8 and 32 closed-loop clients on the real stack.

Starts all five services on 127.0.0.1 (SmolLM2 on llama.cpp, so generation finishes quickly; USE
embedder; Qdrant Edge) with the demo knowledge base, then drives the orchestrator with N concurrent
clients, each on its own channel, each sending its next request as soon as the previous one ends:

- Retrieve (local path: embed, search, gate, rank; no generation);
- AskStream with a small max_tokens, timing the first answer token as the client sees it.

Per level: requests, errors by gRPC status code, throughput (successful requests per second of wall
time), p50/p99 latency and, for Ask, p50/p99 time to first token. The load generator shares the two
cores with the services, so the numbers are a floor for what a separate client machine would see.

    python -m benchmarks.concurrency [--levels 1 8 32] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from tqdm import tqdm
from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_cli import commands
from weaverbird_cli.stack import SERVICES, LocalStack, StackConfig, free_base_port

from benchmarks.harness import DEMO_KB, demo_questions, write_result
from benchmarks.stats import percentiles

ROUTES = {orchestrator_pb2.ROUTE_LOCAL: "local", orchestrator_pb2.ROUTE_WEB: "web"}


@dataclass
class LevelResult:
    mode: str
    clients: int
    latencies_ms: list[float] = field(default_factory=list)
    first_token_ms: list[float] = field(default_factory=list)  # client-side, Ask only
    server_first_token_ms: list[float] = field(default_factory=list)  # the orchestrator's own timing
    completion_tokens: list[int] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    routes: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        ok = len(self.latencies_ms)
        out: dict[str, Any] = {
            "mode": self.mode,
            "clients": self.clients,
            "requests": ok + sum(self.errors.values()),
            "ok": ok,
            "errors": sum(self.errors.values()),
            "errors_by_code": dict(self.errors),
            "routes": dict(self.routes),
            "wall_s": round(self.wall_s, 3),
            "throughput_rps": ok / self.wall_s if self.wall_s else 0.0,
            "latency": percentiles(self.latencies_ms) if ok else None,
        }
        if self.mode.startswith("ask"):
            out["first_token"] = percentiles(self.first_token_ms) if self.first_token_ms else None
            out["server_first_token"] = percentiles(self.server_first_token_ms) if self.server_first_token_ms else None
            out["mean_completion_tokens"] = (
                sum(self.completion_tokens) / len(self.completion_tokens) if self.completion_tokens else 0.0
            )
        return out


async def _one_retrieve(
    stub: Any, request: orchestrator_pb2.AskRequest, deadline_s: float, result: LevelResult
) -> None:
    start = time.perf_counter()
    reply = await stub.Retrieve(request, timeout=deadline_s)
    result.latencies_ms.append((time.perf_counter() - start) * 1000)
    result.routes[ROUTES.get(reply.route.route, "unspecified")] += 1


async def _one_ask(stub: Any, request: orchestrator_pb2.AskRequest, deadline_s: float, result: LevelResult) -> None:
    start = time.perf_counter()
    first: float | None = None
    done: orchestrator_pb2.AnswerDone | None = None
    async for event in stub.AskStream(request, timeout=deadline_s):
        kind = event.WhichOneof("event")
        if kind == "route":
            result.routes[ROUTES.get(event.route.route, "unspecified")] += 1
        elif kind == "token" and first is None and event.token:
            first = (time.perf_counter() - start) * 1000
        elif kind == "done":
            done = event.done
    result.latencies_ms.append((time.perf_counter() - start) * 1000)
    if first is not None:
        result.first_token_ms.append(first)
    if done is not None:
        result.completion_tokens.append(done.completion_tokens)
        if done.timings.first_token_ms > 0:
            result.server_first_token_ms.append(done.timings.first_token_ms)


async def run_level(
    addr: str, mode: str, clients: int, per_client: int, questions: list[str], max_tokens: int, deadline_s: float
) -> LevelResult:
    """`clients` concurrent closed-loop clients, each sending `per_client` requests."""
    result = LevelResult(mode=mode, clients=clients)
    bar = tqdm(total=clients * per_client, desc=f"{mode} x{clients}", unit="req", leave=False, mininterval=1.0)

    async def client(index: int) -> None:
        async with grpc.aio.insecure_channel(addr) as channel:
            stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
            await channel.channel_ready()
            for j in range(per_client):
                # Clients start at different questions so concurrent requests are not all identical.
                q = questions[(index * 7 + j) % len(questions)]
                request = orchestrator_pb2.AskRequest(question=q)
                if mode.startswith("ask"):
                    request.max_tokens = max_tokens
                try:
                    if mode.startswith("ask"):
                        await _one_ask(stub, request, deadline_s, result)
                    else:
                        await _one_retrieve(stub, request, deadline_s, result)
                except grpc.aio.AioRpcError as exc:
                    result.errors[exc.code().name] += 1
                bar.update()

    start = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    result.wall_s = time.perf_counter() - start
    bar.close()
    return result


async def run_all(
    addr: str, levels: list[int], plan: dict[str, dict[int, int]], questions: list[str], max_tokens: int
) -> list[LevelResult]:
    # Warm-up: first calls open peer channels and load the embedder's and the store's caches.
    await run_level(addr, "retrieve", 2, 5, questions, max_tokens, 60)
    # One cold Ask per distinct question, one client: llama.cpp keeps prompts in a RAM cache, so later
    # repeats of a question skip most prompt processing. The levels below therefore all run with that
    # cache warm (the same passages recur), and this pass is reported as the cold single-client case.
    cold = await run_level(addr, "ask", 1, len(questions), questions, max_tokens, 600)
    cold.mode = "ask_cold"
    _print(cold)
    results = [cold]
    for mode in ("retrieve", "ask"):
        for level in levels:
            deadline_s = 60.0 if mode == "retrieve" else 600.0
            result = await run_level(addr, mode, level, plan[mode][level], questions, max_tokens, deadline_s)
            _print(result)
            results.append(result)
    return results


def _print(result: LevelResult) -> None:
    s = result.summary()
    lat = s["latency"] or {"p50_ms": float("nan"), "p99_ms": float("nan")}
    line = (
        f"{s['mode']:<9}{s['clients']:>4} clients: {s['requests']:>4} req, {s['errors']} errors, "
        f"{s['throughput_rps']:7.1f} req/s, p50 {lat['p50_ms']:8.1f} ms, p99 {lat['p99_ms']:8.1f} ms"
    )
    if s.get("first_token"):
        line += f", first token p50 {s['first_token']['p50_ms']:.0f} ms p99 {s['first_token']['p99_ms']:.0f} ms"
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--retrieve-requests", type=int, default=320, help="per level; at least 1 per client")
    parser.add_argument("--ask-requests", type=int, default=64, help="per level; at least 1 per client")
    parser.add_argument("--max-tokens", type=int, default=16, help="answer tokens per Ask (small, so it finishes)")
    parser.add_argument("--quick", action="store_true", help="fewer requests, for smoke runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.retrieve_requests, args.ask_requests = 96, 16

    def per_client(total: int, level: int) -> int:
        return max(1, total // level)

    plan = {
        "retrieve": {lv: per_client(args.retrieve_requests, lv) for lv in args.levels},
        "ask": {lv: per_client(args.ask_requests, lv) for lv in args.levels},
    }
    questions = [q.question for q in demo_questions()]
    with tempfile.TemporaryDirectory() as tmp:
        base = free_base_port(len(SERVICES))
        config = StackConfig(
            base_port=base,
            data_dir=Path(tmp),
            generator_env={"GENERATOR_MODEL": "smollm2", "GENERATOR_MODEL_DIR": f"{tmp}/models"},
            embedder_env={"EMBEDDER_BACKEND": "use"},
        )
        print(f"starting the stack on 127.0.0.1:{base}-{base + len(SERVICES) - 1} (SmolLM2, demo KB) ...")
        with LocalStack(config) as stack:
            if commands.ingest([str(DEMO_KB)], stack.config.addr("ingester"), quiet=True) != 0:
                print("error: loading the demo knowledge base failed", file=sys.stderr)
                return 1
            results = asyncio.run(
                run_all(stack.config.addr("orchestrator"), args.levels, plan, questions, args.max_tokens)
            )
    report = {
        "model": "smollm2 (SmolLM2-135M-Instruct Q4_1, llama.cpp, 2 slots)",
        "kb": "demo/kb",
        "questions": len(questions),
        "max_tokens": args.max_tokens,
        "client": "grpc.aio, one channel per client, closed loop, same machine as the services",
        "levels": [r.summary() for r in results],
    }
    write_result("concurrency", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
