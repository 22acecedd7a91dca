"""The HTTP layer: routes, error rendering and the web page, over `Backend` (gRPC) and plain modules."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from http import HTTPStatus
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from weaverbird_gateway import convert, offline_docs, schemas, sse, uploads
from weaverbird_gateway.backend import Backend, forward_authorization
from weaverbird_gateway.errors import GatewayError
from weaverbird_gateway.guard import RequestGuard
from weaverbird_gateway.settings import GatewaySettings

log = logging.getLogger(__name__)

STATIC = resources.files("weaverbird_gateway") / "static"

_ERROR_TEXT = {
    400: "Bad request, an unknown Host header (GATEWAY_ALLOWED_HOSTS) or a malformed Authorization header.",
    401: "Credentials missing or not accepted; `WWW-Authenticate: Bearer` says which.",
    403: "The caller's role does not allow this, or a write came from another site (Origin / Sec-Fetch-Site).",
    413: "The request body is over GATEWAY_MAX_BODY_KB (uploads: GATEWAY_MAX_UPLOAD_MB).",
    431: "The request line and headers are over GATEWAY_MAX_HEADER_KB (answered by the server, plain text).",
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these statuses, each an ErrorBody (431 comes from the HTTP server)."""
    return {
        status: {"model": schemas.ErrorBody, **({"description": _ERROR_TEXT[status]} if status in _ERROR_TEXT else {})}
        for status in statuses
    }


_ERRORS = _errors(400, 401, 403, 409, 413, 422, 429, 431, 502, 503, 504)
_READ_ERRORS = _errors(400, 401, 403, 422, 429, 431, 502, 503, 504)
_KB_ERRORS = {**_errors(404), **_READ_ERRORS}
# Document ids are 16 hex digits; the bound only keeps junk out of the gRPC call.
DocumentId = Annotated[str, Path(min_length=1, max_length=256, description="The document's id.")]
# Each Server-Sent Event's name and the schema of its `data` (listed in components/schemas).
STREAM_EVENTS: dict[str, type[BaseModel]] = {
    "route": schemas.RouteInfo,
    "prompt": schemas.PromptInfo,
    "stage": schemas.StageInfo,
    "token": schemas.TokenEvent,
    "citations": schemas.CitationsEvent,
    "further_reading": schemas.FurtherReadingEvent,
    "done": schemas.DoneInfo,
    "error": schemas.ErrorBody,
}
_ASK_STREAM_DOC = {
    "description": "Server-Sent Events (`event: <name>`, `data: <JSON>`), in order: `route` (RouteInfo: with the "
    "task decided and the standalone question searched), `prompt` (PromptInfo; when the model is asked), "
    "`stage`* (StageInfo: each step of a task as it finishes, e.g. an analysis' plan, execute, express and "
    "review), `token`* (TokenEvent), `citations` (CitationsEvent), `further_reading` (FurtherReadingEvent), "
    "`done` (DoneInfo: the task, and for their tasks `calculation`, `structured` and `chart`). When "
    "`done.replacement_answer` is set the answer was withheld: show it instead of the streamed tokens. A "
    "failure after the stream started arrives as an `error` event (ErrorBody). Events a client does not "
    "know are to be skipped (the API grows additively).",
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}
_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "PDF, HTML, Markdown or text."},
                        **{name: {"type": "string"} for name in ("title", "company", "language", "published_date")},
                        "year": {"type": "integer"},
                        "quarter": {"type": "integer"},
                    },
                }
            }
        },
    }
}


