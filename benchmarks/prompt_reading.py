"""How fast llama.cpp reads prompts and decodes, with and without repacking the weights at load.

On a CPU the time to first token is the time llama.cpp takes to read the prompt, so the server setting
that changes prompt reading speed is worth measuring on its own. This starts the local llama.cpp server
(the generator's `LlamaServer`, child process, the served defaults: 2 slots, 4k context each) once per
variant and round, alternating the variants so a drift of the machine touches both, and sends the same
RAG-sized prompts to each: three demo passages and the rules (about 1,250 tokens), prompt cache off,
32 new tokens. The numbers are llama.cpp's own `timings` (prompt tokens/s, decode tokens/s).

Variants: `plain` (GENERATOR_LLAMA_REPACK=false, the default) and `repacked` (llama.cpp's CPU "extra buffer
types": interleaved weight layouts chosen for this CPU's instruction set).

    python -m benchmarks.prompt_reading [--rounds 2] [--prompts 4] [--model auto|qwen|smollm2] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import urllib.request
from pathlib import Path
from typing import Any

from weaverbird_generator.llama_server import LlamaServer
from weaverbird_generator.model_files import ensure_model
from weaverbird_generator.prompt import Passage, build_messages

from benchmarks.harness import write_result
from benchmarks.ttft import MODEL_DIR, choose_model, passage_pool

VARIANTS = {"plain": False, "repacked": True}


def prompts(count: int) -> list[list[dict[str, str]]]:
    """`count` chat prompts of three consecutive demo passages each, alternating English and Chinese."""
    pools = {lang: passage_pool(lang) for lang in ("en", "zh")}
    out = []
    for i in range(count):
        lang = "en" if i % 2 == 0 else "zh"
        pool = pools[lang]
        chosen = [pool[(i // 2 * 3 + k) % len(pool)] for k in range(3)]
        passages = [Passage(k + 1, p.title, p.text, p.source) for k, p in enumerate(chosen)]
        question = "What was revenue in 2024?" if lang == "en" else "2024年的营业收入是多少？"
        out.append(build_messages(question, passages, lang))  # type: ignore[arg-type]
    return out


def timings(base_url: str, messages: list[dict[str, str]], max_tokens: int) -> dict[str, Any]:
    body = {"messages": messages, "max_tokens": max_tokens, "temperature": 0, "cache_prompt": False}
    request = urllib.request.Request(
        f"{base_url}/v1/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1: never via a proxy
    with opener.open(request, timeout=600) as resp:
        return dict(json.loads(resp.read())["timings"])


def measure(model_path: Path, repack: bool, chats: list[list[dict[str, str]]], max_tokens: int) -> list[dict[str, Any]]:
    with LlamaServer(
        model_path, ctx_size=4096, parallel=2, in_process=False, log_verbosity=1, repack_weights=repack
    ) as srv:
        timings(srv.base_url, chats[0], 1)  # first request pays one-off allocations; not counted
        return [timings(srv.base_url, chat, max_tokens) for chat in chats]


def summarise(samples: list[dict[str, Any]]) -> dict[str, float]:
    return {
        "prompt_tokens_mean": statistics.mean(s["prompt_n"] for s in samples),
        "prompt_tokens_per_s_p50": statistics.median(s["prompt_per_second"] for s in samples),
        "decode_tokens_per_s_p50": statistics.median(s["predicted_per_second"] for s in samples),
        "n": len(samples),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2, help="server starts per variant (alternating)")
    ap.add_argument("--prompts", type=int, default=4, help="prompts per server start")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--model", choices=("auto", "qwen", "smollm2"), default="auto")
    ap.add_argument("--quick", action="store_true", help="one round, two prompts, SmolLM2 unless asked otherwise")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.prompts = 1, 2
        args.model = "smollm2" if args.model == "auto" else args.model
    model, note = choose_model(args.model)
    model_path = ensure_model(model, MODEL_DIR)
    chats = prompts(args.prompts)
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    for round_ in range(args.rounds):
        for name, repack in VARIANTS.items():
            got = measure(model_path, repack, chats, args.max_tokens)
            samples[name] += got
            print(f"round {round_ + 1} {name}: prompt tok/s " + ", ".join(f"{s['prompt_per_second']:.1f}" for s in got))
    by_variant = {name: summarise(s) for name, s in samples.items()}
    plain, repacked = by_variant["plain"], by_variant["repacked"]
    report = {
        "model_note": note,
        "rounds": args.rounds,
        "prompts": args.prompts,
        "max_tokens": args.max_tokens,
        "variants": by_variant,
        "prompt_speed_ratio_plain_over_repacked": plain["prompt_tokens_per_s_p50"]
        / repacked["prompt_tokens_per_s_p50"],
        "decode_speed_ratio_plain_over_repacked": plain["decode_tokens_per_s_p50"]
        / repacked["decode_tokens_per_s_p50"],
        "samples": samples,
    }
    for name, s in by_variant.items():
        print(
            f"{name}: {s['prompt_tokens_mean']:.0f} prompt tokens, prompt {s['prompt_tokens_per_s_p50']:.1f} tok/s, "
            f"decode {s['decode_tokens_per_s_p50']:.1f} tok/s (p50 of {s['n']})"
        )
    print(
        f"plain / repacked: prompt {report['prompt_speed_ratio_plain_over_repacked']:.2f}x, decode "
        f"{report['decode_speed_ratio_plain_over_repacked']:.2f}x"
    )
    write_result("prompt_reading", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
