"""Milliseconds since a `time.perf_counter()` reading: the unit every stage timing is reported in."""

from __future__ import annotations

import time


def ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
