"""Backend-neutral vector store contract: records, hits, errors, deterministic ids and input checks."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from weaverbird_retriever.stores.figures import FIGURE_DENSITY_KEY, density_field
from weaverbird_retriever.stores.search_options import Filters as Filters

# Re-exported: the search options are part of the contract (defined apart so figures can read them).
from weaverbird_retriever.stores.search_options import FilterValue as FilterValue
from weaverbird_retriever.stores.search_options import FusionKind as FusionKind
from weaverbird_retriever.stores.search_options import SearchMode as SearchMode
from weaverbird_retriever.stores.search_options import SearchOptions as SearchOptions

Vector = Sequence[float] | npt.NDArray[np.floating]
PayloadValue = str | int | float | list[str]

# Reciprocal rank fusion: score = sum over legs of 1 / (RRF_K - 1 + rank / weight), rank from 1 (Qdrant's
# weighted RRF: a weight stretches or shrinks the leg's ranks). 60 is Cormack et al.'s k; every backend
# is given it explicitly so they all rank alike. Beware: at k = 60 a large weight flattens its leg (all
# its ranks score about 1/59), so the *other* leg's order decides; on Fin-Eva lexical weight 100 ranked
# like dense alone (R@5 0.628) and 0.01 like the lexical leg. Weights behave as named only for small k.
RRF_K = 60

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
    "doc_type": "keyword",
    # Other names of the company (a list per chunk); indexed so the catalog can facet on it.
    "aliases": "keyword",
    # Position in the document; indexed so listing documents reads one point (chunk 0) per document.
    "chunk_index": "integer",
    # The document's date (ISO); indexed so the catalog can facet on it (a company's newest document).
    "published_date": "keyword",
    # Facts (their own collection, facts.py) are looked up by concept and fiscal year, besides
    # company and document_id above; chunks carry neither, so the two indexes stay empty there.
    "concept": "keyword",
    "fiscal_year": "integer",
}

# Fixed namespace: changing it would give every chunk a new id and duplicate the whole collection.
_CHUNK_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://weaverbird/chunk")


class StoreError(Exception):
    """A vector store operation failed."""


class DimensionMismatch(StoreError):
    """A vector's dimension differs from the collection's."""


class CollectionMissing(StoreError):
    """The collection does not exist yet (call ensure_collection first)."""


class StoreUnavailable(StoreError):
    """The store cannot be reached right now (connection refused, timeout, 5xx): retry later; the
    request itself is fine, so a caller must not treat it as a bad record."""


class StoreClosed(StoreUnavailable):
    """The store was closed: the retriever is shutting down."""


class InvalidInput(StoreError):
    """The caller's data is wrong (NaN in a vector, an id that is not a UUID, ...): retrying will not help."""


class LexicalMissing(StoreError):
    """The collection predates lexical vectors, so it cannot be searched lexically."""


