"""Backend-neutral vector store contract: records, hits, errors, deterministic ids and input checks."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vector = Sequence[float] | npt.NDArray[np.floating]
PayloadValue = str | int | float
FilterValue = str | int

# Chunk text lives in the payload under this key so every backend returns it with the hit.
TEXT_KEY = "text"

# Payload fields that retrieval filters on. Server mode and Edge build payload indexes for them so a
# selective filter (one company, one year) is resolved from the index instead of a scan. year and
# quarter are ints in the protos, so they get integer indexes: a keyword index would not serve them.
INDEXED_FIELDS: Mapping[str, Literal["keyword", "integer"]] = {
    "document_id": "keyword",
    "company": "keyword",
    "origin": "keyword",
    "language": "keyword",
    "year": "integer",
    "quarter": "integer",
}

# Fixed namespace: changing it would give every chunk a new id and duplicate the whole collection.
_CHUNK_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://weaverbird/chunk")


class StoreError(Exception):
    """A vector store operation failed."""


class DimensionMismatch(StoreError):
    """A vector's dimension differs from the collection's."""


class CollectionMissing(StoreError):
    """The collection does not exist yet (call ensure_collection first)."""


@dataclass(frozen=True)
class ChunkRecord:
    """One chunk to store: id is a UUID string, usually point_id(document_id, chunk_index)."""

    id: str
    vector: Vector
    text: str
    payload: dict[str, PayloadValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """One search result; score is the cosine similarity, payload excludes the text."""

    id: str
    score: float
    text: str
    payload: dict[str, PayloadValue]


@dataclass(frozen=True)
class CollectionStats:
    """Size and shape of a collection."""

    name: str
    points: int
    dimension: int
    backend: str


@runtime_checkable
class VectorStore(Protocol):
    """What the retriever needs from a vector database; every method is safe to call from many threads."""

    def ensure_collection(self, dimension: int) -> None:
        """Create the collection (cosine distance) if missing; DimensionMismatch if it has another size."""
        ...

    def upsert(self, records: Sequence[ChunkRecord]) -> None:
        """Insert or replace records by id."""
        ...

    def search(self, vector: Vector, k: int, filters: Mapping[str, FilterValue] | None = None) -> list[Hit]:
        """The k most cosine-similar points, best first; filters are exact payload matches, ANDed."""
        ...

    def delete_document(self, document_id: str) -> int:
        """Delete every point whose payload document_id matches; returns how many were deleted."""
        ...

    def stats(self) -> CollectionStats:
        """Collection name, point count, dimension and backend; CollectionMissing if not created."""
        ...

    def close(self) -> None:
        """Flush and release files and connections; idempotent."""
        ...


def point_id(document_id: str, chunk_index: int) -> str:
    """Deterministic chunk id, so re-ingesting a document overwrites its points instead of adding copies."""
    return str(uuid.uuid5(_CHUNK_NAMESPACE, f"{document_id}\x1f{chunk_index}"))


def canonical_id(raw: str) -> str:
    """The canonical UUID string for raw; engines accept several spellings but must see one."""
    try:
        return str(uuid.UUID(str(raw)))
    except ValueError as exc:
        raise StoreError(f"point id {raw!r} is not a UUID string") from exc


def as_vector(vector: Vector, dimension: int) -> list[float]:
    """vector as a list of floats, checked against the collection dimension."""
    arr = np.asarray(vector, dtype=np.float32)
    if arr.ndim != 1:
        raise StoreError(f"a vector must be one-dimensional, got shape {arr.shape}")
    if arr.shape[0] != dimension:
        raise DimensionMismatch(f"vector has dimension {arr.shape[0]}, the collection {dimension}")
    if not np.all(np.isfinite(arr)):
        raise StoreError("vector contains NaN or infinity")
    return arr.tolist()


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise StoreError(f"k must be a positive integer, got {k!r}")


def check_filters(filters: Mapping[str, FilterValue] | None) -> dict[str, FilterValue]:
    """filters as a plain dict; only str and int values, since float equality is not a useful filter."""
    if not filters:
        return {}
    out: dict[str, FilterValue] = {}
    for key, value in filters.items():
        if not isinstance(key, str) or not key or key == TEXT_KEY:
            raise StoreError(f"cannot filter on payload key {key!r}")
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise StoreError(f"filter {key}={value!r}: only str and int values are supported")
        out[key] = value
    return out


def record_payload(record: ChunkRecord) -> dict[str, PayloadValue]:
    """The payload to store for record: its fields plus the text."""
    payload = dict(record.payload)
    payload[TEXT_KEY] = record.text
    return payload


def split_payload(payload: Mapping[str, object] | None) -> tuple[str, dict[str, PayloadValue]]:
    """(text, other fields) from a stored payload."""
    rest: dict[str, PayloadValue] = {}
    text = ""
    for key, value in (payload or {}).items():
        if key == TEXT_KEY:
            text = str(value)
        elif isinstance(value, str | int | float):
            rest[key] = value
    return text, rest
