"""A document's provenance (how and when it came in) as chunk payload fields, and back.

Stored on every chunk of the document, so any chunk describes it and deleting the chunks deletes it.
Times are RFC 3339 strings, the form a Qdrant datetime index reads, should range filters move into
the store one day.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime

from google.protobuf import timestamp_pb2
from weaverbird.v1 import retriever_pb2

# Payload keys; "origin" (local / web) is the older, coarser field every chunk has.
ORIGIN_KEY = "document_origin"
ADDED_AT_KEY = "added_at"
QUESTION_KEY = "question"
BEST_SCORE_KEY = "best_score"
FOUND_AT_KEY = "found_at"

ORIGIN_NAMES = {
    retriever_pb2.DOCUMENT_ORIGIN_LOCAL: "local",
    retriever_pb2.DOCUMENT_ORIGIN_WEB: "web",
    retriever_pb2.DOCUMENT_ORIGIN_USER: "user",
}
ORIGIN_VALUES = {name: value for value, name in ORIGIN_NAMES.items()}


def _rfc3339(stamp: timestamp_pb2.Timestamp) -> str:
    return stamp.ToDatetime(tzinfo=UTC).isoformat()


def parse_time(value: object) -> datetime | None:
    """A stored time, or None when absent or unreadable (a payload written by hand)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def to_payload(provenance: retriever_pb2.DocumentProvenance) -> dict[str, str | float]:
    """The payload fields of a provenance; unset parts are left out rather than stored empty."""
    out: dict[str, str | float] = {}
    if provenance.origin in ORIGIN_NAMES:
        out[ORIGIN_KEY] = ORIGIN_NAMES[provenance.origin]
    if provenance.HasField("added_at"):
        out[ADDED_AT_KEY] = _rfc3339(provenance.added_at)
    if provenance.question:
        out[QUESTION_KEY] = provenance.question
    if provenance.HasField("best_score"):
        out[BEST_SCORE_KEY] = float(provenance.best_score)
    if provenance.HasField("found_at"):
        out[FOUND_AT_KEY] = _rfc3339(provenance.found_at)
    return out


def origin_of(payload: Mapping[str, object]) -> int:
    """The DocumentOrigin of a stored chunk; chunks from before provenance have only local / web."""
    name = payload.get(ORIGIN_KEY)
    if isinstance(name, str) and name in ORIGIN_VALUES:
        return ORIGIN_VALUES[name]
    return retriever_pb2.DOCUMENT_ORIGIN_WEB if payload.get("origin") == "web" else retriever_pb2.DOCUMENT_ORIGIN_LOCAL


def from_payload(payload: Mapping[str, object]) -> retriever_pb2.DocumentProvenance:
    provenance = retriever_pb2.DocumentProvenance(origin=origin_of(payload))  # type: ignore[arg-type]
    for key, field in ((ADDED_AT_KEY, provenance.added_at), (FOUND_AT_KEY, provenance.found_at)):
        when = parse_time(payload.get(key))
        if when is not None:
            field.FromDatetime(when)
    question = payload.get(QUESTION_KEY)
    if isinstance(question, str):
        provenance.question = question
    score = payload.get(BEST_SCORE_KEY)
    if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
        provenance.best_score = float(score)
    return provenance
