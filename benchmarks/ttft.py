"""Time to first token and tokens/s of the local model through the generator's gRPC GenerateStream.

Starts the generator service alone on 127.0.0.1 (llama.cpp, one slot, 8k context) and sends a
realistic RAG request: 5 passages of about 250 tokens each (packed from the demo notes of the question's
language), in English and in Chinese. Every run uses a different question and passage set, so
llama.cpp's prompt cache can only reuse the shared system prompt, as it would in production.

Model: qwen2.5-coder-1.5b (the default of `make run`) when its files are installed (`make models`),
otherwise SmolLM2-135M with a printed note; `--model smollm2|qwen` forces one.

    python -m benchmarks.ttft [--model auto|qwen|smollm2] [--runs 3] [--max-tokens 64] [--quick]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from tqdm import tqdm
from weaverbird.v1 import generator_pb2, generator_pb2_grpc
from weaverbird_cli.stack import StackConfig, free_base_port, wait_healthy
from weaverbird_common.docs.chunker import count_tokens
from weaverbird_generator.model_files import QWEN25_15B, SMOLLM2, ModelNotAvailable, qwen_part_paths

from benchmarks.harness import DEMO_KB, REPO, demo_questions, write_result
from benchmarks.stats import percentiles

MODEL_DIR = REPO / "var" / "models"  # where `make models` assembles Qwen; reused, never rebuilt here
QWEN_GGUF = MODEL_DIR / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PASSAGE_TOKENS = 250
PASSAGES_PER_PROMPT = 5


@dataclass(frozen=True)
class Passage:
    title: str
    text: str
    source: str


def qwen_available() -> bool:
    if QWEN_GGUF.is_file():
        return True
    try:
        qwen_part_paths()
    except ModelNotAvailable:
        return False
    return True


def choose_model(requested: str) -> tuple[str, str]:
    """(GENERATOR_MODEL value, note for the report)."""
    if requested == "smollm2":
        return SMOLLM2, "SmolLM2-135M (requested)"
    if qwen_available():
        return QWEN25_15B, "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (the default model)"
    if requested == "qwen":
        raise SystemExit("error: --model qwen but the Qwen files are not installed; run `make models` first")
    note = (
        "NOTE: the default model qwen2.5-coder-1.5b is not installed (run `make models`); measuring SmolLM2-135M "
        "instead, which is ~10x smaller and NOT representative of the default model's latency"
    )
    print(note, flush=True)
    return SMOLLM2, note


def passage_pool(language: str) -> list[Passage]:
    """Demo notes of one language cut into consecutive ~250-token passages (paragraphs kept whole)."""
    pool: list[Passage] = []
    for path in sorted(DEMO_KB.glob(f"{language}-*.md")):
        text = path.read_text(encoding="utf-8")
        heading = re.search(r"^#\s+(.+)$", text, re.MULTILINE)
        title = heading.group(1).strip() if heading else path.stem
        current: list[str] = []
        for para in (p.strip() for p in re.split(r"\n\s*\n", text)):
            if not para or para.startswith("# "):
                continue
            current.append(para)
            if count_tokens("\n\n".join(current)) >= PASSAGE_TOKENS:
                pool.append(Passage(title, "\n\n".join(current), f"demo/kb/{path.name}"))
                current = []
        if current and count_tokens("\n\n".join(current)) >= PASSAGE_TOKENS // 2:
            pool.append(Passage(title, "\n\n".join(current), f"demo/kb/{path.name}"))
    return pool


def build_request(
    question: str, pool: list[Passage], run: int, language: str, max_tokens: int
) -> generator_pb2.GenerateRequest:
    # A different window of the pool per run: each prompt's passages (after the system prompt) are new.
    chosen = [pool[(run * PASSAGES_PER_PROMPT + i) % len(pool)] for i in range(PASSAGES_PER_PROMPT)]
    return generator_pb2.GenerateRequest(
        question=question,
        passages=[
            generator_pb2.ContextPassage(number=i + 1, title=p.title, text=p.text, source=p.source)
            for i, p in enumerate(chosen)
        ],
        language=language,
        sampling=generator_pb2.SamplingParams(max_tokens=max_tokens, temperature=0.1, seed=7 + run),
    )


def measure(stub: Any, request: generator_pb2.GenerateRequest) -> dict[str, float]:
    start = time.perf_counter()
    first: float | None = None
    last = start
    done: generator_pb2.GenerateDone | None = None
    for event in stub.GenerateStream(request, timeout=900):
        if event.WhichOneof("event") == "token":
            if event.token and first is None:
                first = time.perf_counter()
            last = time.perf_counter()
        else:
            done = event.done
    total = time.perf_counter() - start
    assert done is not None, "the stream ended without a done event"
    ttft = (first or last) - start
    decode_s = last - (first or last)
    tokens = done.completion_tokens
    return {
        "ttft_ms": ttft * 1000,
        "total_ms": total * 1000,
        "prompt_tokens": done.prompt_tokens,
        "completion_tokens": tokens,
        "prompt_tokens_per_s": done.prompt_tokens / ttft if ttft > 0 else 0.0,
        # Tokens after the first over the time after the first: the decode rate a reader sees.
        "decode_tokens_per_s": (tokens - 1) / decode_s if tokens > 1 and decode_s > 0 else 0.0,
        "finish_reason": done.finish_reason,
        "model_id": done.model_id,
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def pct(key: str) -> dict[str, float]:
        return percentiles([r[key] for r in runs])

    return {
        "runs": len(runs),
        "ttft": pct("ttft_ms"),
        "total": pct("total_ms"),
        "prompt_tokens_mean": sum(r["prompt_tokens"] for r in runs) / len(runs),
        "completion_tokens_mean": sum(r["completion_tokens"] for r in runs) / len(runs),
        "prompt_tokens_per_s_p50": pct("prompt_tokens_per_s")["p50_ms"],
        "decode_tokens_per_s_p50": pct("decode_tokens_per_s")["p50_ms"],
        "samples": runs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["auto", "qwen", "smollm2"], default="auto")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per language")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="1 run per language, 32 tokens")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.max_tokens = 1, 32
    model, note = choose_model(args.model)

    pools = {lang: passage_pool(lang) for lang in ("en", "zh")}
    questions = {lang: [q.question for q in demo_questions() if q.language == lang] for lang in ("en", "zh")}
    with tempfile.TemporaryDirectory() as tmp:
        config = StackConfig(
            base_port=free_base_port(5),
            data_dir=Path(tmp),
            generator_env={
                "GENERATOR_MODEL": model,
                "GENERATOR_MODEL_DIR": str(MODEL_DIR),
                "GENERATOR_LLAMA_CTX": "8192",  # Chinese costs SmolLM2 several tokens per character
                "GENERATOR_LLAMA_PARALLEL": "1",  # one stream at a time: latency, not throughput
                "GENERATOR_MAX_TOKENS": str(args.max_tokens),
            },
        )
        addr = config.addr("generator")
        log = (Path(tmp) / "generator.log").open("ab")
        print(f"starting the generator ({model}) on {addr} ...", flush=True)
        process = subprocess.Popen(
            [sys.executable, "-m", "weaverbird_generator"],
            env={**os.environ, **config.env("generator")},
            stdout=log,
            stderr=log,
        )
        results: dict[str, list[dict[str, Any]]] = {"en": [], "zh": []}
        try:
            wait_healthy(addr, 900, process)  # assembling Qwen on first use can take a while
            with grpc.insecure_channel(addr) as channel:
                stub = generator_pb2_grpc.GeneratorServiceStub(channel)
                # Warm-up on a one-line prompt: pages the weights in without priming the passages.
                stub_warm = generator_pb2.GenerateRequest(
                    question="What is revenue?", language="en", sampling=generator_pb2.SamplingParams(max_tokens=4)
                )
                measure(stub, stub_warm)
                plan = [(lang, run) for run in range(args.runs) for lang in ("en", "zh")]
                for lang, run in tqdm(plan, desc=f"generate ({model})", unit="run"):
                    qs = questions[lang]
                    request = build_request(qs[run % len(qs)], pools[lang], run, lang, args.max_tokens)
                    results[lang].append(measure(stub, request))
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()

    report: dict[str, Any] = {
        "model": model,
        "model_note": note,
        "passages_per_prompt": PASSAGES_PER_PROMPT,
        "passage_tokens_estimate": PASSAGE_TOKENS,
        "max_tokens": args.max_tokens,
        "by_language": {lang: summarize(runs) for lang, runs in results.items()},
    }
    print(f"\nmodel: {note}")
    header = ("lang", "prompt tok", "TTFT p50 ms", "TTFT p99 ms", "prompt tok/s", "decode tok/s")
    print(f"{header[0]:<6}" + "".join(f"{h:>14}" for h in header[1:]))
    for lang, s in report["by_language"].items():
        print(
            f"{lang:<6}{s['prompt_tokens_mean']:>14.0f}{s['ttft']['p50_ms']:>14.0f}{s['ttft']['p99_ms']:>14.0f}"
            f"{s['prompt_tokens_per_s_p50']:>14.1f}{s['decode_tokens_per_s_p50']:>14.1f}"
        )
    write_result("ttft", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
