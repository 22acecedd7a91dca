"""Requests to gRPC messages and gRPC messages to the JSON shapes of `schemas`.

Replies are read generically: a model takes the message's fields of the same names (`_fields`), enums by
their short names (weaverbird_common.proto_names); only what differs (server paths cut from titles, a
fact's period label, optional parts) is written out. json_format.MessageToDict is not used: it prints
float fields at float32 precision (0.62, where the API has always sent 0.6200000047683716) and int64
fields as strings, which would change the values clients see."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from pydantic import BaseModel
from weaverbird.v1 import common_pb2, ingester_pb2, orchestrator_pb2, retriever_pb2
from weaverbird_common import proto_names
from weaverbird_common.facts.model import Period

from weaverbird_gateway import schemas
from weaverbird_gateway.errors import GatewayError
from weaverbird_gateway.paths import without_server_path

M = TypeVar("M", bound=BaseModel)
_TIMESTAMP = "google.protobuf.Timestamp"


def _build(factory: type[Message], **fields: Any) -> Any:
    """The message, or a 400 when a value cannot be put in it (e.g. a lone UTF-16 surrogate)."""
    try:
        return factory(**fields)
    except (ValueError, TypeError, UnicodeError) as exc:
        raise GatewayError(400, f"invalid request: {exc}", "INVALID_ARGUMENT") from None


# Request fields copied as they are; None (unset) means "deployment default", so those stay unset.
_ASK_FIELDS = {
    "question",
    "conversation_id",
    "temperature",
    "max_tokens",
    "top_k",
    "top_j",
    "threshold",
    "max_rounds",
    "chart",
    "facts",
    "json_keys",
}


def ask_request(body: schemas.AskBody) -> orchestrator_pb2.AskRequest:
    fields: dict[str, Any] = body.model_dump(include=_ASK_FIELDS, exclude_none=True)
    if body.task is not None:
        fields["task"] = proto_names.number(common_pb2.Task, body.task)
    if body.history:
        fields["history"] = [_build(common_pb2.Turn, role=turn.role, text=turn.text) for turn in body.history]
    if body.filters is not None:
        given = body.filters.model_dump(exclude_none=True)
        if "origin" in given:
            given["origin"] = proto_names.number(common_pb2.Origin, given["origin"])
        if given:
            fields["filter"] = _build(common_pb2.PayloadFilter, **given)
    return _build(orchestrator_pb2.AskRequest, **fields)


def add_url_request(body: schemas.AddUrlBody) -> ingester_pb2.AddDocumentRequest:
    meta = _build(ingester_pb2.DocumentMetadata, **(body.metadata.model_dump() if body.metadata else {}))
    return _build(ingester_pb2.AddDocumentRequest, url=body.url, asynchronous=body.asynchronous, metadata=meta)


def add_file_request(data: bytes, filename: str, meta: schemas.DocumentMeta) -> ingester_pb2.AddDocumentRequest:
    # `source` is the file name (sanitised by uploads.safe_filename): the browser's path is not ours to
    # know, and ids key on the name anyway.
    return _build(
        ingester_pb2.AddDocumentRequest,
        data=data,
        filename=filename,
        source=filename,
        metadata=_build(ingester_pb2.DocumentMetadata, **meta.model_dump()),
    )


def _value(field: FieldDescriptor, value: Any) -> Any:
    if field.enum_type is not None:
        return proto_names.short_name(field.enum_type, value)
    if field.message_type is not None:
        return _fields(value)
    return value


def _fields(msg: Message) -> dict[str, Any]:
    """Every field by its proto name, as plain Python values: repeated -> list, map -> dict, message ->
    dict, enum -> short name. Unset `optional` scalars and Timestamps are None (null in the JSON); an
    unset message is its defaults. Fields a model does not declare are ignored by it."""
    out: dict[str, Any] = {}
    for field in msg.DESCRIPTOR.fields:
        value = getattr(msg, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            out[field.name] = dict(value)
        elif field.is_repeated:
            out[field.name] = [_value(field, v) for v in value]
        elif field.message_type is not None and field.message_type.full_name == _TIMESTAMP:
            out[field.name] = value.ToDatetime(tzinfo=UTC) if msg.HasField(field.name) else None
        elif field.message_type is None and field.has_presence and not msg.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _value(field, value)
    return out


def _model(model: type[M], msg: Message, **given: Any) -> M:
    """`model` from the message's fields of the same names; `given` ones replace them."""
    return model.model_validate(_fields(msg) | given)


