"""Reranking stage: reorders the retrieved candidates before the top J go to the model.

Backends: `none` (identity, the CPU default), `cross_encoder` (a local sentence-transformers
CrossEncoder, for GPU hosts), `onnx_cross_encoder` (a `weaverbird train export` model on ONNX Runtime,
int8, for CPU hosts), `embedder` (cosine under a second, stronger embedding model loaded in
this process). The cosine in `Passage.score` is never replaced: the route gate keeps using it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.rerank.base import (
    NoReranker,
    Reranked,
    Reranker,
    RerankerUnavailable,
    ScoringReranker,
    order_by_scores,
)

RERANKER_NAMES: tuple[str, ...] = ("none", "cross_encoder", "onnx_cross_encoder", "embedder")

__all__ = [
    "RERANKER_NAMES",
    "NoReranker",
    "Reranked",
    "Reranker",
    "RerankerUnavailable",
    "ScoringReranker",
    "build_reranker",
    "order_by_scores",
    "rerank_passages",
]


def build_reranker(settings: Any) -> Reranker:
    """The reranker `settings.reranker` names (OrchestratorSettings or anything with its reranker_* fields).

    Heavy packages (torch, sentence-transformers, the embedder's backends) load only when chosen.
    Raises RerankerUnavailable when a package or model file is missing, ValueError for a bad option."""
    name = settings.reranker
    if name == "none":
        return NoReranker()
    if name == "cross_encoder":
        from weaverbird_orchestrator.rerank.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(
            settings.reranker_model_path,
            device=settings.reranker_device,
            batch_size=settings.reranker_batch_size,
            max_length=settings.reranker_max_length,
        )
    if name == "onnx_cross_encoder":
        from weaverbird_orchestrator.rerank.onnx_cross_encoder import OnnxCrossEncoderReranker

        return OnnxCrossEncoderReranker(
            settings.reranker_model_path,
            variant=settings.reranker_onnx_variant,
            batch_size=settings.reranker_batch_size,
            max_length=settings.reranker_max_length,
            budget_ms=settings.reranker_budget_ms,
        )
    if name == "embedder":
        from weaverbird_common.encoders import BackendUnavailable, build_backend

        from weaverbird_orchestrator.rerank.embedder import EmbedderReranker

        try:
            backend = build_backend(
                settings.reranker_embedder_backend,
                model_path=settings.reranker_model_path,
                device=settings.reranker_device,
            )
        except BackendUnavailable as exc:
            raise RerankerUnavailable(f"reranker 'embedder': {exc}") from exc
        return EmbedderReranker(backend, batch_size=settings.reranker_batch_size)
    raise ValueError(f"unknown reranker {name!r}; expected one of {', '.join(RERANKER_NAMES)}")


async def rerank_passages(
    reranker: Reranker, question: str, passages: Sequence[Passage], candidates: int
) -> list[Reranked]:
    """Reranks the first `candidates` passages; any after them follow unscored, in their order.

    Model inference runs in a worker thread so the event loop keeps serving other requests."""
    head, tail = list(passages[:candidates]), list(passages[candidates:])
    if isinstance(reranker, NoReranker) or not head:
        ranked = reranker.rerank(question, head)
    else:
        ranked = await asyncio.to_thread(reranker.rerank, question, head)
    return ranked + [Reranked(p, None) for p in tail]
