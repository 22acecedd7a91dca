"""The cited answer (the default task): prompt.py's grounded prompt; examples are not used."""

from __future__ import annotations

from weaverbird_generator.prompt import build_messages as _build
from weaverbird_generator.tasks.common import TaskRequest

FOCUS = True
MAX_TOKENS = 0  # the server's ceiling


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    return _build(request.question, request.passages, request.language)
