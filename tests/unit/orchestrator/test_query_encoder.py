"""The in-process query encoder: model check before the first query, delegation of everything else."""

from __future__ import annotations

import numpy as np
import pytest
from weaverbird_common.encoders import build_backend
from weaverbird_common.errors import FailedPrecondition
from weaverbird_orchestrator.query_encoder import InProcessQueryEncoder, with_query_encoder


class _Peers:
    """Stands in for the gRPC peers: reports a model id and records which calls reached it."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.calls: list[str] = []

    async def embedder_model(self) -> str:
        self.calls.append("embedder_model")
        return self.model_id

    async def embed_query(self, text: str) -> list[float]:
        raise AssertionError("an in-process encoder must not call the embedder service for queries")

    async def search(self, *args: object, **kwargs: object) -> list[object]:
        self.calls.append("search")
        return []


async def test_queries_are_embedded_here_with_the_same_model_as_the_service() -> None:
    backend = build_backend("use")
    peers = _Peers(backend.model_id)
    encoder = with_query_encoder(peers, "in_process", "use")
    assert isinstance(encoder, InProcessQueryEncoder)
    vector = await encoder.embed_query("What was revenue in 2024?")
    assert np.allclose(vector, backend.embed(["What was revenue in 2024?"], "query")[0], atol=1e-6)
    await encoder.embed_query("again")
    assert await encoder.search([0.0], 1, {}) == []  # delegated
    assert peers.calls == ["embedder_model", "search"]  # the model is checked once


async def test_a_model_mismatch_is_refused_and_service_mode_leaves_peers_alone() -> None:
    peers = _Peers("some/other-model@v1")
    with pytest.raises(FailedPrecondition, match="differs from the embedder service"):
        await with_query_encoder(peers, "in_process", "use").embed_query("revenue?")
    assert with_query_encoder(peers, "service", "use") is peers
