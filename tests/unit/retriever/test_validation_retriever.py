"""Retriever edge checks: NaN, ids, dimensions, batch sizes, limits and filters become clear refusals."""

from __future__ import annotations

import math

import pytest
from weaverbird.v1 import common_pb2, retriever_pb2
from weaverbird_common.errors import InvalidArgument
from weaverbird_retriever import validation as v

UUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"


def chunk(vector: list[float] | None = None, **payload: object) -> retriever_pb2.Chunk:
    fields: dict[str, object] = {"document_id": "doc", **payload}
    return retriever_pb2.Chunk(
        vector=vector or [0.6, 0.8],
        text="t",
        payload=common_pb2.ChunkPayload(**fields),  # type: ignore[arg-type]
    )


def test_a_good_upsert_returns_its_dimension() -> None:
    request = retriever_pb2.UpsertRequest(chunks=[chunk(), chunk()])
    request.chunks[1].id = UUID
    assert v.validate_upsert(request, max_batch=4) == 2


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        (retriever_pb2.UpsertRequest(), "chunks must not be empty"),
        (retriever_pb2.UpsertRequest(chunks=[chunk()] * 5), "at most 4"),
        (retriever_pb2.UpsertRequest(chunks=[chunk([0.1, math.nan])]), "chunks[0].vector[1] is nan"),
        (retriever_pb2.UpsertRequest(chunks=[chunk([math.inf, 0.1])]), "chunks[0].vector[0] is inf"),
        (retriever_pb2.UpsertRequest(chunks=[chunk(), chunk([0.1, 0.2, 0.3])]), "one dimension"),
        (retriever_pb2.UpsertRequest(chunks=[chunk(document_id="")]), "chunks[0].payload.document_id"),
        (retriever_pb2.UpsertRequest(chunks=[chunk(quarter=9)]), "chunks[0].payload.quarter"),
        (retriever_pb2.UpsertRequest(chunks=[chunk(page=-1)]), "chunks[0].payload.page"),
        (retriever_pb2.UpsertRequest(chunks=[chunk(origin=42)]), "chunks[0].payload.origin"),
        (retriever_pb2.UpsertRequest(chunks=[chunk(aliases=["a"] * 500)]), "chunks[0].payload.aliases"),
    ],
)
def test_bad_upserts_name_the_field(request_: retriever_pb2.UpsertRequest, fragment: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        v.validate_upsert(request_, max_batch=4)
    assert fragment in str(err.value)


def test_a_point_id_must_be_a_uuid() -> None:
    request = retriever_pb2.UpsertRequest(chunks=[chunk()])
    request.chunks[0].id = "chunk-1"
    with pytest.raises(InvalidArgument, match=r"chunks\[0\]\.id is not a UUID string: 'chunk-1'"):
        v.validate_upsert(request, max_batch=4)


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        (retriever_pb2.SearchRequest(vector=[0.6, 0.8], k=0), "k must be between 1 and 10, got 0"),
        (retriever_pb2.SearchRequest(vector=[0.6, 0.8], k=-3), "got -3"),
        (retriever_pb2.SearchRequest(vector=[0.6, 0.8], k=2**31 - 1), "k must be between"),
        (retriever_pb2.SearchRequest(vector=[], k=3), "vector must not be empty"),
        (retriever_pb2.SearchRequest(vector=[math.nan, 0.8], k=3), "vector[0] is nan"),
        (retriever_pb2.SearchRequest(vector=[0.6, 0.8, 0.0], k=3), "dimension 3, the collection 2"),
        (retriever_pb2.SearchRequest(vector=[0.6, 0.8], k=3, mode=9), "mode must be"),
        (retriever_pb2.SearchRequest(vector=[0.6, 0.8], k=3, text="x" * 30_000), "text has 30000"),
        (
            retriever_pb2.SearchRequest(vector=[0.6, 0.8], k=3, filter=common_pb2.PayloadFilter(origin=5)),
            "filter.origin",
        ),
    ],
)
def test_bad_searches_name_the_field(request_: retriever_pb2.SearchRequest, fragment: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        v.validate_search(request_, max_k=10, dimension=2)
    assert fragment in str(err.value)


def test_search_before_any_collection_checks_only_the_vector_itself() -> None:
    v.validate_search(retriever_pb2.SearchRequest(vector=[0.6, 0.8, 0.0], k=3), max_k=10, dimension=None)


def test_delete_and_catalog_limits() -> None:
    with pytest.raises(InvalidArgument, match="document_id must not be empty"):
        v.validate_delete(retriever_pb2.DeleteDocumentRequest())
    with pytest.raises(InvalidArgument, match="limit must be between 0 and"):
        v.validate_catalog(retriever_pb2.CatalogRequest(limit=-1))
    with pytest.raises(InvalidArgument, match="limit"):
        v.validate_catalog(retriever_pb2.CatalogRequest(limit=2**31 - 1))
    v.validate_catalog(retriever_pb2.CatalogRequest(limit=0))
