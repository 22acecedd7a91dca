"""Requests to gRPC messages and gRPC messages to the JSON shapes of `schemas`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf import timestamp_pb2
from google.protobuf.message import Message
from weaverbird.v1 import common_pb2, ingester_pb2, orchestrator_pb2, retriever_pb2
from weaverbird_common.facts.model import Period

from weaverbird_gateway import schemas
from weaverbird_gateway.errors import GatewayError
from weaverbird_gateway.paths import without_server_path

_ROUTE = {orchestrator_pb2.ROUTE_LOCAL: "local", orchestrator_pb2.ROUTE_WEB: "web"}
_ORIGIN = {common_pb2.ORIGIN_LOCAL: "local", common_pb2.ORIGIN_WEB: "web"}
_ORIGIN_PROTO = {value: key for key, value in _ORIGIN.items()}
DOCUMENT_ORIGINS = {
    "local": retriever_pb2.DOCUMENT_ORIGIN_LOCAL,
    "web": retriever_pb2.DOCUMENT_ORIGIN_WEB,
    "user": retriever_pb2.DOCUMENT_ORIGIN_USER,
}
_DOCUMENT_ORIGIN_NAMES = {value: name for name, value in DOCUMENT_ORIGINS.items()}
TASKS = {
    "lookup": common_pb2.TASK_LOOKUP,
    "calculation": common_pb2.TASK_CALCULATION,
    "extraction": common_pb2.TASK_EXTRACTION,
    "analysis": common_pb2.TASK_ANALYSIS,
}
_TASK_NAMES = {value: name for name, value in TASKS.items()}
_CHECK = {
    orchestrator_pb2.ANSWER_CHECK_SUPPORTED: "supported",
    orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED: "unsupported",
    orchestrator_pb2.ANSWER_CHECK_NO_NUMBERS: "no_numbers",
    orchestrator_pb2.ANSWER_CHECK_REFUSED: "refused",
}


def _build(factory: type[Message], **fields: Any) -> Any:
    """The message, or a 400 when a value cannot be put in it (e.g. a lone UTF-16 surrogate)."""
    try:
        return factory(**fields)
    except (ValueError, TypeError, UnicodeError) as exc:
        raise GatewayError(400, f"invalid request: {exc}", "INVALID_ARGUMENT") from None


def ask_request(body: schemas.AskBody) -> orchestrator_pb2.AskRequest:
    fields: dict[str, Any] = {
        "question": body.question,
        "conversation_id": body.conversation_id,
        "temperature": body.temperature,
        "max_tokens": body.max_tokens,
    }
    # Optional proto fields: unset means "deployment default", so only set what the client sent.
    for name in ("top_k", "top_j", "threshold"):
        value = getattr(body, name)
        if value is not None:
            fields[name] = value
    if body.max_rounds is not None:
        fields["max_rounds"] = body.max_rounds
    if body.chart is not None:
        fields["chart"] = body.chart
    if body.facts is not None:
        fields["facts"] = body.facts
    if body.task is not None:
        fields["task"] = TASKS[body.task]
    if body.json_keys:
        fields["json_keys"] = body.json_keys
    if body.history:
        fields["history"] = [_build(common_pb2.Turn, role=turn.role, text=turn.text) for turn in body.history]
    if body.filters is not None:
        given = body.filters.model_dump(exclude_none=True)
        if "origin" in given:
            given["origin"] = _ORIGIN_PROTO[given["origin"]]
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


def timings(t: orchestrator_pb2.StageTimings) -> schemas.Timings:
    return schemas.Timings(
        embed_ms=t.embed_ms,
        local_search_ms=t.local_search_ms,
        rerank_ms=t.rerank_ms,
        web_search_ms=t.web_search_ms,
        web_fetch_ms=t.web_fetch_ms,
        web_embed_ms=t.web_embed_ms,
        rank_ms=t.rank_ms,
        first_token_ms=t.first_token_ms,
        generate_ms=t.generate_ms,
        total_ms=t.total_ms,
    )


def route(r: orchestrator_pb2.RouteEvent) -> schemas.RouteInfo:
    applied: dict[str, str | int] = {}
    for descriptor, value in r.filter.ListFields():
        applied[descriptor.name] = _ORIGIN.get(value, "unspecified") if descriptor.name == "origin" else value
    return schemas.RouteInfo(
        route=_ROUTE.get(r.route, "unspecified"),  # type: ignore[arg-type]
        best_local_score=r.best_local_score,
        threshold=r.threshold,
        top_k=r.top_k,
        top_j=r.top_j,
        web_status=r.web_status,
        note=r.note,
        filter=applied,
        timings=timings(r.timings),
        pages_fetched=r.pages_fetched,
        pages_failed=r.pages_failed,
        pages_timed_out=r.pages_timed_out,
        documents_queued=r.documents_queued,
        standalone_question=r.standalone_question,
        task=task_name(r.task),  # type: ignore[arg-type]
        task_decided_by=r.task_decided_by,
        route_reason=r.route_reason,
        verdict=r.verdict,
        score_decided=r.score_decided,
        notices=[schemas.Notice(code=n.code, params=dict(n.params), text=n.text) for n in r.notices],
    )


def task_name(task: int) -> str:
    return _TASK_NAMES.get(task, "unspecified")


def stage(s: orchestrator_pb2.StageEvent) -> schemas.StageInfo:
    return schemas.StageInfo(
        stage=s.stage, round=s.round, ms=s.ms, detail=s.detail, sub_questions=list(s.sub_questions), passed=s.passed
    )


def calculation(c: orchestrator_pb2.Calculation) -> schemas.CalculationInfo:
    return schemas.CalculationInfo(
        figures=[
            schemas.FigureInfo(label=f.label, value=f.value, unit=f.unit, text=f.text, passage=f.passage)
            for f in c.figures
        ],
        formula=c.formula,
        result=c.result,
        unit=c.unit,
        result_text=c.result_text,
    )


def structured(a: orchestrator_pb2.StructuredAnswer) -> schemas.StructuredInfo:
    return schemas.StructuredInfo(
        json_text=a.json,
        valid=a.valid,
        missing_keys=list(a.missing_keys),
        errors=list(a.errors),
        repaired=a.repaired,
        keys=list(a.keys),
    )


def chart(c: orchestrator_pb2.ChartSpec) -> schemas.ChartInfo:
    return schemas.ChartInfo(
        type=c.type,
        title=c.title,
        categories=list(c.categories),
        series=[
            schemas.ChartSeriesInfo(name=s.name, values=list(s.values), passages=list(s.passages)) for s in c.series
        ],
        x_label=c.x_label,
        y_label=c.y_label,
        unit=c.unit,
    )


def citation(c: orchestrator_pb2.Citation) -> schemas.Citation:
    return schemas.Citation(
        number=c.number,
        title=without_server_path(c.title),
        source=without_server_path(c.source),
        page=c.page,
        origin=_ORIGIN.get(c.origin, "unspecified"),  # type: ignore[arg-type]
        score=c.score,
        document_id=c.document_id,
        text=c.text,
        cited_in_answer=c.cited_in_answer,
    )


def prompt(p: orchestrator_pb2.PromptEvent) -> schemas.PromptInfo:
    return schemas.PromptInfo(
        prompt_tokens=p.prompt_tokens,
        context_tokens=p.context_tokens,
        context_tokens_full=p.context_tokens_full,
        passages_used=list(p.passages_used),
    )


def done(d: orchestrator_pb2.AnswerDone) -> schemas.DoneInfo:
    return schemas.DoneInfo(
        finish_reason=d.finish_reason,
        prompt_tokens=d.prompt_tokens,
        completion_tokens=d.completion_tokens,
        cached_tokens=d.cached_tokens,
        model_id=d.model_id,
        timings=timings(d.timings),
        conversation_id=d.conversation_id,
        answer_check=_CHECK.get(d.answer_check, "unspecified"),  # type: ignore[arg-type]
        unsupported_numbers=list(d.unsupported_numbers),
        answer_cites_passages=d.answer_cites_passages,
        replacement_answer=d.replacement_answer,
        task=task_name(d.task),  # type: ignore[arg-type]
        # Each is set for its task only; unset ones are null, not empty objects.
        calculation=calculation(d.calculation) if d.HasField("calculation") else None,
        structured=structured(d.structured) if d.HasField("structured") else None,
        chart=chart(d.chart) if d.HasField("chart") else None,
    )


def ask_event(event: orchestrator_pb2.AskEvent) -> tuple[str, dict[str, Any]]:
    """(SSE event name, JSON payload) of one AskStream message; names are the proto's oneof names."""
    kind = event.WhichOneof("event")
    if kind == "route":
        return kind, route(event.route).model_dump()
    if kind == "prompt":
        return kind, prompt(event.prompt).model_dump()
    if kind == "stage":
        return kind, stage(event.stage).model_dump()
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
    return schemas.DocumentAdded(
        document_id=reply.document_id,
        title=without_server_path(reply.title),
        pages=reply.pages,
        chunks=reply.chunks,
        queued=reply.queued,
    )


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
        origin=DOCUMENT_ORIGINS[origin] if origin else retriever_pb2.DOCUMENT_ORIGIN_UNSPECIFIED,
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


