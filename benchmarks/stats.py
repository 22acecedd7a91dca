"""Percentiles and timing helpers shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    arr = np.asarray(samples_ms)
    return {
        "p50_ms": float(np.percentile(arr, 50)),
        "p95_ms": float(np.percentile(arr, 95)),
        "p99_ms": float(np.percentile(arr, 99)),
        "mean_ms": float(arr.mean()),
        "n": int(arr.size),
    }


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """Runs `fn` and returns its result and the elapsed milliseconds."""
    start = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - start) * 1000.0
