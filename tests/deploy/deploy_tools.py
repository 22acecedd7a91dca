"""Helpers of the deployment tests: the repository root and the linters of requirements/dev.txt."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def dev_tool(name: str) -> str:
    """A command-line tool installed by a PyPI package of requirements/dev.txt, next to this Python."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: pip install -r requirements/dev.txt (it pins the package that ships it)")
    return found
