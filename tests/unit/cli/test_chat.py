"""`weaverbird chat`: each question goes out with the conversation so far, `/reset` starts a new one, an empty
line or end of input quits; piped stdin works line by line. Against a scripted OrchestratorService on
127.0.0.1 (a real gRPC server streaming fixed AskEvents: the edge of the CLI under test)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.scripted_orchestrator import ScriptedOrchestrator, answer_events, scripted_route
from weaverbird.v1 import common_pb2, orchestrator_pb2
from weaverbird_cli.__main__ import main
from weaverbird_cli.chat import questions


def script(request: orchestrator_pb2.AskRequest) -> list[orchestrator_pb2.AskEvent]:
    route = scripted_route(
        standalone_question=f"{request.question} [with {len(request.history)} turns]",
        task=common_pb2.TASK_LOOKUP,
        task_decided_by="rules",
    )
    if request.question == "withheld?":
        done = orchestrator_pb2.AnswerDone(
            answer_check=orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED,
            unsupported_numbers=["99"],
            replacement_answer="The provided information is insufficient.",
        )
        return answer_events("It was 99", route=route, done=done)
    return answer_events(f"answer to {request.question}", route=route)


pytestmark = pytest.mark.usefixtures("no_local_credentials")


@pytest.fixture(scope="module")
def orchestrator() -> Iterator[ScriptedOrchestrator]:
    with ScriptedOrchestrator(script) as served:
        yield served


def chat(
    orchestrator: ScriptedOrchestrator, typed: str, monkeypatch: pytest.MonkeyPatch
) -> list[orchestrator_pb2.AskRequest]:
    """Runs `weaverbird chat` with `typed` as piped stdin; the requests it made."""
    before = len(orchestrator.requests)
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    assert main(["chat", "--addr", orchestrator.addr]) == 0
    return orchestrator.requests[before:]


def turns(request: orchestrator_pb2.AskRequest) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in request.history]


def test_each_question_carries_the_conversation_and_reset_clears_it(
    orchestrator: ScriptedOrchestrator, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = chat(orchestrator, "revenue 2022?\nand 2023?\n/reset\nprofit?\n", monkeypatch)
    assert [r.question for r in sent] == ["revenue 2022?", "and 2023?", "profit?"]
    assert turns(sent[0]) == []
    assert turns(sent[1]) == [("user", "revenue 2022?"), ("assistant", "answer to revenue 2022?")]
    assert turns(sent[2]) == []  # after /reset
    out = capsys.readouterr().out
    # A transcript: each piped question after the prompt, the rewrite when it differs, the answer.
    assert "you> and 2023?\n[route]" in out
    assert "[standalone question] and 2023? [with 2 turns]" in out
    assert "answer to and 2023?" in out and "[new conversation]" in out


def test_an_empty_line_quits(
    orchestrator: ScriptedOrchestrator, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = chat(orchestrator, "first?\n\nnever asked?\n", monkeypatch)
    assert [r.question for r in sent] == ["first?"]
    assert "never asked" not in capsys.readouterr().out


def test_a_withheld_answer_enters_the_history_as_its_replacement(
    orchestrator: ScriptedOrchestrator, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = chat(orchestrator, "withheld?\nwhy?\n", monkeypatch)
    assert turns(sent[1]) == [("user", "withheld?"), ("assistant", "The provided information is insufficient.")]


def test_on_a_terminal_questions_are_read_with_a_prompt_until_end_of_input() -> None:
    typed = iter(["  first?  ", "/reset"])
    prompts: list[str] = []

    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    assert list(questions(io.StringIO(), interactive=True, read_line=read_line)) == ["first?", "/reset"]
    assert prompts == ["you> "] * 3


def test_the_command_works_with_stdin_piped_from_another_process(
    orchestrator: ScriptedOrchestrator, tmp_path: Path
) -> None:
    env = {**os.environ, "WEAVERBIRD_DATA_DIR": str(tmp_path / "var"), "PYTHONUNBUFFERED": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "weaverbird_cli", "chat", "--addr", orchestrator.addr],
        input="revenue 2022?\nand 2023?\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("[done]") == 2
    assert "answer to and 2023?" in result.stdout
    assert "\033[K" not in result.stdout + result.stderr  # no terminal status drawn into a pipe
    asked = [r for r in orchestrator.requests if r.question == "and 2023?"][-1]
    assert turns(asked) == [("user", "revenue 2022?"), ("assistant", "answer to revenue 2022?")]
