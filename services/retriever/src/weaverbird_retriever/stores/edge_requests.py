"""What the Edge store sends the engine: shard config, payload index schemas, filters and queries,
and the engine's bare exceptions as StoreError."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ParamSpec, TypeVar

import qdrant_edge as qe

from weaverbird_retriever.lexical import LEXICAL_VECTOR, SparseVector
from weaverbird_retriever.stores.base import RRF_K, FilterValue, SearchOptions, StoreError, lexical_copies
from weaverbird_retriever.stores.figures import FIGURE_DENSITY_KEY, prior_weight

P = ParamSpec("P")
T = TypeVar("T")

# Filters matching fewer points than this (in KB of float32 vectors: 20k points at 512-d) are
# answered by scanning exactly those points, found through the payload index. At the engine default
# (10 MB) a one-company-in-ten filter on 50k points went through the HNSW graph instead and recalled
# 0.33 of the true top 10; at 40 MB it recalled 0.98 in 0.3 ms. It also means segments under 40 MB
# are brute-forced (~1-2 ms), which is exact.
FULL_SCAN_THRESHOLD_KB = 40_000

# Mid-selectivity filter fields that get payload-aware HNSW links (see index_schema).
_PAYLOAD_GRAPH_FIELDS = frozenset({"company", "year", "quarter"})


def shard_config(dimension: int, quantize: bool, indexing_threshold_kb: int | None) -> qe.EdgeConfig:
    """A new shard's config: cosine HNSW (int8-quantized if quantize) plus the BM25 sparse vector."""
    quantization = (
        # Pinned: the int8 copy (a quarter of the float32 size) stays in RAM; originals are only
        # read to re-score the few candidates.
        qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, memory=qe.Memory.Pinned) if quantize else None
    )
    optimizers = (
        qe.EdgeOptimizersConfig(indexing_threshold=indexing_threshold_kb) if indexing_threshold_kb is not None else None
    )
    return qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine),
        # m and ef_construct are the engine defaults, spelled out because the config needs all three.
        hnsw_config=qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=FULL_SCAN_THRESHOLD_KB),
        quantization_config=quantization,
        optimizers=optimizers,
        # BM25 term weights; the IDF half is computed by the shard from its own statistics.
        sparse_vectors={LEXICAL_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )


def to_filter(filters: Mapping[str, FilterValue], exclude: Mapping[str, FilterValue] | None = None) -> qe.Filter | None:
    if not filters and not exclude:
        return None
    return qe.Filter(
        must=[qe.FieldCondition(key=k, match=qe.MatchValue(v)) for k, v in filters.items()] or None,
        must_not=[qe.FieldCondition(key=k, match=qe.MatchValue(v)) for k, v in (exclude or {}).items()] or None,
    )


def query_parts(
    dense: list[float],
    lexical: SparseVector | None,
    k: int,
    flt: qe.Filter | None,
    options: SearchOptions,
    params: qe.SearchParams,
) -> dict[str, object]:
    """The query (and prefetches) of a QueryRequest for the mode; params go to the dense leg."""
    sparse = None
    if lexical is not None:
        sparse = qe.Query.Nearest(qe.SparseVector(lexical.indices, lexical.values), using=LEXICAL_VECTOR)
    if options.mode == "dense":
        return {"query": qe.Query.Nearest(dense)}
    if options.mode == "lexical":
        return {"query": sparse}
    limit = max(k, options.prefetch)
    legs = [
        qe.Prefetch(limit=limit, query=qe.Query.Nearest(dense), filter=flt, params=params),
        *[qe.Prefetch(limit=limit, query=sparse, filter=flt) for _ in range(lexical_copies(options))],
    ]
    fusion = (
        qe.Fusion.Rrf(k=RRF_K, weights=[1.0, options.lexical_weight]) if options.fusion == "rrf" else qe.Fusion.Dbsf()
    )
    weight = prior_weight(options)
    if not weight:
        return {"prefetches": legs, "query": fusion}
    # The figure prior: the fused candidates re-scored as fused score + weight x number density.
    expression = qe.Expression.Sum(
        [
            qe.Expression.Variable("$score"),
            qe.Expression.Mult([qe.Expression.Constant(weight), qe.Expression.Variable(FIGURE_DENSITY_KEY)]),
        ]
    )
    return {
        "prefetches": [qe.Prefetch(limit=limit, query=fusion, prefetches=legs)],
        "query": qe.Formula(expression, defaults={FIGURE_DENSITY_KEY: 0.0}),
    }


def dense_of(vector: object) -> list[float] | None:
    """The unnamed dense vector of a returned point (named-vector dict or a plain list)."""
    if isinstance(vector, dict):
        value = vector.get("")
        return value if isinstance(value, list) else None
    return vector if isinstance(vector, list) else None


def index_schema(name: str, kind: str) -> qe.KeywordIndexParams | qe.IntegerIndexParams:
    # A payload sub-graph is built only for values holding more points than the full-scan
    # threshold, exactly the filters that then need one for recall; smaller ones are scanned exactly.
    # document_id values never get that big, and language/origin split the corpus in halves, where
    # the main graph with a filter does well enough (0.80 vs 0.92 unfiltered recall, measured) and a
    # sub-graph per half would double the build.
    graph = name in _PAYLOAD_GRAPH_FIELDS
    if kind == "integer":
        return qe.IntegerIndexParams(lookup=True, range=True, enable_hnsw=graph)
    return qe.KeywordIndexParams(enable_hnsw=graph)


def call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """fn(*args), with the engine's bare Exceptions turned into StoreError."""
    try:
        return fn(*args, **kwargs)
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"qdrant edge: {exc}") from exc
