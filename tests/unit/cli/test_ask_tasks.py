"""`weaverbird ask` with issue 15's options, against a scripted OrchestratorService on 127.0.0.1 (a real gRPC
server streaming fixed AskEvents: the edge of the CLI under test). Checks what the CLI sends (task, JSON
keys, rounds, the history file's turns) and what it prints (task and standalone question in the route
line, each stage, the calculation, the JSON with its validity, the chart's PNG), and the history file's
round trip."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.scripted_orchestrator import ScriptedOrchestrator, answer_events
from weaverbird.v1 import common_pb2, orchestrator_pb2
from weaverbird_cli.__main__ import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def script(request: orchestrator_pb2.AskRequest) -> list[orchestrator_pb2.AskEvent]:
    """Answers "answer to <question>"; a question naming a task gets that task's parts."""
    question = request.question
    route = orchestrator_pb2.RouteEvent(
        route=orchestrator_pb2.ROUTE_LOCAL,
        top_k=5,
        top_j=3,
        # A follow-up (history given) is searched as a rewrite; a first question as typed.
        standalone_question=f"{question} (about revenue)" if request.history else question,
        task=request.task or common_pb2.TASK_LOOKUP,
        task_decided_by="request" if request.task else "rules",
    )
    done = orchestrator_pb2.AnswerDone(finish_reason="stop", model_id="scripted", task=route.task)
    stages: list[orchestrator_pb2.StageEvent] = []
    if "calculate" in question:
        done.calculation.CopyFrom(
            orchestrator_pb2.Calculation(
                figures=[
                    orchestrator_pb2.Figure(label="revenue 2023", value=1284.6, unit="USD million", passage=1),
                    orchestrator_pb2.Figure(label="revenue 2022", value=1100.0, unit="USD million", passage=2),
                ],
                formula="revenue 2023 - revenue 2022",
                result=184.6,
                unit="USD million",
                result_text="USD 184.6 million",
            )
        )
        stages.append(orchestrator_pb2.StageEvent(stage="extract", round=1, ms=812.4, detail="2 figures"))
    if "extract" in question:
        done.structured.CopyFrom(
            orchestrator_pb2.StructuredAnswer(
                json='{"name": "Acme", "share": 12.5}', valid=False, missing_keys=["weight"], errors=["late"]
            )
        )
    if "chart" in question:
        done.chart.CopyFrom(
            orchestrator_pb2.ChartSpec(
                type="bar",
                title="Revenue by year",
                categories=["2022", "2023"],
                series=[orchestrator_pb2.ChartSeries(name="revenue", values=[1100.0, 1284.6])],
                unit="USD million",
            )
        )
        stages += [
            orchestrator_pb2.StageEvent(stage="plan", round=1, ms=30.0, sub_questions=["revenue 2022?", "2023?"]),
            orchestrator_pb2.StageEvent(stage="review", round=1, ms=8.0, detail="claim 2 uncited", passed=False),
        ]
    return answer_events(f"answer to {question}", route=route, stages=stages, done=done)


pytestmark = pytest.mark.usefixtures("no_local_credentials")


@pytest.fixture(scope="module")
def orchestrator() -> Iterator[ScriptedOrchestrator]:
    with ScriptedOrchestrator(script) as served:
        yield served


def ask(orchestrator: ScriptedOrchestrator, *args: str) -> orchestrator_pb2.AskRequest:
    assert main(["ask", *args, "--addr", orchestrator.addr]) == 0
    return orchestrator.requests[-1]


