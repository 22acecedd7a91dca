"""The knowledge base as documents: listing (filtered, newest first, paged) and one document's details.

Chunks are what is stored; a document is described by its first chunk (chunk_index 0, which every
written document has) and counted with a facet over document_id. Listing reads one payload per
document and filters, sorts and pages in Python: a knowledge base of filings holds thousands of
documents, not millions, and this keeps every backend (Edge, local mode, server) behaving alike.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from weaverbird.v1 import retriever_pb2
from weaverbird_common.errors import InvalidArgument, NotFound

from weaverbird_retriever import provenance
from weaverbird_retriever.stores import AsyncVectorStore
from weaverbird_retriever.stores.base import PayloadValue

# Documents a listing reads at most; past it the newest are not guaranteed to be among them.
MAX_DOCUMENTS = 100_000
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
PREVIEW_CHARS = 2000
_TOKEN_VERSION = 1

# Newest first: (0 = has a time, -seconds since the epoch, id); documents without a time come last.
SortKey = tuple[int, float, str]


@dataclass(frozen=True)
class Head:
    """A document as its first chunk describes it."""

    document_id: str
    payload: Mapping[str, PayloadValue]

    @property
    def added_at(self) -> datetime | None:
        return provenance.parse_time(self.payload.get(provenance.ADDED_AT_KEY))

    def sort_key(self) -> SortKey:
        added = self.added_at
        return (0, -added.timestamp(), self.document_id) if added else (1, 0.0, self.document_id)


def matches(head: Head, flt: retriever_pb2.DocumentFilter) -> bool:
    """Whether the document passes every condition set in flt."""
    payload = head.payload
    if flt.origin and provenance.origin_of(payload) != flt.origin:
        return False
    if flt.language and payload.get("language") != flt.language:
        return False
    if flt.company:
        wanted = flt.company.strip().casefold()
        aliases = payload.get("aliases")
        names = [payload.get("company"), *(aliases if isinstance(aliases, list) else [])]
        if not any(isinstance(n, str) and n.casefold() == wanted for n in names):
            return False
    if flt.HasField("added_since"):
        added = head.added_at
        if added is None or added < flt.added_since.ToDatetime(tzinfo=UTC):
            return False
    return True


def encode_token(key: SortKey) -> str:
    raw = json.dumps([_TOKEN_VERSION, *key], ensure_ascii=False, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_token(token: str) -> SortKey:
    """The sort key a page ended at; InvalidArgument for anything this server did not issue."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        version, rank, seconds, document_id = json.loads(raw)
        if version != _TOKEN_VERSION or rank not in (0, 1) or not isinstance(document_id, str):
            raise ValueError("unknown token")
        return (int(rank), float(seconds), document_id)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        raise InvalidArgument("page_token is not a next_page_token this server issued") from None


def paginate(heads: Sequence[Head], page_size: int, page_token: str) -> tuple[list[Head], str]:
    """The page after page_token (newest first) and the token of the page after it ("" at the end).

    A token is the last key shown, not an offset, so documents added or deleted meanwhile neither
    repeat nor skip a document on the following pages."""
    ordered = sorted(heads, key=Head.sort_key)
    if page_token:
        after = decode_token(page_token)
        ordered = [h for h in ordered if h.sort_key() > after]
    page = ordered[:page_size]
    more = len(ordered) > page_size
    return page, encode_token(page[-1].sort_key()) if more else ""


def summary(head: Head, chunks: int) -> retriever_pb2.DocumentSummary:
    p = head.payload

    def text(key: str) -> str:
        value = p.get(key)
        return value if isinstance(value, str) else ""

    def number(key: str) -> int:
        value = p.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    aliases = p.get("aliases")
    return retriever_pb2.DocumentSummary(
        document_id=head.document_id,
        title=text("title"),
        source=text("source"),
        language=text("language"),
        company=text("company"),
        aliases=[str(a) for a in aliases] if isinstance(aliases, list) else [],
        year=number("year"),
        quarter=number("quarter"),
        doc_type=text("doc_type"),
        published_date=text("published_date"),
        chunks=chunks,
        provenance=provenance.from_payload(p),
    )


async def _chunk_counts(store: AsyncVectorStore) -> dict[str, int]:
    return {str(value): count for value, count in await store.facet("document_id", MAX_DOCUMENTS)}


async def list_documents(
    store: AsyncVectorStore, request: retriever_pb2.ListDocumentsRequest
) -> retriever_pb2.ListDocumentsResponse:
    """One page of the documents matching request.filter, newest first."""
    points = await store.scroll({"chunk_index": 0}, MAX_DOCUMENTS)
    heads = [Head(str(p.payload.get("document_id", "")), p.payload) for p in points]
    heads = [h for h in heads if h.document_id and matches(h, request.filter)]
    page, next_token = paginate(heads, request.page_size or DEFAULT_PAGE_SIZE, request.page_token)
    counts = await _chunk_counts(store) if page else {}
    return retriever_pb2.ListDocumentsResponse(
        documents=[summary(h, counts.get(h.document_id, 0)) for h in page],
        next_page_token=next_token,
        total_size=len(heads),
    )


async def get_document(store: AsyncVectorStore, document_id: str) -> retriever_pb2.GetDocumentResponse:
    """The document's summary and the start of its text; NotFound when no chunk of it is stored."""
    points = await store.scroll({"document_id": document_id, "chunk_index": 0}, 1, with_text=True)
    if not points:  # a document written without chunk 0 (by another writer) is still shown
        points = await store.scroll({"document_id": document_id}, 1, with_text=True)
    if not points:
        raise NotFound(f"document {document_id!r} is not in the knowledge base")
    counts = await store.facet("document_id", 1, {"document_id": document_id})
    chunks = sum(count for _, count in counts)
    head = Head(document_id, points[0].payload)
    return retriever_pb2.GetDocumentResponse(document=summary(head, chunks), preview=points[0].text[:PREVIEW_CHARS])
