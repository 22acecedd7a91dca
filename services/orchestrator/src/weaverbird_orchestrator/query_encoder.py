"""Query vectors computed in the orchestrator's own process (ORCHESTRATOR_QUERY_EMBEDDER=in_process).

On one machine the embedder hop costs about as much as the query embedding itself (docs/results/latency.md,
"Local retrieval path"). This wrapper loads the same embedding backend here for queries only; passages (web
pages) and the model description still go to the embedder service. Before the first query it checks
that both sides run the same model, so query vectors always match the knowledge base's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from weaverbird_common.errors import FailedPrecondition


class InProcessQueryEncoder:
    """Wraps `GrpcPeers`: `embed_query` runs a local backend, everything else is delegated."""

    def __init__(self, peers: Any, backend: Any) -> None:
        self._peers = peers
        self._backend = backend
        self._checked = False
        self._in_flight = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._peers, name)

    async def _check_model(self) -> None:
        if self._checked:
            return
        remote = await self._peers.embedder_model()
        if remote != self._backend.model_id:
            raise FailedPrecondition(
                f"in-process query model {self._backend.model_id!r} differs from the embedder service's "
                f"{remote!r}; their vectors do not mix. Set ORCHESTRATOR_QUERY_EMBEDDER_BACKEND to match."
            )
        self._checked = True

    async def embed_query(self, text: str) -> list[float]:
        await self._check_model()
        self._in_flight += 1
        try:
            # A lone query runs inline (a thread hand-off would cost more than it saves); under
            # concurrency, worker threads keep the event loop free for other requests.
            if self._in_flight == 1:
                vector = self._backend.embed([text], "query")[0]
            else:
                vector = (await asyncio.to_thread(self._backend.embed, [text], "query"))[0]
        finally:
            self._in_flight -= 1
        return [float(x) for x in vector]


def with_query_encoder(peers: Any, mode: str, backend_name: str) -> Any:
    """`peers` as is for mode "service"; for "in_process", wrapped with a local query encoder.

    The embedder package is imported only here, so service-mode images need not ship it."""
    if mode != "in_process":
        return peers
    from weaverbird_common.encoders import build_backend

    return InProcessQueryEncoder(peers, build_backend(backend_name))
