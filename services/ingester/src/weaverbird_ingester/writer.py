"""Adds one loaded document to the knowledge base: chunk, embed in batches, replace old chunks."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from weaverbird_common.docs.chunker import chunk_document, embedding_text
from weaverbird_common.docs.documents import Chunk, Document
from weaverbird_common.docs.entities import document_entities
from weaverbird_common.facts.extract import extract_facts
from weaverbird_common.facts.model import Fact
from weaverbird_common.questions import normalize_company

from weaverbird_ingester.provenance import stamped


class KnowledgeBase(Protocol):
    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def upsert(self, doc: Document, chunks: Sequence[Chunk], vectors: Sequence[list[float]]) -> None: ...

    async def delete_document(self, document_id: str) -> int: ...


@runtime_checkable
class FactStore(Protocol):
    """A knowledge base that also keeps the figures read from a document's tables."""

    async def upsert_facts(self, document_id: str, facts: Sequence[Fact]) -> int: ...


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WriteResult:
    document_id: str
    title: str
    pages: int
    chunks: int
    # Facts stored from the document's tables (0 when none were found or storing them failed).
    facts: int = 0


class DocumentWriter:
    """Chunks and stores documents; re-adding a document replaces its previous chunks."""

    def __init__(
        self, kb: KnowledgeBase, chunk_tokens: int, max_chunk_tokens: int, embed_batch: int, *, facts: bool = True
    ) -> None:
        self._kb = kb
        self._facts = facts and isinstance(kb, FactStore)
        self._chunk_tokens = chunk_tokens
        self._max_chunk_tokens = max_chunk_tokens
        self._embed_batch = embed_batch
        # Documents whose facts could not be read or stored; their chunks were stored all the same.
        self.fact_failures = 0

    async def write(self, doc: Document) -> WriteResult:
        # Every chunk records how the document came in and when this version was stored.
        doc = stamped(aliases_for_company(doc))
        chunks = chunk_document(doc, target_tokens=self._chunk_tokens, max_tokens=self._max_chunk_tokens)
        # Tables are read on a worker thread while the embedder works on the chunks.
        reading = asyncio.ensure_future(asyncio.to_thread(extract_facts, doc)) if self._facts else None
        # Embed everything before touching the store: a failed embedding then leaves the previous
        # version of the document intact instead of half-replaced.
        batches = [chunks[i : i + self._embed_batch] for i in range(0, len(chunks), self._embed_batch)]
        try:
            vectors = [await self._kb.embed_passages([embedding_text(doc, c) for c in batch]) for batch in batches]
        except BaseException:
            if reading is not None:
                reading.cancel()
            raise
        # Point ids are deterministic (document id + chunk index), so a redelivery overwrites; deleting
        # first also removes tail chunks when a new version of the document is shorter.
        await self._kb.delete_document(doc.document_id)
        for batch, batch_vectors in zip(batches, vectors, strict=True):
            await self._kb.upsert(doc, batch, batch_vectors)
        facts = await self._write_facts(doc, reading) if reading is not None else 0
        pages = sum(1 for p in doc.pages if p.number is not None)
        return WriteResult(doc.document_id, doc.title, pages, len(chunks), facts)

    async def _write_facts(self, doc: Document, reading: asyncio.Future[list[Fact]]) -> int:
        """Replaces the document's facts. Facts are an extra: an extraction or store failure is logged
        and counted, and the document stays ingested (its passages still answer)."""
        assert isinstance(self._kb, FactStore)
        try:
            facts = await reading
            if not facts:
                return 0  # delete_document above already removed any facts of an earlier version
            return await self._kb.upsert_facts(doc.document_id, facts)
        except Exception:
            self.fact_failures += 1
            log.warning("facts of document %s not stored; its passages are", doc.document_id, exc_info=True)
            return 0


def aliases_for_company(doc: Document) -> Document:
    """Drop a web page's aliases when the company it is filed under is not the one its text is about.

    The loader reads aliases from the text; the orchestrator may then file the page under the
    question's company (any page that names it). A Pfizer release naming Johnson & Johnson must not
    give JOHNSON_JOHNSON the names "Pfizer Inc." and "PFE" in the catalog.
    """
    if doc.origin != "web" or not doc.aliases or not doc.company:
        return doc
    found = document_entities(doc.text)
    key = normalize_company(doc.company)
    names = [normalize_company(n) for n in (found.company, *found.aliases)]
    if any(n.startswith(key) or key.startswith(n) for n in names if n):
        return doc
    return dataclasses.replace(doc, aliases=[])
