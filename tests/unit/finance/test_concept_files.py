"""The concept table is a folder of YAML files, one per statement part, joined in file-name order."""

import tomllib
from pathlib import Path

import pytest
import yaml
from weaverbird_common.finance import tables
from weaverbird_common.finance.concepts import CONCEPTS

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "libs/common/src/weaverbird_common/finance/data/concepts"


def _fake_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, files: dict[str, str]) -> None:
    (tmp_path / "data" / "t").mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / "data" / "t" / name).write_text(text)
    monkeypatch.setattr(tables.resources, "files", lambda _package: tmp_path)


def test_concepts_join_the_files_in_name_order() -> None:
    files = sorted(FOLDER.glob("*.yaml"))
    assert len(files) > 1
    ids = [row["id"] for f in files for row in yaml.safe_load(f.read_text("utf-8"))]
    assert list(CONCEPTS) == ids
    assert not (FOLDER.parent / "concepts.yaml").exists()  # one source for the table


def test_each_concept_file_is_short_and_packaged() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["weaverbird_common"]
    for f in FOLDER.glob("*.yaml"):
        assert len(f.read_text("utf-8").splitlines()) <= 500, f.name
    # setuptools globs from the package folder; "*" does not cross "/" (as in pathlib's glob).
    packaged = {f for p in patterns for f in FOLDER.parents[2].glob(p)}
    assert set(FOLDER.glob("*.yaml")) <= packaged


def test_folder_parts_read_in_name_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_data(monkeypatch, tmp_path, {"20_b.yaml": "- id: b\n", "10_a.yaml": "- id: a\n", "notes.txt": "x"})
    assert [r["id"] for r in tables.read_table("t")] == ["a", "b"]


def test_an_id_in_two_files_fails_naming_both(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_data(monkeypatch, tmp_path, {"10_a.yaml": "- id: cash\n", "20_b.yaml": "- id: x\n- id: cash\n"})
    with pytest.raises(ValueError, match=r"listed twice: cash in finance/data/t/10_a.yaml, finance/data/t/20_b"):
        tables.read_table("t")


def test_a_bad_part_fails_naming_its_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_data(monkeypatch, tmp_path, {"10_a.yaml": "- id: a\n", "20_b.yaml": "id: b\n"})
    with pytest.raises(ValueError, match=r"t/20_b.yaml: expected a list of mappings"):
        tables.read_table("t")


def test_an_empty_folder_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_data(monkeypatch, tmp_path, {"readme.txt": "nothing here"})
    with pytest.raises(ValueError, match=r"no \.yaml files"):
        tables.read_table("t")
