"""benchmarks/rerank_latency on a tiny cross-encoder the test builds: every runtime timed, in turns."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixtures.tiny_models import build_tiny_cross_encoder

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))  # `benchmarks` is a top-level folder, not an installed package

from benchmarks import rerank_latency  # noqa: E402


def test_runtimes_are_timed_in_turns_and_spearman_reads_order() -> None:
    calls: list[str] = []
    runtimes = {name: (lambda q, t, name=name: calls.append(name) or [0.0] * len(t)) for name in ("a", "b")}
    timings = rerank_latency._time(runtimes, ["x", "y"], repeats=3)  # type: ignore[arg-type]
    assert calls == ["a", "b"] * 4 and all(len(ms) == 3 for ms in timings.values())  # warm-up, then in turns
    assert rerank_latency._spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert rerank_latency._spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    texts = rerank_latency._candidates(5)
    assert len(set(texts)) == 5 and min(len(t.split()) for t in texts) > 256  # every pair reaches the limit


def test_the_benchmark_times_torch_and_both_onnx_variants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = build_tiny_cross_encoder(tmp_path / "ce")
    argv = ["rerank_latency", "--model", str(model), "--candidates", "3", "--tokens", "32", "--repeats", "2"]
    monkeypatch.setattr(sys, "argv", argv)
    rerank_latency.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if "candidates" in line and "p50" in line]
    assert [row.split()[2:4] for row in rows] == [["torch", "p50"], ["onnx", "fp32"], ["onnx", "int8"]]
    assert (model / "onnx" / "model.int8.onnx").is_file()
