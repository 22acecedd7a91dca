"""The concept and metric tables are data files: they load, are packaged, and bad rows fail loudly."""

import tomllib
from pathlib import Path

import pytest
from weaverbird_common.finance import concepts, metrics, tables
from weaverbird_common.finance.concepts import CONCEPTS
from weaverbird_common.finance.metrics import METRICS

ROOT = Path(__file__).resolve().parents[3]


def test_tables_load_in_file_order() -> None:
    rows = tables.read_table("concepts")
    assert [r["id"] for r in rows] == list(CONCEPTS)
    assert next(iter(CONCEPTS)) == "revenue"
    assert len(METRICS) >= 40


def test_every_metric_input_is_a_known_concept() -> None:
    for metric in METRICS.values():
        for _, inputs in ((metric.expression, metric.inputs), *metric.alternatives):
            for item in inputs.values():
                assert item.concept in CONCEPTS, (metric.id, item.concept)
                assert item.period in ("t", "t-1", "avg"), (metric.id, item.period)


def test_data_files_are_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["weaverbird_common"]
    assert "finance/data/*.yaml" in patterns
    assert (ROOT / "libs/common/src/weaverbird_common/finance/data/metrics.yaml").is_file()


def test_words_rejects_values_yaml_reads_as_other_types() -> None:
    with pytest.raises(ValueError, match="string"):
        tables.words({"id": "x", "en": ["yes", True]}, "en")
    assert tables.words({"id": "x"}, "zh") == ()


def test_unknown_fields_fail() -> None:
    with pytest.raises(ValueError, match="unknown fields"):
        concepts._concept({"id": "x", "statement": "income", "kind": "flow", "en": [], "synonyms": []})
    with pytest.raises(ValueError, match="unknown fields"):
        metrics._metric({"id": "x", "en": [], "expression": "a", "inputs": {}, "unit": "ratio", "formula": ""})


def test_duplicate_ids_fail(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "dup.yaml").write_text("- id: a\n- id: a\n")
    monkeypatch.setattr(tables.resources, "files", lambda _package: tmp_path)
    with pytest.raises(ValueError, match="twice"):
        tables.read_table("dup")