def _time(stamp: timestamp_pb2.Timestamp, present: bool) -> datetime | None:
    return stamp.ToDatetime(tzinfo=UTC) if present else None


def document(d: retriever_pb2.DocumentSummary) -> schemas.DocumentInfo:
    p = d.provenance
    return schemas.DocumentInfo(
        document_id=d.document_id,
        title=without_server_path(d.title),
        source=without_server_path(d.source),
        language=d.language,
        company=d.company,
        aliases=list(d.aliases),
        year=d.year,
        quarter=d.quarter,
        doc_type=d.doc_type,
        published_date=d.published_date,
        chunks=d.chunks,
        provenance=schemas.DocumentProvenance(
            origin=_DOCUMENT_ORIGIN_NAMES.get(p.origin, "unspecified"),  # type: ignore[arg-type]
            added_at=_time(p.added_at, p.HasField("added_at")),
            question=p.question,
            best_score=p.best_score if p.HasField("best_score") else None,
            found_at=_time(p.found_at, p.HasField("found_at")),
        ),
    )


def document_list(reply: ingester_pb2.IngesterServiceListDocumentsResponse) -> schemas.DocumentList:
    return schemas.DocumentList(
        documents=[document(d) for d in reply.documents],
        next_page_token=reply.next_page_token,
        total_size=reply.total_size,
    )


def document_details(reply: ingester_pb2.IngesterServiceGetDocumentResponse) -> schemas.DocumentDetails:
    return schemas.DocumentDetails(
        document=document(reply.document),
        preview=reply.preview,
        facts=[document_fact(f) for f in reply.facts],
    )


def document_fact(fact: retriever_pb2.Fact) -> schemas.DocumentFact:
    period = Period(fiscal_year=fact.fiscal_year, months=fact.months, quarter=fact.quarter, end=fact.period_end)
    return schemas.DocumentFact(
        page=fact.page,
        table=fact.table,
        label=fact.label,
        concept=fact.concept,
        period=period.label(),
        value=fact.value,
        scale=fact.scale,
        unit=fact.unit,
        currency=fact.currency,
    )


def document_deleted(reply: ingester_pb2.IngesterServiceDeleteDocumentResponse) -> schemas.DocumentDeleted:
    return schemas.DocumentDeleted(
        document_id=reply.document_id, deleted_chunks=reply.deleted_chunks, dedupe_cleared=reply.dedupe_cleared
    )
