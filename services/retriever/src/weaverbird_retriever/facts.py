"""Facts (figures read from a document's tables) in their own collection, through the same store backends.

A fact is found by equality on indexed payload fields (company, concept, fiscal year, document), never by
similarity, so its vector is one constant dimension; the payload holds the fact's fields as the Fact
message names them, plus its position in the document (fact_index) so a lookup returns table order.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from pathlib import Path

from weaverbird.v1 import retriever_pb2

from weaverbird_retriever.stores import AsyncVectorStore, ChunkRecord, CollectionMissing, VectorStore, point_id
from weaverbird_retriever.stores.base import FilterValue, PayloadValue
from weaverbird_retriever.stores.threaded import as_async

DIMENSION = 1
_VECTOR = (1.0,)
INDEX_KEY = "fact_index"
_FIELDS = tuple(f.name for f in retriever_pb2.Fact.DESCRIPTOR.fields)
_INT_FIELDS = frozenset(
    f.name for f in retriever_pb2.Fact.DESCRIPTOR.fields if f.type == f.TYPE_INT32 or f.type == f.TYPE_INT64
)
_FLOAT_FIELDS = frozenset(
    f.name for f in retriever_pb2.Fact.DESCRIPTOR.fields if f.type == f.TYPE_DOUBLE or f.type == f.TYPE_FLOAT
)


def facts_collection(collection: str) -> str:
    """The facts' collection beside a chunk collection."""
    return f"{collection}_facts"


def facts_data_dir(kind: str, data_dir: str | None) -> str | None:
    """Where an embedded store keeps the facts: qdrant-client local mode locks its directory for one
    client, so the facts get a directory of their own; an Edge shard is a directory per collection already."""
    if kind == "local" and data_dir and data_dir != ":memory:":
        return str(Path(data_dir) / "facts")
    return data_dir


def fact_record(document_id: str, index: int, fact: retriever_pb2.Fact) -> ChunkRecord:
    """The stored point of a document's index-th fact; its label is the text (the lexical leg's words)."""
    payload: dict[str, PayloadValue] = {name: getattr(fact, name) for name in _FIELDS}
    payload["document_id"] = document_id
    payload[INDEX_KEY] = index
    return ChunkRecord(id=point_id(document_id, index), vector=_VECTOR, text=fact.label, payload=payload)


def fact_message(payload: dict[str, PayloadValue]) -> retriever_pb2.Fact:
    """A stored payload as a Fact message (an engine may hand back 5.0 as 5, or the reverse)."""
    fields: dict[str, object] = {}
    for name in _FIELDS:
        value = payload.get(name)
        if value is None or isinstance(value, list):
            continue
        if name in _INT_FIELDS:
            fields[name] = int(value)
        elif name in _FLOAT_FIELDS:
            fields[name] = float(value)
        else:
            fields[name] = str(value)
    return retriever_pb2.Fact(**fields)  # type: ignore[arg-type]


class FactStore:
    """Replace, look up and delete a document's facts in one collection of an (async) vector store."""

    def __init__(self, store: AsyncVectorStore | VectorStore) -> None:
        self._store = as_async(store)
        self._ready = False
        self._create_lock = asyncio.Lock()

    async def _ensure(self) -> None:
        if not self._ready:
            async with self._create_lock:
                if not self._ready:
                    await self._store.ensure_collection(DIMENSION)
                    self._ready = True

    async def replace(self, document_id: str, facts: Sequence[retriever_pb2.Fact]) -> int:
        """Store facts as the document's only facts; returns how many were written.

        The old facts are deleted first: between the two calls a lookup sees none of the document's
        facts (never a mix of two versions)."""
        await self._ensure()
        records = [fact_record(document_id, i, f) for i, f in enumerate(facts)]
        try:
            await self._store.delete_document(document_id)
            if records:
                await self._store.upsert(records)
        except CollectionMissing:
            self._ready = False  # dropped behind our back: the next call creates it again
            raise
        return len(records)

    async def delete(self, document_id: str) -> int:
        """Delete the document's facts; 0 when there were none (or no facts collection yet)."""
        try:
            return await self._store.delete_document(document_id)
        except CollectionMissing:
            self._ready = False
            return 0

    async def lookup(
        self,
        *,
        company: str,
        concepts: Sequence[str],
        fiscal_years: Sequence[int],
        document_id: str,
        limit: int,
    ) -> list[retriever_pb2.Fact]:
        """Up to limit facts matching every given condition (any of the concepts, any of the years),
        ordered by document, then position in the document. One scroll per concept and year pair,
        each resolved from the payload indexes."""
        base: dict[str, FilterValue] = {}
        if company:
            base["company"] = company
        if document_id:
            base["document_id"] = document_id
        concept_choices: Sequence[str | None] = list(dict.fromkeys(concepts)) or [None]
        year_choices: Sequence[int | None] = list(dict.fromkeys(fiscal_years)) or [None]
        found: list[dict[str, PayloadValue]] = []
        try:
            for concept, year in itertools.product(concept_choices, year_choices):
                filters = dict(base)
                if concept is not None:
                    filters["concept"] = concept
                if year is not None:
                    filters["fiscal_year"] = year
                points = await self._store.scroll(filters or None, limit - len(found))
                found.extend(p.payload for p in points)
                if len(found) >= limit:
                    break
        except CollectionMissing:
            self._ready = False
            return []
        found.sort(key=lambda p: (str(p.get("document_id", "")), _index(p)))
        return [fact_message(p) for p in found[:limit]]

    async def close(self) -> None:
        await self._store.close()


def _index(payload: dict[str, PayloadValue]) -> int:
    value = payload.get(INDEX_KEY, 0)
    return int(value) if isinstance(value, int | float) else 0
