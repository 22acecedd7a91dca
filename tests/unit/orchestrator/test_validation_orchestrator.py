"""Orchestrator edge checks of the fields the flow does not validate, and filters passed on whole."""

from __future__ import annotations

import pytest
from weaverbird.v1 import common_pb2, orchestrator_pb2
from weaverbird_common.errors import InvalidArgument
from weaverbird_orchestrator.convert import request_filters
from weaverbird_orchestrator.validation import validate_ask

Ask = orchestrator_pb2.AskRequest
F = common_pb2.PayloadFilter


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        (Ask(question="q", filter=F(origin=3)), "filter.origin"),
        (Ask(question="q", filter=F(quarter=-1)), "filter.quarter"),
        (Ask(question="q", filter=F(year=123456)), "filter.year"),
        (Ask(question="q", filter=F(doc_type="D" * 100)), "filter.doc_type"),
        (Ask(question="q", conversation_id="c" * 2000), "conversation_id"),
    ],
)
def test_bad_requests_name_the_field(request_: orchestrator_pb2.AskRequest, fragment: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        validate_ask(request_)
    assert fragment in str(err.value)


def test_every_filter_field_reaches_the_flow() -> None:
    request = Ask(question="q", filter=F(company="ADOBE", year=2023, doc_type="10K", origin=common_pb2.ORIGIN_WEB))
    validate_ask(request)
    assert request_filters(request) == {"company": "ADOBE", "year": 2023, "doc_type": "10K", "origin": "web"}
