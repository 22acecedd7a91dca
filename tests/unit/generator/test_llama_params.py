"""What LlamaServer asks llama.cpp for: the settings that change its speed on a CPU."""

from __future__ import annotations

from pathlib import Path

import pytest
from weaverbird_generator.llama_server import LlamaServer, _parse_args
from weaverbird_generator.settings import GeneratorSettings


@pytest.mark.parametrize("repack", [False, True])
def test_weight_repacking_follows_the_setting(repack: bool) -> None:
    params = LlamaServer(Path("model.gguf"), parallel=2, ctx_size=4096, repack_weights=repack)._params()
    assert params.no_extra_bufts is (not repack)
    assert params.n_ctx == 8192 and params.n_parallel == 2


def test_plain_weights_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    # Repacked Q4_K_M weights read prompts ~20 % slower on the 2-core AVX2 machine (benchmarks/prompt_reading.py).
    monkeypatch.delenv("GENERATOR_LLAMA_REPACK", raising=False)
    assert GeneratorSettings().llama_repack is False
    assert LlamaServer(Path("model.gguf"))._params().no_extra_bufts is True
    monkeypatch.setenv("GENERATOR_LLAMA_REPACK", "true")
    assert GeneratorSettings().llama_repack is True


def test_child_command_line_carries_the_flag() -> None:
    assert _parse_args(["--model", "m.gguf", "--repack-weights"]).repack_weights is True
    assert _parse_args(["--model", "m.gguf"]).repack_weights is False
