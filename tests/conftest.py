"""Shared test fixtures: paths to the repository, the demo KB and the optional shared data."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["fixtures.kafka_broker", "fixtures.web_servers", "fixtures.otlp_collector"]

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def demo_kb() -> Path:
    return REPO / "demo" / "kb"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared evaluation data not found at {SHARED_DATA}")
    return SHARED_DATA
