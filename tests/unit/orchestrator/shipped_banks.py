"""The few-shot banks the orchestrator ships (tasks/data/examples/<task>.jsonl), read back as rows."""

from __future__ import annotations

import json
from pathlib import Path

EXAMPLES = Path(__file__).parents[3] / "services/orchestrator/src/weaverbird_orchestrator/tasks/data/examples"


def shipped_rows(task: str) -> list[dict]:
    """The rows of `task`.jsonl (language, question, answer), blank lines left out."""
    text = (EXAMPLES / f"{task}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
