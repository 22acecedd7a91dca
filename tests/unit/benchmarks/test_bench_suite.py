"""The benchmark suite's report and the fallback replay's web corpus, on small synthetic inputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))  # `benchmarks` is a top-level folder, not an installed package

from benchmarks import fallback_replay, prompt_reading, suite  # noqa: E402
from benchmarks.financebench import Question  # noqa: E402


def _percentiles(p50: float, p99: float) -> dict[str, float]:
    return {"p50_ms": p50, "p99_ms": p99, "mean_ms": p50, "n": 10}


def test_report_renders_measured_numbers_and_marks_missing_and_failed(tmp_path: Path) -> None:
    (tmp_path / "local_path.json").write_text(
        json.dumps(
            {
                "chunks": 1234,
                "backend": "use",
                "embed": _percentiles(4.0, 7.0),
                "search": _percentiles(2.5, 4.0),
                "embed_service_rpc": _percentiles(5.5, 9.0),
                "search_service_rpc": _percentiles(4.5, 7.0),
                "orchestrator_retrieve": _percentiles(13.25, 16.0),
                "ratio_p50": 2.04,
                "ratio_to_service_rpcs_p50": 1.33,
                "measured_at": "2026-11-23 10:00:00",
            }
        )
    )
    (tmp_path / "web_path.json").write_text(json.dumps({"pages": 5}))  # an old file without the numbers
    text = suite.report(tmp_path, failed={"ingest": "exit code 1"})
    local = text.split("## Local retrieval path")[1].split("## ")[0]
    assert "| orchestrator Retrieve over gRPC | 13.2 | 16.0 |" in local
    assert "**2.04**" in local and "**1.33**" in local and "1234 chunks" in local
    assert "lacks 'web_path'" in text
    ingest = text.split("## Ingest throughput")[1].split("## ")[0]
    assert "Failed in this run" in ingest and "Not measured" in ingest
    assert text.count("Not measured") == len(suite.SECTIONS) - 2  # all but local_path and web_path


def test_report_renders_the_answer_ttft_steps(tmp_path: Path) -> None:
    def summary(p50: float, tokens: float) -> dict[str, object]:
        return {
            "questions": 12,
            "ttft": {**_percentiles(p50, p50 * 2), "p95_ms": p50 * 1.5},
            "total": _percentiles(p50 + 2000, p50 * 3),
            "prompt_tokens_mean": tokens,
            "cached_tokens_mean": 225.0,
            "correct": 11,
            "scored": 12,
        }

    focused = {**summary(5200, 514), "ttft_by_task": {"TASK_LOOKUP": _percentiles(4100, 6000) | {"n": 9}}}
    report = {
        "model": "qwen",
        "results": {"full": {"demo": summary(14600, 831)}, "focused": {"demo": focused}},
    }
    (tmp_path / "answer_ttft.json").write_text(json.dumps(report))
    section = suite.report(tmp_path, failed={}).split("## Time to first token of whole answers")[1].split("## ")[0]
    assert "| full, demo | 12 | 14.6 | 21.9 | 16.6 | 831 | 225 | 11 of 12 |" in section
    assert "| focused, demo | 12 | 5.2 | 7.8 | 7.2 | 514 | 225 | 11 of 12 |" in section
    assert "TTFT p50 by task, focused, demo: lookup 4.1 s (9)" in section
    assert "by task, full" not in section  # an older run without the tasks


def test_prompt_reading_summarises_llama_timings_and_renders_the_ratio(tmp_path: Path) -> None:
    plain = [{"prompt_n": 1200, "prompt_per_second": v, "predicted_per_second": 9.0} for v in (40.0, 44.0, 42.0)]
    repacked = [{"prompt_n": 1200, "prompt_per_second": v, "predicted_per_second": 9.5} for v in (30.0, 35.0, 33.0)]
    variants = {"plain": prompt_reading.summarise(plain), "repacked": prompt_reading.summarise(repacked)}
    assert variants["plain"]["prompt_tokens_per_s_p50"] == 42.0 and variants["repacked"]["n"] == 3
    report = {
        "model_note": "qwen",
        "rounds": 1,
        "prompts": 3,
        "variants": variants,
        "prompt_speed_ratio_plain_over_repacked": 42.0 / 33.0,
        "decode_speed_ratio_plain_over_repacked": 9.0 / 9.5,
    }
    (tmp_path / "prompt_reading.json").write_text(json.dumps(report))
    section = suite.report(tmp_path, failed={}).split("## Prompt reading speed")[1].split("## ")[0]
    assert "| plain | 1200 | 42.0 | 9.0 |" in section and "| repacked | 1200 | 33.0 | 9.5 |" in section
    assert "prompt reading **1.27x**, decode 0.95x" in section


def test_prompt_reading_asks_with_the_served_prompt_in_both_languages() -> None:
    chats = prompt_reading.prompts(2)
    assert [m["role"] for m in chats[0]] == ["system", "user"]
    assert "<information>" in chats[0][1]["content"] and "资料" in chats[1][1]["content"]
    assert chats[0][1]["content"].count("</passage>") == 3


def test_suite_rejects_an_unknown_benchmark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEAVERBIRD_BENCH_RESULTS", str(tmp_path))
    assert suite.main(["--only", "no_such_benchmark"]) == 2


def test_filing_pages_hold_evidence_pages_and_neighbours_and_search_maps_companies(tmp_path: Path) -> None:
    fb = tmp_path / "financebench"
    fb.mkdir()
    rows = [("ACME_2022_10K", n, f"ACME page {n + 1} text") for n in range(8)]
    rows.append(("BOLT_2023_10K", 0, "Bolt page 1 <b>bold</b> text"))
    lines = [json.dumps({"doc_name": d, "page_num": n, "text": t}) for d, n, t in rows]
    fb.joinpath("pages.jsonl").write_text("\n".join(lines))
    qs = [
        Question("q1", "What was ACME's revenue?", "ACME_2022_10K", "ACME", (4,)),
        Question("q2", "Bolt margin?", "BOLT_2023_10K", "Bolt", (1,)),
    ]
    filings = fallback_replay.filings(tmp_path, qs)
    acme = filings["ACME_2022_10K"].html
    assert [f"page {n} text" in acme for n in range(1, 9)] == [False, False, True, True, True, False, False, False]
    assert "&lt;b&gt;bold&lt;/b&gt;" in filings["BOLT_2023_10K"].html  # page text is escaped, never markup

    class Server:
        def url(self, path: str) -> str:
            return f"http://127.0.0.1:1{path}"

    results = fallback_replay.search_results(filings, Server(), pages=5, stream=qs)  # type: ignore[arg-type]
    assert set(results) == {"what was acme's revenue?", "bolt margin?"}
    assert [h.url for h in results["what was acme's revenue?"]] == ["http://127.0.0.1:1/filings/ACME_2022_10K.html"]
    assert fallback_replay._doc_of(results["bolt margin?"][0].url) == "BOLT_2023_10K"


def test_answer_ttft_scores_a_demo_answer_by_its_amount_not_its_digits() -> None:
    from benchmarks.answer_ttft import right_figure

    expected = "6.124亿美元（USD 612.4 million），同比增长6.7%"
    assert right_figure("营业收入是612.4 million USD。[1]", expected)
    assert right_figure("营业收入是6.12亿美元[1]。", expected)
    assert not right_figure("营业收入是612.4亿美元[1]。", expected)  # the digits, a hundred times the amount
    assert not right_figure("营业收入同比增长6.7%[1]。", expected)  # the growth rate is not the answer
    assert right_figure(
        "Revenue was USD 1,284.6 million [1].", "USD 1,284.6 million (about USD 1.28 billion), up 16.5%"
    )
