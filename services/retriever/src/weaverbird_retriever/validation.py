"""Checks of retriever requests at the gRPC edge; each failure is an InvalidArgument naming the field.

The store checks again (NaN, ids), but only after locks and thread hops; here a bad request is refused
before it costs anything, with the field's path in the message (``chunks[3].vector[7] is nan``).
"""

from __future__ import annotations

import math

from google.protobuf import timestamp_pb2
from weaverbird.v1 import common_pb2, retriever_pb2
from weaverbird_common.errors import InvalidArgument
from weaverbird_common.validation import (
    MAX_COMPANY_CHARS,
    MAX_DATE_CHARS,
    MAX_DOC_TYPE_CHARS,
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    MAX_LANGUAGE_CHARS,
    MAX_QUARTER,
    MAX_YEAR,
    check_count,
    check_enum,
    check_int,
    check_payload_filter,
    check_text,
    check_texts,
    check_uuid,
    check_vector,
)

# A stored chunk is ~250-400 tokens; this bounds one chunk's text far above that.
MAX_CHUNK_TEXT_CHARS = 200_000
# Query text for the lexical leg: a question, or a passage when searching by example.
MAX_QUERY_TEXT_CHARS = 20_000
MAX_ALIASES = 200
MAX_PAGE = 1_000_000
MAX_CHUNK_INDEX = 10_000_000
# Values listed per catalog field: far more companies than a KB of filings holds.
MAX_CATALOG_LIMIT = 100_000
# The question that found a web page (IngestMessage.question has the same limit).
MAX_QUESTION_CHARS = 10_000
MAX_PAGE_TOKEN_CHARS = 2000

_ORIGINS = {
    common_pb2.ORIGIN_UNSPECIFIED: "ORIGIN_UNSPECIFIED",
    common_pb2.ORIGIN_LOCAL: "ORIGIN_LOCAL",
    common_pb2.ORIGIN_WEB: "ORIGIN_WEB",
}
_DOCUMENT_ORIGINS = {
    retriever_pb2.DOCUMENT_ORIGIN_UNSPECIFIED: "DOCUMENT_ORIGIN_UNSPECIFIED",
    retriever_pb2.DOCUMENT_ORIGIN_LOCAL: "DOCUMENT_ORIGIN_LOCAL",
    retriever_pb2.DOCUMENT_ORIGIN_WEB: "DOCUMENT_ORIGIN_WEB",
    retriever_pb2.DOCUMENT_ORIGIN_USER: "DOCUMENT_ORIGIN_USER",
}
_MODES = {
    retriever_pb2.SEARCH_MODE_UNSPECIFIED: "SEARCH_MODE_UNSPECIFIED",
    retriever_pb2.SEARCH_MODE_DENSE: "SEARCH_MODE_DENSE",
    retriever_pb2.SEARCH_MODE_LEXICAL: "SEARCH_MODE_LEXICAL",
    retriever_pb2.SEARCH_MODE_HYBRID: "SEARCH_MODE_HYBRID",
}


def check_payload(payload: common_pb2.ChunkPayload, field: str) -> None:
    """A chunk's metadata: document_id present, every value within its range and length."""
    check_text(payload.document_id, f"{field}.document_id", max_chars=MAX_ID_CHARS, required=True)
    for name in ("title", "source", "heading"):
        check_text(getattr(payload, name), f"{field}.{name}", max_chars=MAX_LABEL_CHARS)
    check_text(payload.company, f"{field}.company", max_chars=MAX_COMPANY_CHARS)
    check_text(payload.language, f"{field}.language", max_chars=MAX_LANGUAGE_CHARS)
    check_text(payload.doc_type, f"{field}.doc_type", max_chars=MAX_DOC_TYPE_CHARS)
    check_text(payload.published_date, f"{field}.published_date", max_chars=MAX_DATE_CHARS)
    check_int(payload.page, f"{field}.page", minimum=0, maximum=MAX_PAGE)
    check_int(payload.year, f"{field}.year", minimum=0, maximum=MAX_YEAR)
    check_int(payload.quarter, f"{field}.quarter", minimum=0, maximum=MAX_QUARTER)
    check_int(payload.chunk_index, f"{field}.chunk_index", minimum=0, maximum=MAX_CHUNK_INDEX)
    check_enum(payload.origin, f"{field}.origin", _ORIGINS)
    check_count(payload.aliases, f"{field}.aliases", maximum=MAX_ALIASES)
    check_texts(payload.aliases, f"{field}.aliases", max_chars=MAX_COMPANY_CHARS)


