"""The trained cross-encoder on ONNX Runtime (int8 by default): CPU reranking without torch, reading each
passage under its title and heading as `weaverbird train reranker` showed them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from weaverbird_common.docs.chunker import titled_text

from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.rerank.base import Reranked, RerankerUnavailable, ScoringReranker, order_by_scores


class OnnxCrossEncoderReranker(ScoringReranker):
    """Candidates are scored best-retrieved first, a batch at a time; when `budget_ms` runs out the rest
    follow the scored ones unscored, in retrieval order (0: no time bound)."""

    def __init__(
        self,
        model_path: str | None,
        variant: Literal["int8", "fp32"] = "int8",
        batch_size: int = 16,
        max_length: int = 256,
        budget_ms: int = 0,
    ) -> None:
        if not model_path:
            raise RerankerUnavailable("reranker 'onnx_cross_encoder' needs a model directory (reranker_model_path)")
        from weaverbird_common.encoders.onnx_cross_encoder import CrossEncoderUnavailable, OnnxCrossEncoder

        try:
            self._model = OnnxCrossEncoder(Path(model_path), variant, max_length, batch_size)
        except CrossEncoderUnavailable as exc:
            raise RerankerUnavailable(f"reranker 'onnx_cross_encoder': {exc}") from exc
        self.name = f"{self._model.name}:{variant}"
        self.budget_ms = budget_ms

    def passage_text(self, passage: Passage) -> str:
        return titled_text(passage.title, passage.heading, passage.text)

    def score_texts(self, question: str, texts: Sequence[str]) -> list[float]:
        return self._model.score(question, texts)

    def rerank(self, question: str, passages: Sequence[Passage]) -> list[Reranked]:
        if not passages:
            return []
        deadline = time.perf_counter() + self.budget_ms / 1000 if self.budget_ms else None
        texts = [self.passage_text(p) for p in passages]
        scores = self._model.score(question, texts, deadline)
        scored = order_by_scores(passages[: len(scores)], scores)
        return scored + [Reranked(p, None) for p in passages[len(scores) :]]
