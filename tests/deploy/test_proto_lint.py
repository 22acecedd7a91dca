"""The protobuf contracts pass `buf lint` and `buf build` with proto/buf.yaml, whose exceptions are
exactly the findings a rename would fix, and no wider."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from deploy_tools import REPO, dev_tool

PROTO = REPO / "proto"
CONFIG = PROTO / "buf.yaml"


def _buf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([dev_tool("buf"), *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def _findings(proc: subprocess.CompletedProcess[str]) -> set[tuple[str, str]]:
    """(rule, file) of each `buf lint --error-format json` finding."""
    return {(f["type"], f["path"]) for f in map(json.loads, proc.stdout.splitlines()) if f}


def test_buf_lint_and_build_are_clean() -> None:
    lint = _buf("lint", cwd=PROTO)
    assert lint.returncode == 0 and not lint.stdout.strip(), lint.stdout + lint.stderr
    build = _buf("build", "-o", "/dev/null", cwd=PROTO)
    assert build.returncode == 0, build.stderr


def test_every_exception_is_a_real_finding_of_the_standard_rules(tmp_path: Path) -> None:
    """Without the ignore list, STANDARD reports exactly the (rule, file) pairs the list names."""
    shutil.copytree(PROTO, tmp_path / "proto")
    config = yaml.safe_load(CONFIG.read_text())
    ignored = {(rule, path) for rule, paths in config["lint"]["ignore_only"].items() for path in paths}
    config["lint"].pop("ignore_only")
    (tmp_path / "proto" / "buf.yaml").write_text(yaml.safe_dump(config))
    lint = _buf("lint", "--error-format", "json", cwd=tmp_path / "proto")
    assert lint.returncode != 0
    assert _findings(lint) == ignored
    assert config["lint"]["use"] == ["STANDARD"] and "except" not in config["lint"]


def test_a_new_misnamed_rpc_is_still_reported(tmp_path: Path) -> None:
    """The exceptions are per file: a new contract is held to the full rules."""
    shutil.copytree(PROTO, tmp_path / "proto")
    (tmp_path / "proto" / "weaverbird" / "v1" / "audit.proto").write_text(
        'syntax = "proto3";\n\npackage weaverbird.v1;\n\n'
        "message AuditQuery {}\nmessage AuditLog {}\n\n"
        "service AuditService {\n  rpc Fetch(AuditQuery) returns (AuditLog);\n}\n"
    )
    lint = _buf("lint", "--error-format", "json", cwd=tmp_path / "proto")
    found = _findings(lint)
    assert ("RPC_REQUEST_STANDARD_NAME", "weaverbird/v1/audit.proto") in found
    assert ("RPC_RESPONSE_STANDARD_NAME", "weaverbird/v1/audit.proto") in found


@pytest.mark.parametrize("name", ["generator.proto", "orchestrator.proto"])
def test_exceptions_name_existing_files(name: str) -> None:
    assert (PROTO / "weaverbird" / "v1" / name).is_file()