def check_timestamp(stamp: timestamp_pb2.Timestamp, field: str) -> None:
    """A Timestamp a datetime can hold (years 1-9999, nanos in range)."""
    try:
        stamp.ToDatetime()
    except (ValueError, OverflowError):
        raise InvalidArgument(f"{field} is not a valid time (seconds={stamp.seconds}, nanos={stamp.nanos})") from None


def check_provenance(provenance: retriever_pb2.DocumentProvenance, field: str) -> None:
    check_enum(provenance.origin, f"{field}.origin", _DOCUMENT_ORIGINS)
    check_text(provenance.question, f"{field}.question", max_chars=MAX_QUESTION_CHARS)
    if provenance.HasField("best_score") and not math.isfinite(provenance.best_score):
        raise InvalidArgument(f"{field}.best_score must be a finite number, got {provenance.best_score}")
    for name in ("added_at", "found_at"):
        if provenance.HasField(name):
            check_timestamp(getattr(provenance, name), f"{field}.{name}")


def validate_upsert(request: retriever_pb2.UpsertRequest, *, max_batch: int) -> int:
    """The dimension shared by every chunk's vector, once every chunk is well formed."""
    check_count(request.chunks, "chunks", minimum=1, maximum=max_batch)
    dimension = len(request.chunks[0].vector)
    for i, chunk in enumerate(request.chunks):
        field = f"chunks[{i}]"
        if chunk.id:
            check_uuid(chunk.id, f"{field}.id")
        check_vector(chunk.vector, f"{field}.vector")
        if len(chunk.vector) != dimension:
            raise InvalidArgument(
                f"{field}.vector has dimension {len(chunk.vector)}, chunks[0].vector {dimension}; "
                "all chunks of one call need vectors of one dimension"
            )
        check_text(chunk.text, f"{field}.text", max_chars=MAX_CHUNK_TEXT_CHARS)
        check_payload(chunk.payload, f"{field}.payload")
        if chunk.HasField("provenance"):
            check_provenance(chunk.provenance, f"{field}.provenance")
    return dimension


def validate_search(request: retriever_pb2.SearchRequest, *, max_k: int, dimension: int | None) -> None:
    """k, vector, text, mode and filter of a search; the vector must match the collection's dimension."""
    check_int(request.k, "k", minimum=1, maximum=max_k)
    check_vector(request.vector, "vector")
    if dimension is not None and len(request.vector) != dimension:
        raise InvalidArgument(
            f"vector has dimension {len(request.vector)}, the collection {dimension}; "
            "query with vectors of the model the knowledge base was built with"
        )
    check_text(request.text, "text", max_chars=MAX_QUERY_TEXT_CHARS)
    check_enum(request.mode, "mode", _MODES)
    if request.HasField("filter"):
        check_payload_filter(request.filter)


def validate_delete(request: retriever_pb2.DeleteDocumentRequest) -> None:
    check_text(request.document_id, "document_id", max_chars=MAX_ID_CHARS, required=True)


def validate_catalog(request: retriever_pb2.CatalogRequest) -> None:
    check_int(request.limit, "limit", minimum=0, maximum=MAX_CATALOG_LIMIT)


def validate_document_filter(flt: retriever_pb2.DocumentFilter, field: str = "filter") -> None:
    check_enum(flt.origin, f"{field}.origin", _DOCUMENT_ORIGINS)
    check_text(flt.company, f"{field}.company", max_chars=MAX_COMPANY_CHARS)
    check_text(flt.language, f"{field}.language", max_chars=MAX_LANGUAGE_CHARS)
    if flt.HasField("added_since"):
        check_timestamp(flt.added_since, f"{field}.added_since")


def validate_list_documents(request: retriever_pb2.ListDocumentsRequest, *, max_page_size: int) -> None:
    validate_document_filter(request.filter)
    check_int(request.page_size, "page_size", minimum=0, maximum=max_page_size)
    check_text(request.page_token, "page_token", max_chars=MAX_PAGE_TOKEN_CHARS)


