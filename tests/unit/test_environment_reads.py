"""Only settings modules read the environment (the rule `make lint` greps for, held in CI too)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READS = re.compile(r"os\.getenv|os\.environ\.get\(|= *os\.environ\[")
TREES = ("services", "libs/common/src/weaverbird_common", "cli")


def test_only_settings_modules_read_the_environment() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for tree in TREES
        for path in sorted((ROOT / tree).rglob("*.py"))
        if path.name != "settings.py" and "_pb2" not in path.name
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if READS.search(line)
    ]
    assert not offenders, f"read the environment through a settings class instead: {offenders}"
