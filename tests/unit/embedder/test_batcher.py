"""The micro-batcher: concurrent requests share model calls, results return in order, errors reach callers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import numpy as np
import pytest
from weaverbird_embedder.batcher import MicroBatcher


class RecordingModel:
    """Returns each text's length as its vector and records the batches and threads it ran in."""

    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()
        self.fail = fail
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, texts: Sequence[str], kind: str) -> np.ndarray:
        self.gate.wait(5)
        self.threads.add(threading.current_thread().name)
        self.batches.append(list(texts))
        if self.fail:
            raise RuntimeError("model failed")
        return np.array([[float(len(t))] for t in texts], dtype=np.float32)


async def test_concurrent_requests_share_batches_and_keep_order() -> None:
    model = RecordingModel()
    batcher = MicroBatcher(model, max_batch=64)
    model.gate.clear()  # hold the first model call so the others queue up behind it
    first = asyncio.create_task(batcher.embed(["a" * 9] * 2, "passage"))
    await asyncio.sleep(0.05)
    rest = [asyncio.create_task(batcher.embed(["b" * n], "passage")) for n in range(1, 11)]
    await asyncio.sleep(0.05)
    model.gate.set()
    results = await asyncio.gather(first, *rest)
    assert [r[:, 0].tolist() for r in results[1:]] == [[float(n)] for n in range(1, 11)]
    assert len(model.batches) == 2 and len(model.batches[1]) == 10  # the ten waiting requests: one call
    await batcher.close()


async def test_lone_query_runs_inline_and_passages_on_the_worker() -> None:
    model = RecordingModel()
    batcher = MicroBatcher(model, max_batch=8)
    await batcher.embed(["what was revenue?"], "query")
    await batcher.embed(["a passage"], "passage")
    assert any(name.startswith("embed") for name in model.threads)
    assert threading.current_thread().name in model.threads
    await batcher.close()


async def test_model_errors_reach_every_caller_in_the_batch() -> None:
    batcher = MicroBatcher(RecordingModel(fail=True), max_batch=8)
    with pytest.raises(RuntimeError, match="model failed"):
        await batcher.embed(["x", "y"], "passage")
    await batcher.close()
