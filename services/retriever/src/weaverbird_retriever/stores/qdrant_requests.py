"""What the Qdrant store sends and reads: request bodies, reading replies, and telling an outage from a
bad request (AsyncQdrantStore sends them; local mode and a server alike)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from qdrant_client import models
from qdrant_client.common.client_exceptions import ResourceExhaustedResponse
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from weaverbird_retriever.lexical import LEXICAL_VECTOR, encoder
from weaverbird_retriever.stores.base import (
    INDEXED_FIELDS,
    RRF_K,
    TEXT_KEY,
    ChunkRecord,
    FilterValue,
    Hit,
    SearchOptions,
    StoredPoint,
    StoreError,
    StoreUnavailable,
    as_vector,
    canonical_id,
    cosine,
    lexical_copies,
    lexical_text,
    record_payload,
    split_payload,
)
from weaverbird_retriever.stores.figures import FIGURE_DENSITY_KEY, density_field, prior_weight

# Points per request: keeps a server request well under its 32 MB body limit at 1024-d with text.
UPSERT_BATCH = 256

PAYLOAD_SCHEMAS = {
    name: {"keyword": models.PayloadSchemaType.KEYWORD, "integer": models.PayloadSchemaType.INTEGER}[kind]
    for name, kind in INDEXED_FIELDS.items()
}


def missing_indexes(info: models.CollectionInfo) -> list[str]:
    """PAYLOAD_SCHEMAS fields a collection made before they were added has no index for (a Qdrant server
    refuses a facet on a field without one, and the catalog facets on them)."""
    return [name for name in PAYLOAD_SCHEMAS if name not in (info.payload_schema or {})]


# HTTP answers that say "the server (or the proxy before it) cannot serve now", not "this request is
# wrong". 401/403 are here too: a rotated API key is the deployment's fault, and retrying once it is
# fixed succeeds, so the records must wait rather than be dead-lettered.
_UNAVAILABLE_STATUSES = frozenset({401, 403, 408, 429, 500, 502, 503, 504})


def collection_config(dimension: int) -> dict[str, Any]:
    """create_collection arguments: cosine dense vectors plus the BM25 sparse vector."""
    return {
        "vectors_config": models.VectorParams(size=dimension, distance=models.Distance.COSINE),
        # BM25 term weights; the IDF half is computed by Qdrant from the collection.
        "sparse_vectors_config": {LEXICAL_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
    }


def read_params(info: models.CollectionInfo, name: str) -> tuple[int, bool]:
    """(dense dimension, has lexical vectors) of a collection."""
    params = info.config.params
    # A collection made before lexical vectors keeps working densely; hybrid asks get a clear error.
    lexical = LEXICAL_VECTOR in (params.sparse_vectors or {})
    vectors = params.vectors
    if isinstance(vectors, models.VectorParams):
        return int(vectors.size), lexical
    raise StoreError(f"collection {name!r} uses named vectors; expected one unnamed dense vector")


def points(records: Sequence[ChunkRecord], dim: int, lexical: bool) -> list[models.PointStruct]:
    """Records as points, every one checked before anything is sent."""
    return [
        models.PointStruct(id=canonical_id(r.id), vector=_vectors(r, dim, lexical), payload=record_payload(r))
        for r in records
    ]


def _vectors(record: ChunkRecord, dim: int, lexical: bool) -> list[float] | dict[str, Any]:
    dense = as_vector(record.vector, dim)
    if not lexical:
        return dense
    sparse = encoder().document(lexical_text(record.text, record.payload))
    return {"": dense, LEXICAL_VECTOR: models.SparseVector(indices=sparse.indices, values=sparse.values)}


def query_args(dense: list[float], k: int, flt: models.Filter | None, options: SearchOptions) -> dict[str, Any]:
    """Every query_points argument but the collection name."""
    return {
        "limit": k,
        "query_filter": flt,
        "with_payload": True,
        # Dense vectors come back so every hit carries its cosine, the scale c is set on.
        "with_vectors": [""] if options.mode != "dense" else False,
        **_query(dense, k, flt, options),
    }


def _query(dense: list[float], k: int, flt: models.Filter | None, options: SearchOptions) -> dict[str, Any]:
    """query / using / prefetch arguments of query_points for the mode."""
    if options.mode == "dense":
        return {"query": dense}
    lex = encoder().query(options.text, options.expands_concepts)
    sparse = models.SparseVector(indices=lex.indices, values=lex.values)
    if options.mode == "lexical":
        return {"query": sparse, "using": LEXICAL_VECTOR}
    limit = max(k, options.prefetch)
    fusion: models.Query = (
        # k and weights spelled out so local mode and a server rank exactly as Qdrant Edge does.
        models.RrfQuery(rrf=models.Rrf(k=RRF_K, weights=[1.0, options.lexical_weight]))
        if options.fusion == "rrf"
        else models.FusionQuery(fusion=models.Fusion.DBSF)
    )
    legs = [
        models.Prefetch(query=dense, limit=limit, filter=flt),
        *[
            models.Prefetch(query=sparse, using=LEXICAL_VECTOR, limit=limit, filter=flt)
            for _ in range(lexical_copies(options))
        ],
    ]
    weight = prior_weight(options)
    if not weight:
        return {"prefetch": legs, "query": fusion}
    # The figure prior: the fused candidates re-scored as fused score + weight x number density.
    formula = models.FormulaQuery(
        formula=models.SumExpression(sum=["$score", models.MultExpression(mult=[weight, FIGURE_DENSITY_KEY])]),
        defaults={FIGURE_DENSITY_KEY: 0.0},
    )
    return {"prefetch": [models.Prefetch(prefetch=legs, query=fusion, limit=limit)], "query": formula}


# Points stored before the figure prior kept its number density in the payload.
MISSING_DENSITY = models.Filter(must=[models.IsEmptyCondition(is_empty=models.PayloadField(key=FIGURE_DENSITY_KEY))])


def density_updates(records: Sequence[models.Record]) -> list[models.SetPayloadOperation]:
    """One set-payload operation per stored point: its number density, read from its stored text."""
    return [
        models.SetPayloadOperation(
            set_payload=models.SetPayload(payload=density_field(split_payload(r.payload)[0]), points=[r.id])
        )
        for r in records
    ]


def hits(result: models.QueryResponse, dense: list[float], options: SearchOptions) -> list[Hit]:
    out = []
    for p in result.points:
        text, payload = split_payload(p.payload)
        score = float(p.score)
        if options.mode != "dense":
            stored = p.vector.get("") if isinstance(p.vector, dict) else p.vector
            score = cosine(dense, stored if isinstance(stored, list) else None)
        out.append(Hit(id=str(p.id), score=score, text=text, payload=payload, rank_score=float(p.score)))
    return out


# Points per scroll request: a page of payloads without text is a few hundred KB.
SCROLL_PAGE = 1024


def scroll_args(flt: models.Filter | None, limit: int, offset: Any, with_text: bool) -> dict[str, Any]:
    """Every scroll argument but the collection name: payloads (text only if asked), no vectors."""
    return {
        "scroll_filter": flt,
        "limit": min(limit, SCROLL_PAGE),
        "offset": offset,
        "with_payload": True if with_text else models.PayloadSelectorExclude(exclude=[TEXT_KEY]),
        "with_vectors": False,
    }


def stored_points(records: Sequence[models.Record]) -> list[StoredPoint]:
    out = []
    for record in records:
        text, payload = split_payload(record.payload)
        out.append(StoredPoint(id=str(record.id), text=text, payload=payload))
    return out


def to_filter(
    filters: Mapping[str, FilterValue], exclude: Mapping[str, FilterValue] | None = None
) -> models.Filter | None:
    if not filters and not exclude:
        return None
    return models.Filter(
        must=[models.FieldCondition(key=k, match=models.MatchValue(value=v)) for k, v in filters.items()] or None,
        must_not=[models.FieldCondition(key=k, match=models.MatchValue(value=v)) for k, v in (exclude or {}).items()]
        or None,
    )


def outage(exc: BaseException, url: str | None) -> StoreUnavailable | None:
    """StoreUnavailable when exc means the Qdrant server cannot serve now (unreachable, timed out,
    overloaded, failing or refusing our credentials); None when it is about the request itself."""
    where = f"the Qdrant server at {_origin(url)}" if url else "the Qdrant server"
    if isinstance(exc, ResourceExhaustedResponse):
        return StoreUnavailable(f"{where} is overloaded ({exc}); retry in {exc.retry_after_s} s")
    if isinstance(exc, UnexpectedResponse) and exc.status_code in _UNAVAILABLE_STATUSES:
        reason = f"HTTP {exc.status_code} {exc.reason_phrase}".strip()
        if exc.status_code in (401, 403):
            return StoreUnavailable(f"{where} refused the credentials ({reason}); check RETRIEVER_QDRANT_API_KEY")
        return StoreUnavailable(f"{where} cannot serve requests now ({reason}); retry later")
    if isinstance(exc, ResponseHandlingException):
        source = exc.source
        if isinstance(source, httpx.TimeoutException):
            return StoreUnavailable(f"{where} did not answer in time; retry later")
        if isinstance(source, httpx.TransportError):  # connect errors, resets, broken responses
            return StoreUnavailable(f"{where} is unreachable ({source or type(source).__name__}); retry later")
    return None


def _origin(url: str) -> str:
    """scheme://host:port of url: never a path, query or user:password that might hold a secret."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    host = parts.hostname or "?"
    return f"{parts.scheme}://{host}:{parts.port}" if parts.port else f"{parts.scheme}://{host}"