def route(r: orchestrator_pb2.RouteEvent) -> schemas.RouteInfo:
    # The filter applied: only the fields that were set.
    applied = {d.name: _value(d, value) for d, value in r.filter.ListFields()}
    return _model(schemas.RouteInfo, r, filter=applied)


def citation(c: orchestrator_pb2.Citation) -> schemas.Citation:
    return _model(schemas.Citation, c, title=without_server_path(c.title), source=without_server_path(c.source))


def done(d: orchestrator_pb2.AnswerDone) -> schemas.DoneInfo:
    # Each task part is set for its task only; unset ones are null, not empty objects.
    parts = {
        name: _fields(getattr(d, name)) if d.HasField(name) else None for name in ("calculation", "structured", "chart")
    }
    return _model(schemas.DoneInfo, d, **parts)


def ask_event(event: orchestrator_pb2.AskEvent) -> tuple[str, dict[str, Any]]:
    """(SSE event name, JSON payload) of one AskStream message; names are the proto's oneof names."""
    kind = event.WhichOneof("event")
    if kind == "route":
        return kind, route(event.route).model_dump()
    if kind == "prompt":
        return kind, _model(schemas.PromptInfo, event.prompt).model_dump()
    if kind == "stage":
        return kind, _model(schemas.StageInfo, event.stage).model_dump()
    if kind == "token":
        return kind, schemas.TokenEvent(text=event.token).model_dump()
    if kind == "citations":
        return kind, schemas.CitationsEvent(citations=[citation(c) for c in event.citations.citations]).model_dump()
    if kind == "further_reading":
        passages = [citation(c) for c in event.further_reading.passages]
        return kind, schemas.FurtherReadingEvent(passages=passages).model_dump()
    if kind == "done":
        return kind, done(event.done).model_dump()
    # A newer orchestrator may add events (additive API): pass the name on, clients ignore what they don't know.
    return kind or "unknown", {}


def document_added(reply: ingester_pb2.AddDocumentResponse) -> schemas.DocumentAdded:
    return _model(schemas.DocumentAdded, reply, title=without_server_path(reply.title))


def list_documents_request(
    *,
    origin: str | None,
    company: str | None,
    language: str | None,
    since: datetime | None,
    page_size: int,
    page_token: str,
) -> ingester_pb2.IngesterServiceListDocumentsRequest:
    flt = _build(
        retriever_pb2.DocumentFilter,
        origin=proto_names.number(retriever_pb2.DocumentOrigin, origin) if origin else 0,
        company=company or "",
        language=language or "",
    )
    if since is not None:
        # A time without a zone is taken as UTC, as the page sends it.
        try:
            flt.added_since.FromDatetime((since if since.tzinfo else since.replace(tzinfo=UTC)).astimezone(UTC))
        except (ValueError, OverflowError) as exc:
            raise GatewayError(400, f"since: {exc}", "INVALID_ARGUMENT") from None
    return _build(
        ingester_pb2.IngesterServiceListDocumentsRequest, filter=flt, page_size=page_size, page_token=page_token
    )


def document(d: retriever_pb2.DocumentSummary) -> schemas.DocumentInfo:
    return _model(schemas.DocumentInfo, d, title=without_server_path(d.title), source=without_server_path(d.source))


def document_list(reply: ingester_pb2.IngesterServiceListDocumentsResponse) -> schemas.DocumentList:
    return _model(schemas.DocumentList, reply, documents=[document(d) for d in reply.documents])


def document_details(reply: ingester_pb2.IngesterServiceGetDocumentResponse) -> schemas.DocumentDetails:
    facts = [document_fact(f) for f in reply.facts]
    return _model(schemas.DocumentDetails, reply, document=document(reply.document), facts=facts)


def document_fact(fact: retriever_pb2.Fact) -> schemas.DocumentFact:
    period = Period(fiscal_year=fact.fiscal_year, months=fact.months, quarter=fact.quarter, end=fact.period_end)
    return _model(schemas.DocumentFact, fact, period=period.label())


def document_deleted(reply: ingester_pb2.IngesterServiceDeleteDocumentResponse) -> schemas.DocumentDeleted:
    return _model(schemas.DocumentDeleted, reply)
