"""Terminal lines for a task's parts (stages, calculation, JSON) and the conversation file's pure helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from weaverbird.v1 import common_pb2, orchestrator_pb2
from weaverbird_cli import render
from weaverbird_cli.conversation import (
    MAX_TURN_CHARS,
    HistoryFileError,
    Turn,
    exchange,
    history_proto,
    load_history,
    save_history,
)


def test_a_passed_review_says_so_and_other_stages_do_not_claim_a_verdict() -> None:
    review = orchestrator_pb2.StageEvent(stage="review", round=2, ms=1534.6, passed=True)
    assert render.stage_line(review) == "[stage] review round 2 · 1535ms · passed"
    execute = orchestrator_pb2.StageEvent(stage="execute", round=1, ms=90, sub_questions=["revenue 2023?"])
    assert render.stage_line(execute) == "[stage] execute round 1 · 90ms\n    - revenue 2023?"


def test_valid_json_is_pretty_and_a_repair_is_admitted() -> None:
    block = render.structured_block(orchestrator_pb2.StructuredAnswer(json='{"名称":"青松","占比":5}', valid=True))
    assert block == 'JSON (valid):\n{\n  "名称": "青松",\n  "占比": 5\n}'
    repaired = orchestrator_pb2.StructuredAnswer(json="{}", valid=True, repaired=True)
    assert render.structured_block(repaired).startswith("JSON (valid, repaired):")


def test_output_that_is_not_json_is_shown_raw_under_invalid() -> None:
    block = render.structured_block(
        orchestrator_pb2.StructuredAnswer(json="{name: Acme", valid=False, errors=["not JSON"])
    )
    assert block == "JSON (invalid: not JSON):\n{name: Acme"
    empty = render.structured_block(orchestrator_pb2.StructuredAnswer(valid=False, missing_keys=["a"]))
    assert empty == "JSON (invalid: missing keys: a):\n(none produced)"


def test_a_calculation_without_figures_says_nothing_was_computed() -> None:
    assert render.calculation_block(orchestrator_pb2.Calculation()) == "Calculation:\n  no result was computed"
    percent = orchestrator_pb2.Calculation(
        figures=[orchestrator_pb2.Figure(label="a", value=3, passage=4)], formula="a * 2", result=6.0, unit="%"
    )
    assert render.calculation_block(percent).splitlines()[1:] == ["  [4] a = 3", "  formula: a * 2", "  result: 6 %"]


def test_the_route_line_names_the_task_only_when_one_was_decided() -> None:
    assert "task=" not in render.route_report(orchestrator_pb2.RouteEvent())
    route = orchestrator_pb2.RouteEvent(task=common_pb2.TASK_ANALYSIS, standalone_question="same?")
    report = render.route_report(route, asked=" same? ")
    assert "task=analysis" in report and "(by" not in report and "[standalone question]" not in report


def test_history_file_round_trip_keeps_chinese_text(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    assert load_history(path) == []
    turns = [*exchange("青松新能源2023年营收？", "86.47亿元[1]"), *exchange("那2024年呢？", "  ")]
    save_history(path, turns)
    assert load_history(path) == [
        Turn("user", "青松新能源2023年营收？"),
        Turn("assistant", "86.47亿元[1]"),
        Turn("user", "那2024年呢？"),
    ]
    assert "青松" in path.read_text(encoding="utf-8")  # readable, not \\u escapes
    assert [p.name for p in tmp_path.iterdir()] == ["h.json"]  # no temporary file left behind
    path.write_text("", encoding="utf-8")
    assert load_history(path) == []


def test_non_list_history_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"turns": []}), encoding="utf-8")
    with pytest.raises(HistoryFileError, match="expected a JSON list"):
        load_history(path)


def test_sent_turns_are_clipped_to_what_the_orchestrator_accepts() -> None:
    long = Turn("assistant", "x" * (MAX_TURN_CHARS + 50))
    sent = history_proto([Turn("user", "q"), long, Turn("user", "   ")], max_turns=20)
    assert [len(t.text) for t in sent] == [1, MAX_TURN_CHARS]  # blank turns are not sent
    assert history_proto([Turn("user", "q")], max_turns=0) == []