def _error_response(error: GatewayError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


def _validation_message(errors: Any) -> str:
    """pydantic's errors as one line: "body.top_k: Input should be a valid integer; ..."."""
    parts = []
    for problem in errors:
        where = ".".join(str(part) for part in problem.get("loc", ()))
        parts.append(f"{where}: {problem.get('msg', 'invalid')}" if where else str(problem.get("msg", "invalid")))
    return "; ".join(parts) or "invalid request"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(GatewayError)
    async def gateway_error(request: Request, exc: GatewayError) -> JSONResponse:
        return _error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error_response(GatewayError(422, _validation_message(exc.errors()), "INVALID_ARGUMENT"))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 413:
            code = "PAYLOAD_TOO_LARGE"  # as uploads.too_large names it
        elif exc.status_code in HTTPStatus._value2member_map_:
            code = HTTPStatus(exc.status_code).name
        else:
            code = "HTTP_ERROR"
        return _error_response(GatewayError(exc.status_code, str(exc.detail), code, dict(exc.headers or {})))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Like the services: the traceback goes to the log under an id, the client gets only the id.
        incident = uuid.uuid4().hex[:12]
        log.error("path=%s status=500 incident=%s", request.url.path, incident, exc_info=exc)
        return _error_response(GatewayError(500, f"internal error (incident {incident})", "INTERNAL"))


async def _read_upload(request: Request, limit: int) -> tuple[bytes, str, str | None, dict[str, str]]:
    """(file bytes, file name, declared content type, other form fields), enforcing the size limit."""
    uploads.check_declared_length(request.headers.get("content-length"), limit)
    capped = Request(request.scope, uploads.capped_receive(request.receive, limit))
    try:
        form = await capped.form(max_files=1, max_fields=16, max_part_size=64 * 1024)
    except GatewayError:
        raise
    except StarletteHTTPException as exc:  # malformed multipart, too many fields
        if exc.status_code == 413:
            raise
        raise GatewayError(400, f"cannot read the form: {exc.detail}", "INVALID_ARGUMENT") from None
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise GatewayError(422, "form field 'file' (a file) is required", "INVALID_ARGUMENT")
        filename = uploads.safe_filename(upload.filename or "")
        uploads.accept_file(filename, upload.content_type)
        data = await upload.read(limit + 1)
        if len(data) > limit:
            raise uploads.too_large(limit, upload.size)
        fields = {key: value for key, value in form.items() if isinstance(value, str)}
        return data, filename, upload.content_type, fields
    finally:
        await form.close()


def _document_stream_events(app: FastAPI) -> None:
    """Adds the stream's event payloads to the OpenAPI components: /api/ask returns text/event-stream, so
    FastAPI would not list them, and clients need their shapes."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = build()
            _, top = models_json_schema(
                [(model, "serialization") for model in STREAM_EVENTS.values()],
                ref_template="#/components/schemas/{model}",
            )
            known = spec.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in top.get("$defs", {}).items():
                known.setdefault(name, schema)
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def create_app(settings: GatewaySettings) -> FastAPI:
    """The ASGI app; gRPC channels open in its lifespan (they belong to the server's event loop)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        backend = Backend(settings)
        app.state.backend = backend
        try:
            yield
        finally:
            await backend.close()

    app = FastAPI(
        title="WeaverBird gateway",
        version="1.0.0",
        summary="Bilingual financial question answering with cited sources: HTTP and Server-Sent Events over "
        "the WeaverBird gRPC services.",
        lifespan=lifespan,
        root_path=settings.root_path,
        docs_url=None,  # offline_docs serves /docs and /redoc without a CDN
        redoc_url=None,
    )
    _install_error_handlers(app)
    _document_stream_events(app)
    app.add_middleware(RequestGuard, settings=settings)

    def backend(request: Request) -> Backend:
        # The services decide what this caller may do, from its own credentials.
        forward_authorization(request.headers.get("authorization"))
        return request.app.state.backend  # type: ignore[no-any-return]

    @app.post("/api/ask", tags=["answers"], responses={200: _ASK_STREAM_DOC, **_ERRORS}, response_class=Response)
    async def ask(body: schemas.AskBody, request: Request) -> Response:
        """Answers a question, with the conversation so far in `history`, as a stream of Server-Sent Events
        (route, prompt, stages, tokens, citations, further reading, done). Errors found before the first
        event are HTTP errors."""
        events = await backend(request).ask(convert.ask_request(body))
        return StreamingResponse(
            sse.stream(events),
            media_type="text/event-stream",
            # no-transform / X-Accel-Buffering: proxies (nginx Ingress) must pass each event on at once.
            headers={"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"},
        )

    @app.post("/api/retrieve", tags=["answers"], responses=_ERRORS)
    async def retrieve(body: schemas.AskBody, request: Request) -> schemas.RetrieveResult:
        """The retrieval path only (route decision and ranked passages), without generation."""
        reply = await backend(request).retrieve(convert.ask_request(body))
        return schemas.RetrieveResult(
            route=convert.route(reply.route), passages=[convert.citation(c) for c in reply.passages]
        )

    @app.post(
        "/api/documents",
        tags=["knowledge base"],
        status_code=201,
        responses={202: {"model": schemas.DocumentAdded, "description": "Queued (asynchronous)."}, **_ERRORS},
    )
    async def add_url(body: schemas.AddUrlBody, request: Request, response: Response) -> schemas.DocumentAdded:
        """Saves a web page to the knowledge base: 201 once searchable, or 202 when queued through Kafka."""
        reply = await backend(request).add_document(convert.add_url_request(body))
        if reply.queued:
            response.status_code = 202
        return convert.document_added(reply)

    @app.post(
        "/api/documents/upload",
        tags=["knowledge base"],
        status_code=201,
        openapi_extra=_UPLOAD_BODY,
        responses={415: {"model": schemas.ErrorBody}, **_ERRORS},
    )
    async def upload(request: Request) -> schemas.DocumentAdded:
        """Adds an uploaded file (PDF, HTML, Markdown or text, up to GATEWAY_MAX_UPLOAD_MB) to the knowledge
        base; replies once it is searchable."""
        data, filename, _, fields = await _read_upload(request, settings.max_upload_bytes)
        try:
            meta = schemas.DocumentMeta.model_validate({k: v for k, v in fields.items() if v != ""})
        except ValidationError as exc:
            raise GatewayError(422, _validation_message(exc.errors()), "INVALID_ARGUMENT") from None
        reply = await backend(request).add_document(convert.add_file_request(data, filename, meta))
        return convert.document_added(reply)

    @app.get("/api/documents", tags=["knowledge base"], responses=_READ_ERRORS)
    async def list_documents(
        request: Request,
        origin: Annotated[
            Literal["local", "web", "user"] | None,
            Query(description="local: files and text; web: found by web search; user: pages users saved."),
        ] = None,
        company: Annotated[str | None, Query(max_length=200, description="Company or alias, any case.")] = None,
        language: Annotated[Literal["en", "zh"] | None, Query()] = None,
        since: Annotated[datetime | None, Query(description="Added at or after (ISO 8601; no zone = UTC).")] = None,
        page_size: Annotated[int, Query(ge=0, le=500, description="0 = 50.")] = 50,
        page_token: Annotated[str, Query(max_length=2000, description="next_page_token of the last page.")] = "",
    ) -> schemas.DocumentList:
        """The knowledge base's documents, newest first, with their origin and provenance (for a web page:
        the question and score that brought it in)."""
        reply = await backend(request).list_documents(
            convert.list_documents_request(
                origin=origin,
                company=company,
                language=language,
                since=since,
                page_size=page_size,
                page_token=page_token,
            )
        )
        return convert.document_list(reply)

    @app.get("/api/documents/{document_id}", tags=["knowledge base"], responses=_KB_ERRORS)
    async def get_document(document_id: DocumentId, request: Request) -> schemas.DocumentDetails:
        """One document: metadata, provenance, chunk count and the start of its text; 404 if not stored."""
        return convert.document_details(await backend(request).get_document(document_id))

    @app.delete("/api/documents/{document_id}", tags=["knowledge base"], responses=_KB_ERRORS)
    async def delete_document(document_id: DocumentId, request: Request) -> schemas.DocumentDeleted:
        """Deletes a document: its chunks and the ingester's dedupe entry, so the same URL can be added
        again; 404 if there was nothing to delete. Needs an admin's own `Authorization: Bearer <token>`:
        the gateway's default token is never sent for it."""
        return convert.document_deleted(await backend(request).delete_document(document_id))

    @app.get("/healthz", tags=["operations"])
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"], responses={503: {"description": "The orchestrator is not SERVING."}})
    async def readyz(request: Request) -> JSONResponse:
        """Readiness: the orchestrator's grpc.health.v1 status is SERVING."""
        status = await backend(request).orchestrator_status()
        ready = status == "SERVING"
        return JSONResponse(
            {"status": "ready" if ready else "not_ready", "orchestrator": status}, 200 if ready else 503
        )

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(str(STATIC / "index.html"), media_type="text/html; charset=utf-8")

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    offline_docs.install(app, str(STATIC))
    return app