@dataclass(frozen=True)
class ChunkRecord:
    """One chunk to store: id is a UUID string, usually point_id(document_id, chunk_index)."""

    id: str
    vector: Vector
    text: str
    payload: dict[str, PayloadValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """One search result; payload excludes the text.

    score is the cosine similarity of the hit to the query vector in every mode (the route threshold
    is calibrated on it); rank_score is what the hits are ordered by (fusion score in hybrid mode).
    """

    id: str
    score: float
    text: str
    payload: dict[str, PayloadValue]
    rank_score: float = 0.0


@dataclass(frozen=True)
class StoredPoint:
    """A stored point read back by scroll: text is "" unless it was asked for; payload excludes it."""

    id: str
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

    @property
    def lexical(self) -> bool:
        """Whether the collection holds sparse lexical vectors (collections made before them do not)."""
        ...

    def search(
        self, vector: Vector, k: int, filters: Filters = None, options: SearchOptions | None = None
    ) -> list[Hit]:
        """The k best points in ranking order; filters are exact payload matches, ANDed, on every leg.

        Dense by default; lexical and hybrid need options.text and raise LexicalMissing on a
        collection without lexical vectors."""
        ...

    def facet(self, key: str, limit: int, filters: Filters = None) -> list[tuple[object, int]]:
        """(value, points) of an indexed payload field, most common first."""
        ...

    def delete_document(self, document_id: str) -> int:
        """Delete every point whose payload document_id matches; returns how many were deleted."""
        ...

    def scroll(self, filters: Filters, limit: int, *, with_text: bool = False) -> list[StoredPoint]:
        """Up to limit points whose payload matches filters (exact, ANDed), in id order; no vectors,
        and the text only when with_text (listing documents reads many payloads, not their text)."""
        ...

    def stats(self) -> CollectionStats:
        """Collection name, point count, dimension and backend; CollectionMissing if not created."""
        ...

    def close(self) -> None:
        """Flush and release files and connections; idempotent."""
        ...


@runtime_checkable
class AsyncVectorStore(Protocol):
    """VectorStore for the event loop: the retriever's servicer calls this, so no call blocks the loop.

    A Qdrant server is reached through AsyncQdrantClient; the embedded stores run their synchronous
    calls on worker threads (stores.threaded.ThreadedStore). Same semantics and errors as VectorStore,
    plus StoreUnavailable when the store cannot be reached.
    """

    backend: str

    async def ensure_collection(self, dimension: int) -> None: ...

    async def upsert(self, records: Sequence[ChunkRecord]) -> None: ...

    async def has_lexical(self) -> bool: ...

    async def search(
        self, vector: Vector, k: int, filters: Filters = None, options: SearchOptions | None = None
    ) -> list[Hit]: ...

    async def facet(self, key: str, limit: int, filters: Filters = None) -> list[tuple[object, int]]: ...

    async def delete_document(self, document_id: str) -> int: ...

    async def scroll(self, filters: Filters, limit: int, *, with_text: bool = False) -> list[StoredPoint]: ...

    async def stats(self) -> CollectionStats: ...

    async def close(self) -> None: ...


def point_id(document_id: str, chunk_index: int) -> str:
    """Deterministic chunk id, so re-ingesting a document overwrites its points instead of adding copies."""
    return str(uuid.uuid5(_CHUNK_NAMESPACE, f"{document_id}\x1f{chunk_index}"))


def canonical_id(raw: str) -> str:
    """The canonical UUID string for raw; engines accept several spellings but must see one."""
    try:
        return str(uuid.UUID(str(raw)))
    except ValueError as exc:
        raise InvalidInput(f"point id {raw!r} is not a UUID string") from exc


def as_vector(vector: Vector, dimension: int) -> list[float]:
    """vector as a list of floats, checked against the collection dimension."""
    arr = np.asarray(vector, dtype=np.float32)
    if arr.ndim != 1:
        raise InvalidInput(f"a vector must be one-dimensional, got shape {arr.shape}")
    if arr.shape[0] != dimension:
        raise DimensionMismatch(f"vector has dimension {arr.shape[0]}, the collection {dimension}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInput("vector contains NaN or infinity")
    return arr.tolist()


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInput(f"k must be a positive integer, got {k!r}")


def check_search(k: int, options: SearchOptions | None) -> SearchOptions:
    """options, checked against k: lexical legs need text; each leg prefetches at least k."""
    check_k(k)
    options = options or SearchOptions()
    if options.mode not in ("dense", "lexical", "hybrid"):
        raise InvalidInput(f"unknown search mode {options.mode!r}")
    if options.fusion not in ("rrf", "dbsf"):
        raise InvalidInput(f"unknown fusion {options.fusion!r}")
    if not options.lexical_weight > 0:
        raise InvalidInput(f"lexical_weight must be positive, got {options.lexical_weight}")
    if options.mode == "hybrid" and options.fusion == "dbsf" and not float(options.lexical_weight).is_integer():
        raise InvalidInput(f"lexical_weight with DBSF must be a whole number, got {options.lexical_weight}")
    if options.mode != "dense" and not options.text.strip():
        raise InvalidInput(f"{options.mode} search needs the query text")
    return options


def lexical_copies(options: SearchOptions) -> int:
    """How many times the lexical prefetch is listed in a hybrid query. Qdrant's DBSF normalises each
    prefetch's scores and sums them, with no weights; listing the lexical leg n times weights it n : 1
    inside the store, on every backend. RRF takes its weight as a parameter instead: one copy."""
    return int(options.lexical_weight) if options.fusion == "dbsf" else 1


def cosine(query: Sequence[float], stored: Sequence[float] | None) -> float:
    """Cosine of the query to a stored dense vector (stores return cosine vectors normalised)."""
    if not stored:
        return 0.0
    q = np.asarray(query, dtype=np.float32)
    v = np.asarray(stored, dtype=np.float32)
    norm = float(np.linalg.norm(q) * np.linalg.norm(v))
    return float(q @ v / norm) if norm else 0.0


def check_filters(filters: Filters) -> dict[str, FilterValue]:
    """filters as a plain dict; only str and int values, since float equality is not a useful filter."""
    if not filters:
        return {}
    out: dict[str, FilterValue] = {}
    for key, value in filters.items():
        if not isinstance(key, str) or not key or key == TEXT_KEY:
            raise InvalidInput(f"cannot filter on payload key {key!r}")
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise InvalidInput(f"filter {key}={value!r}: only str and int values are supported")
        out[key] = value
    return out


def lexical_text(text: str, payload: Mapping[str, object]) -> str:
    """What the lexical leg indexes: the chunk under its document title and section heading, as the
    dense leg embeds it (weaverbird_common.docs.chunker.embedding_text), so a bare table row still
    matches the company and section words of a question."""
    context = " / ".join(str(payload[k]) for k in ("title", "heading") if payload.get(k))
    return f"{context}\n{text}" if context else text


def record_payload(record: ChunkRecord) -> dict[str, PayloadValue]:
    """The payload to store for record: its fields, the text, and the text's number density (which the
    figure prior's score formula reads)."""
    payload = dict(record.payload)
    payload[TEXT_KEY] = record.text
    payload.update(density_field(record.text))
    return payload


def split_payload(payload: Mapping[str, object] | None) -> tuple[str, dict[str, PayloadValue]]:
    """(text, other fields) from a stored payload; the figure density is the store's own ranking field."""
    rest: dict[str, PayloadValue] = {}
    text = ""
    for key, value in (payload or {}).items():
        if key == TEXT_KEY:
            text = str(value)
        elif key == FIGURE_DENSITY_KEY:
            continue
        elif isinstance(value, str | int | float):
            rest[key] = value
        elif isinstance(value, list):
            rest[key] = [str(v) for v in value]
    return text, rest
