"""Prompts of the orchestrator's task steps, one module per task, chosen by GenerateRequest.task.

Each module defines `build_messages(request: TaskRequest) -> list[dict[str, str]]` and two constants:
FOCUS (whether the passages go through the query-focused context step first) and MAX_TOKENS (the
task's output ceiling, under the server's own).
"""

from __future__ import annotations

from types import ModuleType

from weaverbird_generator.tasks import (
    answer,
    chart,
    classify,
    company_name,
    figures,
    json_extract,
    plan,
    review,
    rewrite,
)
from weaverbird_generator.tasks.common import TaskRequest

TASKS: dict[str, ModuleType] = {
    "answer": answer,
    "figures": figures,
    "json": json_extract,
    "chart": chart,
    "classify": classify,
    "rewrite": rewrite,
    "plan": plan,
    "review": review,
    "company_name": company_name,
}


def task_module(name: str) -> ModuleType:
    """The prompt module of a task name ("" = answer). Raises KeyError for unknown names."""
    return TASKS[name or "answer"]


__all__ = ["TASKS", "TaskRequest", "task_module"]
