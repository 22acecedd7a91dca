"""The conversation a client holds: earlier turns sent as AskRequest.history, kept in memory (`chat`) or in a
JSON file (`ask --history-file`), so any orchestrator replica can answer a follow-up.

The file is a JSON list of {"role": "user" | "assistant", "text": ...}, oldest first; each answered
question appends its two turns, so the next call continues the conversation.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from weaverbird.v1 import common_pb2

ROLES = ("user", "assistant")
# The orchestrator refuses longer turns (its validation.MAX_TURN_CHARS); an answer is far shorter.
MAX_TURN_CHARS = 8_000


class HistoryFileError(ValueError):
    """The history file is not a JSON list of {role, text} turns."""


@dataclass(frozen=True)
class Turn:
    role: str
    text: str


def load_history(path: Path) -> list[Turn]:
    """The turns in `path`; [] when it does not exist yet (the first question of a conversation)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise HistoryFileError(f"{path}: {exc.strerror}") from None
    if not raw.strip():
        return []
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise HistoryFileError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list):
        raise HistoryFileError(f"{path}: expected a JSON list of {{role, text}} turns")
    turns = []
    for i, item in enumerate(data):
        if not (isinstance(item, dict) and item.get("role") in ROLES and isinstance(item.get("text"), str)):
            raise HistoryFileError(f'{path}: turn {i} is not {{"role": "user"|"assistant", "text": ...}}')
        turns.append(Turn(item["role"], item["text"]))
    return turns


def save_history(path: Path, turns: Sequence[Turn]) -> None:
    """Writes the turns atomically (a crash leaves the old file or the new one, never half of one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps([{"role": t.role, "text": t.text} for t in turns], ensure_ascii=False, indent=2) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def exchange(question: str, answer: str) -> list[Turn]:
    """The turns one answered question adds; no assistant turn when nothing was answered (the
    orchestrator refuses empty turns)."""
    turns = [Turn("user", question)]
    if answer.strip():
        turns.append(Turn("assistant", answer.strip()))
    return turns


def history_proto(turns: Sequence[Turn], max_turns: int) -> list[common_pb2.Turn]:
    """The latest `max_turns` turns as sent: starting with a question, each clipped to what the
    orchestrator accepts. The orchestrator refuses more than its max_history_turns."""
    recent = list(turns[-max_turns:]) if max_turns > 0 else []
    while recent and recent[0].role != "user":
        recent.pop(0)
    return [common_pb2.Turn(role=t.role, text=t.text[:MAX_TURN_CHARS]) for t in recent if t.text.strip()]
