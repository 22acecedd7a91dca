"""What the question flow needs from its neighbours: the embedder, retriever and generator services
(peers.py implements it over gRPC) and the asynchronous ingestion path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from weaverbird_common.ingest_messages import IngestMessage

from weaverbird_orchestrator.catalog import Catalog
from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.tasks.llm import Generator


class Peers(Generator, Protocol):
    """The embedder, retriever and generator services (generate() comes from tasks/llm.Generator)."""

    async def embed_query(self, text: str) -> list[float]: ...

    async def embedder_model(self) -> str: ...

    async def search(
        self,
        vector: list[float],
        k: int,
        filters: Mapping[str, str | int],
        text: str = "",
        mode: str = "",
        *,
        term_coverage: bool = False,
    ) -> list[Passage]: ...

    async def catalog(self) -> Catalog: ...

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]: ...


class Publisher(Protocol):
    """Hands web documents to the asynchronous ingestion path without waiting."""

    def publish(self, message: IngestMessage) -> None: ...
