"""Checks of AddDocument requests at the gRPC edge, and the URL guard asynchronous adds are vetted by.

A URL is refused here, before anything is queued: a bad scheme or form with INVALID_ARGUMENT, and an
address that is not on the public internet (loopback, private, link-local, ...) with INVALID_ARGUMENT
too. Not PERMISSION_DENIED: no caller may have such a URL fetched (only the deployment's allow-list
can permit a host), so it is a property of the request, not of who sent it, and the synchronous path
already answers the same URL with INVALID_ARGUMENT from the fetcher's guard.
"""

from __future__ import annotations

from datetime import date

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from weaverbird.v1 import ingester_pb2
from weaverbird_common.errors import InvalidArgument
from weaverbird_common.validation import (
    MAX_COMPANY_CHARS,
    MAX_DATE_CHARS,
    MAX_ID_CHARS,
    MAX_QUARTER,
    MAX_URL_CHARS,
    MAX_YEAR,
    check_choice,
    check_http_url,
    check_int,
    check_text,
)
from weaverbird_common.web.ssrf import HostUnresolvable, UrlGuard

MAX_FILENAME_CHARS = 255
MAX_SOURCE_CHARS = MAX_URL_CHARS
MAX_TITLE_CHARS = 1000
LANGUAGES = ("", "en", "zh")
# Documents per ListDocuments page (the retriever's limit).
MAX_PAGE_SIZE = 500
MAX_PAGE_TOKEN_CHARS = 2000


class _FetchAllowList(BaseSettings):
    """The one ingester setting the URL guard needs (same variable as IngesterSettings.fetch_allow_hosts)."""

    model_config = SettingsConfigDict(env_prefix="INGESTER_", extra="ignore")

    fetch_allow_hosts: list[str] = Field(default_factory=list)


def default_url_guard() -> UrlGuard:
    """A guard with the deployment's allow-list (INGESTER_FETCH_ALLOW_HOSTS), as the fetcher has."""
    return UrlGuard(_FetchAllowList().fetch_allow_hosts)


def validate_add(request: ingester_pb2.AddDocumentRequest, *, max_document_bytes: int) -> None:
    """Content, names and metadata of a request; the URL's form only (see `vet_url_for_queue`)."""
    kind = request.WhichOneof("content")
    if kind is None:
        raise InvalidArgument("one of data, text or url is required")
    check_text(request.filename, "filename", max_chars=MAX_FILENAME_CHARS)
    check_text(request.source, "source", max_chars=MAX_SOURCE_CHARS)
    if kind == "url":
        check_http_url(request.url)
    elif kind == "text":
        check_text(request.text, "text", max_chars=max_document_bytes, required=True)
    else:
        if not request.filename.strip():
            raise InvalidArgument("filename (with extension) is required with data")
        if not request.data:
            raise InvalidArgument("data must not be empty")
    if request.asynchronous and kind != "url":
        raise InvalidArgument("asynchronous ingestion takes a url; send files and text synchronously")
    validate_metadata(request.metadata)


def validate_metadata(meta: ingester_pb2.DocumentMetadata) -> None:
    check_text(meta.title, "metadata.title", max_chars=MAX_TITLE_CHARS)
    check_text(meta.company, "metadata.company", max_chars=MAX_COMPANY_CHARS)
    check_int(meta.year, "metadata.year", minimum=0, maximum=MAX_YEAR)
    check_int(meta.quarter, "metadata.quarter", minimum=0, maximum=MAX_QUARTER)
    check_choice(meta.language, "metadata.language", LANGUAGES)
    if meta.published_date:
        check_text(meta.published_date, "metadata.published_date", max_chars=MAX_DATE_CHARS)
        try:
            date.fromisoformat(meta.published_date)
        except ValueError:
            raise InvalidArgument(
                f"metadata.published_date must be an ISO 8601 date (YYYY-MM-DD), got {meta.published_date[:40]!r}"
            ) from None


async def vet_url_for_queue(guard: UrlGuard, url: str) -> None:
    """Refuses (UnsafeUrl, INVALID_ARGUMENT) a URL the consumer would never be allowed to fetch.

    A DNS failure that may pass (HostUnresolvable) does not block queueing: the consumer vets the URL
    again when it fetches, and retries, so a queued URL can never reach a private address either way.
    """
    try:
        await guard.vet(url)
    except HostUnresolvable:
        pass


def validate_document_id(document_id: str) -> None:
    check_text(document_id, "document_id", max_chars=MAX_ID_CHARS, required=True)


def validate_list(request: ingester_pb2.IngesterServiceListDocumentsRequest) -> None:
    """Paging here; the filter is checked by the retriever, which names the field."""
    check_int(request.page_size, "page_size", minimum=0, maximum=MAX_PAGE_SIZE)
    check_text(request.page_token, "page_token", max_chars=MAX_PAGE_TOKEN_CHARS)
    check_text(request.filter.company, "filter.company", max_chars=MAX_COMPANY_CHARS)
    check_choice(request.filter.language, "filter.language", LANGUAGES)
