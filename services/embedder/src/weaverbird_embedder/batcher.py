"""Groups concurrent embedding requests into model batches without adding latency when idle."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

log = logging.getLogger(__name__)

Kind = Literal["query", "passage"]
EmbedFn = Callable[[Sequence[str], Kind], np.ndarray]


@dataclass
class _Pending:
    texts: Sequence[str]
    kind: Kind
    future: asyncio.Future[np.ndarray] = field(repr=False)


class MicroBatcher:
    """Runs the model on one worker thread; requests that queue up while it is busy share a batch.

    Opportunistic rather than timed batching: an idle embedder starts work at once (no wait window),
    and under load every model call takes everything queued of the same kind, up to `max_batch` texts.
    """

    def __init__(self, embed: EmbedFn, max_batch: int, max_queue: int = 10_000, inline_max_texts: int = 1) -> None:
        self._embed = embed
        self._inline_max_texts = inline_max_texts
        self._busy = False
        self._max_batch = max_batch
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue(maxsize=max_queue)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._worker: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        self._executor.shutdown(wait=False, cancel_futures=True)

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    async def embed(self, texts: Sequence[str], kind: Kind) -> np.ndarray:
        """Embeds `texts`, possibly together with other callers' texts. Raises asyncio.QueueFull."""
        self.start()
        if kind == "query" and len(texts) <= self._inline_max_texts and not self._busy and self._queue.empty():
            # A lone question on an idle embedder: a few milliseconds of model time are cheaper on the
            # event loop than a hand-off to the worker thread and back (the interactive latency path).
            return self._embed(texts, kind)
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Pending(texts, kind, future))
        return await future

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        carry: _Pending | None = None
        while True:
            first = carry or await self._queue.get()
            carry = None
            group = [first]
            size = len(first.texts)
            while not self._queue.empty() and size < self._max_batch:
                nxt = self._queue.get_nowait()
                if nxt.kind != first.kind or size + len(nxt.texts) > self._max_batch:
                    carry = nxt  # starts the next batch, keeping arrival order
                    break
                group.append(nxt)
                size += len(nxt.texts)
            texts = [t for p in group for t in p.texts]
            self._busy = True
            try:
                vectors = await loop.run_in_executor(self._executor, self._embed, texts, first.kind)
            except Exception as exc:  # the model failed: every caller in the batch learns why
                for p in group:
                    if not p.future.done():
                        p.future.set_exception(exc)
                continue
            finally:
                self._busy = False
            start = 0
            for p in group:
                end = start + len(p.texts)
                if not p.future.done():
                    p.future.set_result(vectors[start:end])
                start = end
