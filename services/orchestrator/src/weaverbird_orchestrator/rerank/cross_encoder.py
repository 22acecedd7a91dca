"""A sentence-transformers CrossEncoder (bge-reranker-v2-m3 class) from a local directory, for GPU hosts."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from weaverbird_common.docs.chunker import titled_text

from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.rerank.base import RerankerUnavailable, ScoringReranker


class CrossEncoderReranker(ScoringReranker):
    """Scores each (question, passage) pair jointly. Inputs longer than `max_length` tokens are
    truncated by the tokenizer ("longest_first": the longer side, usually the passage, loses tokens)."""

    def __init__(
        self, model_path: str | None, device: str = "cpu", batch_size: int = 16, max_length: int = 512
    ) -> None:
        if not model_path:
            raise RerankerUnavailable("reranker 'cross_encoder' needs a local model directory (reranker_model_path)")
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise RerankerUnavailable(
                f"reranker 'cross_encoder': model directory not found: {path} (models are never downloaded)"
            )
        try:
            # Imported here: it pulls in torch, which CPU deployments without a reranker never need.
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise RerankerUnavailable(
                "reranker 'cross_encoder' needs sentence-transformers and torch (requirements/gpu-path.txt)"
            ) from exc
        try:
            self._model: Any = CrossEncoder(str(path), device=device, local_files_only=True, max_length=max_length)
        except (OSError, ValueError) as exc:
            raise RerankerUnavailable(f"reranker 'cross_encoder' could not load {path}: {exc}") from exc
        self.name = f"cross_encoder:{path.name}"
        self.batch_size = batch_size
        self.max_length = max_length
        self._lock = threading.Lock()  # one forward pass at a time: concurrent ones only contend for the device

    def passage_text(self, passage: Passage) -> str:
        return titled_text(passage.title, passage.heading, passage.text)  # as `weaverbird train reranker` saw it

    def score_texts(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        pairs = [(question, text) for text in texts]
        with self._lock:
            scores = self._model.predict(
                pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True
            )
        return [float(s) for s in scores]
