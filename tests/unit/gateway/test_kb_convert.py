"""The gateway's knowledge-base conversions: query parameters to the ingester's request, documents to JSON."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from weaverbird.v1 import retriever_pb2
from weaverbird_gateway import convert
from weaverbird_gateway.errors import GatewayError


def test_query_parameters_become_the_list_request() -> None:
    request = convert.list_documents_request(
        origin="user", company="Aurora", language="en", since=datetime(2026, 3, 1, 8), page_size=20, page_token="t"
    )
    assert request.filter.origin == retriever_pb2.DOCUMENT_ORIGIN_USER
    assert (request.filter.company, request.filter.language, request.page_size, request.page_token) == (
        "Aurora",
        "en",
        20,
        "t",
    )
    assert request.filter.added_since.ToDatetime(tzinfo=UTC) == datetime(2026, 3, 1, 8, tzinfo=UTC)  # no zone = UTC
    shanghai = timezone(timedelta(hours=8))
    zoned = convert.list_documents_request(
        origin=None,
        company=None,
        language=None,
        since=datetime(2026, 3, 1, 8, tzinfo=shanghai),
        page_size=0,
        page_token="",
    )
    assert zoned.filter.added_since.ToDatetime(tzinfo=UTC) == datetime(2026, 3, 1, 0, tzinfo=UTC)
    assert zoned.filter.origin == retriever_pb2.DOCUMENT_ORIGIN_UNSPECIFIED and not zoned.filter.company
    unset = convert.list_documents_request(
        origin=None, company=None, language=None, since=None, page_size=0, page_token=""
    )
    assert not unset.filter.HasField("added_since")


def test_a_company_that_cannot_be_encoded_is_a_400() -> None:
    with pytest.raises(GatewayError) as err:
        convert.list_documents_request(
            origin=None, company="\ud800", language=None, since=None, page_size=0, page_token=""
        )
    assert err.value.status == 400


def test_documents_become_json_with_provenance_only_where_known() -> None:
    found = datetime(2026, 3, 1, 9, tzinfo=UTC)
    web = retriever_pb2.DocumentSummary(
        document_id="d1", title="Aurora", source="https://x/a", chunks=3, company="AURORA", aliases=["ATP"],
        provenance=retriever_pb2.DocumentProvenance(
            origin=retriever_pb2.DOCUMENT_ORIGIN_WEB, question="Revenue?", best_score=0.5
        ),
    )  # fmt: skip
    web.provenance.found_at.FromDatetime(found)
    out = convert.document(web)
    assert out.provenance.origin == "web" and out.provenance.question == "Revenue?"
    assert out.provenance.best_score == 0.5 and out.provenance.found_at == found and out.provenance.added_at is None
    assert out.aliases == ["ATP"] and out.chunks == 3
    legacy = convert.document(retriever_pb2.DocumentSummary(document_id="d2"))
    assert legacy.provenance.origin == "unspecified" and legacy.provenance.best_score is None
