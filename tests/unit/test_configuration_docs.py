"""docs/configuration.md is generated from the settings classes; a setting added or changed without
regenerating the page fails here (CI runs it), so the documented configuration cannot drift."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("settings_docs", REPO / "scripts" / "settings_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_configuration_page_matches_the_settings_classes() -> None:
    script = _script()
    expected = script.render()
    actual = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert actual == expected, f"docs/configuration.md is stale; regenerate it with: {script.COMMAND}"


def test_every_service_settings_class_is_documented() -> None:
    page = _script().render()
    for prefix in ("EMBEDDER_", "RETRIEVER_", "GENERATOR_", "ORCHESTRATOR_", "INGESTER_", "GATEWAY_", "WEAVERBIRD_"):
        assert f"`{prefix}" in page, f"no {prefix}* variable in the generated page"
    # Nested Kafka settings are listed variable by variable, with the `__` delimiter the services read.
    assert "`INGESTER_KAFKA__BOOTSTRAP_SERVERS`" in page
    assert "`ORCHESTRATOR_KAFKA__SASL_PASSWORD`" in page
    # Required peers say so; no row is left without a default column.
    assert re.search(r"\| `ORCHESTRATOR_EMBEDDER_ADDR` \| str \| \*required\* \|", page)
    assert all(line.count(" | ") >= 3 for line in page.splitlines() if line.startswith("| `"))


def test_check_mode_reports_a_stale_page(tmp_path: Path, monkeypatch, capsys) -> None:
    script = _script()
    stale = tmp_path / "configuration.md"
    stale.write_text("# Configuration\n\nold\n", encoding="utf-8")
    monkeypatch.setattr(script, "DOC_PATH", stale)
    assert script.main(["--check"]) == 1
    assert script.COMMAND in capsys.readouterr().err
    stale.write_text(script.render(), encoding="utf-8")
    assert script.main(["--check"]) == 0
