"""Shared plumbing of the stack-level benchmarks: ports, result files, demo questions, machine facts."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEMO_KB = REPO / "demo" / "kb"
DEFAULT_RESULTS = Path(__file__).resolve().parent / "results"
# Set by `benchmarks.suite --quick` so smoke runs never overwrite the committed full-size results.
RESULTS_ENV = "WEAVERBIRD_BENCH_RESULTS"


def results_dir() -> Path:
    path = Path(os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_result(name: str, report: dict[str, Any]) -> Path:
    """Writes `<results>/<name>.json` with the time and machine it was measured on."""
    report = {**report, "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_facts()}
    path = results_dir() / f"{name}.json"
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    print(f"wrote {path}")
    return path


@dataclass(frozen=True)
class DemoQuestion:
    company: str
    language: str
    question: str
    expected: str
    source_file: str


def demo_questions() -> list[DemoQuestion]:
    """The bilingual questions of demo/kb/QUESTIONS.md (one table row each)."""
    out: list[DemoQuestion] = []
    for line in (DEMO_KB / "QUESTIONS.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].isdigit():
            out.append(DemoQuestion(cells[1], cells[2], cells[3], cells[4], cells[5]))
    return out


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown"
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.processor() or "unknown"


def machine_facts() -> dict[str, Any]:
    """What the numbers depend on: cores, load when measured, memory, commit."""
    facts: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "git_commit": git_commit(),
    }
    try:
        meminfo = Path("/proc/meminfo").read_text()
        total_kb = int(re.search(r"MemTotal:\s+(\d+)", meminfo).group(1))  # type: ignore[union-attr]
        facts["memory_gib"] = round(total_kb / 2**20, 1)
    except (OSError, AttributeError):
        pass
    return facts
