"""Fixtures of the CLI tests that talk to a scripted server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def no_local_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripted server is plaintext: no TLS files from a local `weaverbird up` may be picked up."""
    monkeypatch.setenv("WEAVERBIRD_DATA_DIR", str(tmp_path / "var"))