def validate_get_document(request: retriever_pb2.GetDocumentRequest) -> None:
    check_text(request.document_id, "document_id", max_chars=MAX_ID_CHARS, required=True)


# Facts of one document per UpsertFacts: a 10-K's statements give a few thousand.
MAX_FACTS_PER_DOCUMENT = 50_000
MAX_CONCEPT_CHARS = 256
MAX_FACT_TEXT_CHARS = 64  # statement, unit, currency, period_end
MAX_LOOKUP_CONCEPTS = 64
MAX_LOOKUP_YEARS = 32
# One scroll per concept and year pair: bounds the work of one lookup.
MAX_LOOKUP_PAIRS = 512
MAX_LOOKUP_LIMIT = 10_000
# Scale words go up to 1e12 (trillions); 亿 is 1e8.
MAX_FACT_SCALE = 1e15
MAX_MONTHS = 12


def check_fact(fact: retriever_pb2.Fact, field: str, document_id: str) -> None:
    """One fact: its document is the request's, every text within its length, numbers finite and in range."""
    if fact.document_id and fact.document_id != document_id:
        raise InvalidArgument(
            f"{field}.document_id is {fact.document_id[:80]!r}, not the request's document_id; "
            "send each document's facts in its own call"
        )
    check_text(fact.company, f"{field}.company", max_chars=MAX_COMPANY_CHARS)
    for name in ("table", "label", "scale_text", "title", "source"):
        check_text(getattr(fact, name), f"{field}.{name}", max_chars=MAX_LABEL_CHARS)
    check_text(fact.concept, f"{field}.concept", max_chars=MAX_CONCEPT_CHARS)
    for name in ("statement", "unit", "currency", "period_end"):
        check_text(getattr(fact, name), f"{field}.{name}", max_chars=MAX_FACT_TEXT_CHARS)
    check_int(fact.page, f"{field}.page", minimum=0, maximum=MAX_PAGE)
    check_int(fact.fiscal_year, f"{field}.fiscal_year", minimum=0, maximum=MAX_YEAR)
    check_int(fact.months, f"{field}.months", minimum=0, maximum=MAX_MONTHS)
    check_int(fact.quarter, f"{field}.quarter", minimum=0, maximum=MAX_QUARTER)
    if not math.isfinite(fact.value):
        raise InvalidArgument(f"{field}.value must be a finite number, got {fact.value}")
    if not (math.isfinite(fact.scale) and 0 < fact.scale <= MAX_FACT_SCALE):
        raise InvalidArgument(f"{field}.scale must be a positive number up to {MAX_FACT_SCALE:g}, got {fact.scale}")


def validate_upsert_facts(request: retriever_pb2.UpsertFactsRequest) -> None:
    check_text(request.document_id, "document_id", max_chars=MAX_ID_CHARS, required=True)
    check_count(request.facts, "facts", maximum=MAX_FACTS_PER_DOCUMENT)
    for i, fact in enumerate(request.facts):
        check_fact(fact, f"facts[{i}]", request.document_id)


def validate_lookup_facts(request: retriever_pb2.LookupFactsRequest) -> None:
    check_text(request.company, "company", max_chars=MAX_COMPANY_CHARS)
    check_text(request.document_id, "document_id", max_chars=MAX_ID_CHARS)
    check_count(request.concepts, "concepts", maximum=MAX_LOOKUP_CONCEPTS)
    for i, concept in enumerate(request.concepts):
        check_text(concept, f"concepts[{i}]", max_chars=MAX_CONCEPT_CHARS, required=True)
    check_count(request.fiscal_years, "fiscal_years", maximum=MAX_LOOKUP_YEARS)
    for i, year in enumerate(request.fiscal_years):
        check_int(year, f"fiscal_years[{i}]", minimum=1, maximum=MAX_YEAR)
    pairs = max(len(set(request.concepts)), 1) * max(len(set(request.fiscal_years)), 1)
    if pairs > MAX_LOOKUP_PAIRS:
        raise InvalidArgument(
            f"{len(request.concepts)} concepts times {len(request.fiscal_years)} fiscal years is {pairs} lookups; "
            f"at most {MAX_LOOKUP_PAIRS} per call"
        )
    check_int(request.limit, "limit", minimum=0, maximum=MAX_LOOKUP_LIMIT)
