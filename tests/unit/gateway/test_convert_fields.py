"""The gateway's generic reply conversion: every JSON field is the proto field of the same name, at the
precision the message holds it, enums by their short names; and the schemas' enum words are the protos'."""

from __future__ import annotations

from typing import Any, get_args

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from weaverbird.v1 import common_pb2, ingester_pb2, orchestrator_pb2, retriever_pb2
from weaverbird_common import proto_names
from weaverbird_gateway import convert, schemas


def _fill(msg: Message, seed: int = 1) -> Message:
    """Each scalar field a distinct value (floats not exact in float32), each enum a named value."""
    for n, field in enumerate(msg.DESCRIPTOR.fields, start=seed):
        if field.message_type is not None:
            continue
        if field.enum_type is not None:
            value: Any = field.enum_type.values[1 + n % (len(field.enum_type.values) - 1)].number
        elif field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
            value = n + 0.1
        elif field.type == FieldDescriptor.TYPE_BOOL:
            value = True
        elif field.type == FieldDescriptor.TYPE_STRING:
            value = f"text {n}"
        else:
            value = n
        if field.is_repeated:
            getattr(msg, field.name).extend([value, value])
        else:
            setattr(msg, field.name, value)
    return msg


def _expected(msg: Message, name: str) -> Any:
    field = msg.DESCRIPTOR.fields_by_name[name]
    value = getattr(msg, name)
    if field.enum_type is not None:
        return proto_names.short_name(field.enum_type, value)
    return list(value) if field.is_repeated else value


def _assert_scalars_carried(msg: Message, dumped: dict[str, Any]) -> None:
    scalars = [f.name for f in msg.DESCRIPTOR.fields if f.message_type is None and f.name in dumped]
    assert scalars, "the model shares fields with the message"
    for name in scalars:
        assert dumped[name] == _expected(msg, name), name


def test_citation_and_route_carry_every_field_at_float32_precision() -> None:
    citation = _fill(orchestrator_pb2.Citation())
    dumped = convert.citation(citation).model_dump()
    _assert_scalars_carried(citation, dumped)
    # The float32 score as the message holds it: json_format would print 7.1 instead.
    assert dumped["score"] == citation.score != round(citation.score, 5)
    route = _fill(orchestrator_pb2.RouteEvent())
    route.notices.add(code="c", params={"k": "v"}, text="t")
    route.filter.origin = common_pb2.ORIGIN_WEB
    route.filter.year = 2024
    info = convert.route(route).model_dump()
    _assert_scalars_carried(route, info)
    assert info["filter"] == {"origin": "web", "year": 2024}
    assert info["notices"] == [{"code": "c", "params": {"k": "v"}, "text": "t"}]
    assert set(info["timings"].values()) == {0.0}


def test_done_parts_are_null_unless_set_and_unknown_enums_are_unspecified() -> None:
    done = _fill(orchestrator_pb2.AnswerDone())
    dumped = convert.done(done).model_dump()
    _assert_scalars_carried(done, dumped)
    assert dumped["calculation"] is None and dumped["structured"] is None and dumped["chart"] is None
    done.structured.json = '{"a": 1}'
    done.chart.series.add(name="s", values=[1.5], passages=[2])
    dumped = convert.done(done).model_dump()
    assert dumped["structured"]["json"] == '{"a": 1}' and dumped["calculation"] is None
    assert dumped["chart"]["series"] == [{"name": "s", "values": [1.5], "passages": [2]}]
    newer = convert.done(orchestrator_pb2.AnswerDone(answer_check=77, task=55))
    assert (newer.answer_check, newer.task) == ("unspecified", "unspecified")


def test_documents_keep_int64_as_numbers_and_unset_optionals_as_null() -> None:
    reply = ingester_pb2.IngesterServiceListDocumentsResponse(total_size=2**40, next_page_token="n")
    summary = _fill(reply.documents.add())
    summary.title = "/srv/data/report.pdf"
    listed = convert.document_list(reply).model_dump()
    assert listed["total_size"] == 2**40 and listed["next_page_token"] == "n"
    (doc,) = listed["documents"]
    assert doc["title"] == "report.pdf" and doc["chunks"] == summary.chunks
    assert doc["provenance"] == {
        "origin": "unspecified",
        "added_at": None,
        "question": "",
        "best_score": None,
        "found_at": None,
    }
    summary.provenance.origin = retriever_pb2.DOCUMENT_ORIGIN_USER
    summary.provenance.best_score = 0.0
    provenance = convert.document(summary).provenance
    assert provenance.origin == "user" and provenance.best_score == 0.0


def test_schema_enum_words_are_the_proto_enums_short_names() -> None:
    # A value added to a .proto must be added to the API schema too (the OpenAPI lists the choices).
    assert list(get_args(schemas.TaskName)) == list(proto_names.numbers(common_pb2.Task))
    assert list(get_args(schemas.DocumentOriginName)) == list(proto_names.numbers(retriever_pb2.DocumentOrigin))
    checks = get_args(schemas.DoneInfo.model_fields["answer_check"].annotation)
    assert list(checks) == [*proto_names.numbers(orchestrator_pb2.AnswerCheck), "unspecified"]
    routes = get_args(schemas.RouteInfo.model_fields["route"].annotation)
    assert list(routes) == [*proto_names.numbers(orchestrator_pb2.Route), "unspecified"]
    origins = get_args(schemas.Filters.model_fields["origin"].annotation)
    assert list(get_args(origins[0])) == list(proto_names.numbers(common_pb2.Origin))