def printed(orchestrator: ScriptedOrchestrator, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """What `weaverbird ask` with `args` prints."""
    ask(orchestrator, *args)
    return capsys.readouterr().out


def test_task_keys_and_rounds_are_sent_and_the_task_printed(
    orchestrator: ScriptedOrchestrator, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = ask(
        orchestrator, "extract holdings", "--task", "extraction", "--json-keys", "name, share ,", "--max-rounds", "0"
    )
    assert sent.task == common_pb2.TASK_EXTRACTION
    assert list(sent.json_keys) == ["name", "share"]
    assert sent.HasField("max_rounds") and sent.max_rounds == 0
    out = capsys.readouterr().out
    assert "task=extraction (by request)" in out.splitlines()[0]
    assert "[standalone question]" not in out  # searched as typed: nothing to show


def test_defaults_leave_task_and_rounds_to_the_orchestrator(
    orchestrator: ScriptedOrchestrator, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = ask(orchestrator, "what was revenue?")
    assert sent.task == common_pb2.TASK_UNSPECIFIED and not sent.HasField("max_rounds") and not sent.json_keys
    assert "task=lookup (by rules)" in capsys.readouterr().out


def test_bad_option_values_are_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--task", "poem"], ["--max-rounds", "-1"], ["--json-keys", " , "]):
        with pytest.raises(SystemExit) as exit_:
            main(["ask", "q", *args])
        assert exit_.value.code == 2, args
    assert "not a number of rounds" in capsys.readouterr().err


def test_a_calculation_prints_figures_formula_and_result_after_the_answer(
    orchestrator: ScriptedOrchestrator, capsys: pytest.CaptureFixture[str]
) -> None:
    out = printed(orchestrator, capsys, "calculate the revenue change")
    assert "[stage] extract round 1 · 812ms · 2 figures" in out
    block = out[out.index("Calculation:") :]
    assert "  [1] revenue 2023 = 1,284.6 USD million" in block
    assert "  [2] revenue 2022 = 1,100 USD million" in block
    assert "  formula: revenue 2023 - revenue 2022" in block
    assert '  result: 184.6 USD million (shown as "USD 184.6 million")' in block
    assert out.index("answer to calculate") < out.index("Calculation:") < out.index("[done]")


def test_invalid_json_is_printed_as_invalid_with_its_reasons(
    orchestrator: ScriptedOrchestrator, capsys: pytest.CaptureFixture[str]
) -> None:
    out = printed(orchestrator, capsys, "extract the holdings")
    assert "JSON (invalid: late; missing keys: weight):" in out
    pretty = out[out.index("JSON (invalid") :].split("\n", 1)[1]
    assert pretty.startswith('{\n  "name": "Acme",\n  "share": 12.5\n}')


def test_a_chart_is_written_as_png_and_its_path_printed_after_the_stages(
    orchestrator: ScriptedOrchestrator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    charts = tmp_path / "charts"
    out = printed(orchestrator, capsys, "chart revenue", "--chart-dir", str(charts))
    lines = out.splitlines()
    plan = lines.index("[stage] plan round 1 · 30ms")
    assert lines[plan + 1 : plan + 3] == ["    - revenue 2022?", "    - 2023?"]
    assert "[stage] review round 1 · 8ms · failed · claim 2 uncited" in lines
    assert lines.index("[stage] review round 1 · 8ms · failed · claim 2 uncited") < lines.index("Sources:")
    chart_line = next(line for line in lines if line.startswith("Chart: "))
    path = Path(chart_line.removeprefix("Chart: "))
    assert path.parent == charts and path.name.endswith("-revenue-by-year.png")
    assert path.read_bytes().startswith(PNG_MAGIC)
    ask(orchestrator, "chart revenue", "--chart-dir", str(charts))
    assert len(list(charts.glob("*.png"))) == 2  # a second chart never overwrites the first


def test_the_history_file_carries_the_conversation_from_one_ask_to_the_next(
    orchestrator: ScriptedOrchestrator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "conversation" / "history.json"
    first = ask(orchestrator, "What was revenue in 2022?", "--history-file", str(history))
    assert not first.history  # no file yet: a new conversation
    assert "[standalone question]" not in capsys.readouterr().out

    second = ask(orchestrator, "and in 2023?", "--history-file", str(history))
    assert [(t.role, t.text) for t in second.history] == [
        ("user", "What was revenue in 2022?"),
        ("assistant", "answer to What was revenue in 2022?"),
    ]
    out = capsys.readouterr().out
    assert "[standalone question] and in 2023? (about revenue)" in out.splitlines()[1]

    turns = json.loads(history.read_text(encoding="utf-8"))
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[2:] == [
        {"role": "user", "text": "and in 2023?"},
        {"role": "assistant", "text": "answer to and in 2023?"},
    ]


def test_only_the_latest_turns_are_sent_starting_with_a_question(
    orchestrator: ScriptedOrchestrator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "long.json"
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "text": f"turn {i}"} for i in range(9)]
    history.write_text(json.dumps(turns), encoding="utf-8")
    monkeypatch.setenv("WEAVERBIRD_HISTORY_TURNS", "4")
    sent = ask(orchestrator, "next?", "--history-file", str(history))
    # The last four are turns 5..8; turn 5 is an answer, so the history sent starts at turn 6.
    assert [t.text for t in sent.history] == ["turn 6", "turn 7", "turn 8"]
    assert len(json.loads(history.read_text(encoding="utf-8"))) == 11  # the file keeps everything


def test_a_malformed_history_file_is_an_error_and_is_left_alone(
    orchestrator: ScriptedOrchestrator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "bad.json"
    for content in ('{"role": "user"}', '[{"role": "system", "text": "x"}]', "[1,"):
        history.write_text(content, encoding="utf-8")
        before = len(orchestrator.requests)
        assert main(["ask", "q", "--addr", orchestrator.addr, "--history-file", str(history)]) == 2
        assert len(orchestrator.requests) == before  # nothing asked
        assert history.read_text(encoding="utf-8") == content
        assert "history file" in capsys.readouterr().err


def test_a_failed_call_leaves_the_history_file_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "history.json"
    history.write_text('[{"role": "user", "text": "q1"}, {"role": "assistant", "text": "a1"}]', encoding="utf-8")
    before = history.read_text(encoding="utf-8")
    with ScriptedOrchestrator(script) as served:
        addr = served.addr
    # The server is gone: UNAVAILABLE.
    assert main(["ask", "q2", "--addr", addr, "--history-file", str(history)]) == 1
    assert "error: UNAVAILABLE" in capsys.readouterr().err
    assert history.read_text(encoding="utf-8") == before
