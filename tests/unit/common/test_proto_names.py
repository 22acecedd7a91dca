"""The enums' short names: what the HTTP JSON and the CLI spell, derived from the generated enums."""

from __future__ import annotations

import pytest
from weaverbird.v1 import common_pb2, orchestrator_pb2, retriever_pb2
from weaverbird_common import proto_names


def test_short_names_drop_the_enum_prefix_and_lower_case() -> None:
    assert (
        proto_names.short_name(orchestrator_pb2.AnswerCheck, orchestrator_pb2.ANSWER_CHECK_NO_NUMBERS) == "no_numbers"
    )
    assert proto_names.short_name(retriever_pb2.DocumentOrigin, retriever_pb2.DOCUMENT_ORIGIN_USER) == "user"
    assert proto_names.short_name(orchestrator_pb2.Route, orchestrator_pb2.ROUTE_WEB) == "web"


def test_zero_and_unknown_values_get_the_fallback() -> None:
    assert proto_names.short_name(common_pb2.Task, common_pb2.TASK_UNSPECIFIED) == "unspecified"
    # A newer peer's value this build has no name for.
    assert proto_names.short_name(common_pb2.Task, 99) == "unspecified"
    assert proto_names.short_name(retriever_pb2.DocumentOrigin, 99, unknown="?") == "?"


def test_numbers_are_the_choices_in_proto_order_and_round_trip() -> None:
    tasks = proto_names.numbers(common_pb2.Task)
    assert list(tasks) == ["lookup", "calculation", "extraction", "analysis"]
    assert proto_names.numbers(retriever_pb2.DocumentOrigin) == {
        "local": retriever_pb2.DOCUMENT_ORIGIN_LOCAL,
        "web": retriever_pb2.DOCUMENT_ORIGIN_WEB,
        "user": retriever_pb2.DOCUMENT_ORIGIN_USER,
    }
    for name, value in tasks.items():
        assert proto_names.number(common_pb2.Task, name) == value
    assert proto_names.number(common_pb2.Origin, "web") == common_pb2.ORIGIN_WEB
    with pytest.raises(ValueError):
        proto_names.number(common_pb2.Origin, "moon")
