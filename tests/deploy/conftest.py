"""Tools the deployment tests run: promtool, found or installed by scripts/promtool.sh."""

from __future__ import annotations

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
