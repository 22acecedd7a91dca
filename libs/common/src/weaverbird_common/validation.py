"""Checks of request fields at a service's gRPC edge, shared by every service.

Each check raises `InvalidArgument` (INVALID_ARGUMENT) with a message that names the field and the
rule, so a caller can fix the request without reading server logs. Services call these from small
per-service `validation.py` modules before any work starts; deeper layers may check again, but a
malformed request must never get further than the edge and fail there as INTERNAL.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Collection, Iterable, Mapping, Sized
from urllib.parse import urlsplit

from weaverbird.v1 import common_pb2

from weaverbird_common.errors import InvalidArgument

# Limits of the shared fields. Generous for real documents (an HTML <title> or a heading is one line of
# unbounded length), small enough that one request cannot make a store keep megabytes of labels.
MAX_ID_CHARS = 1024
MAX_LABEL_CHARS = 16_384  # title, heading, source
MAX_COMPANY_CHARS = 1000
MAX_LANGUAGE_CHARS = 16
MAX_DOC_TYPE_CHARS = 64
MAX_DATE_CHARS = 64
MAX_URL_CHARS = 4096
MAX_YEAR = 9999
MAX_QUARTER = 4
# Largest vector dimension a collection may be created with (Qdrant's own limit is 65,536).
MAX_VECTOR_DIMENSION = 8192
# Components of unit-length vectors are within [-1, 1]; this leaves room for unnormalised input while
# keeping sums of squares finite in float32, where the store normalises them.
MAX_VECTOR_COMPONENT = 1e6

_ORIGINS = {common_pb2.ORIGIN_LOCAL: "ORIGIN_LOCAL", common_pb2.ORIGIN_WEB: "ORIGIN_WEB"}
HTTP_SCHEMES = ("http", "https")


def require(condition: bool, message: str) -> None:
    """Raises InvalidArgument(message) unless `condition` holds."""
    if not condition:
        raise InvalidArgument(message)


def check_count(items: Sized, field: str, *, minimum: int = 0, maximum: int) -> None:
    """`items` has between `minimum` and `maximum` elements."""
    n = len(items)
    if n < minimum:
        raise InvalidArgument(f"{field} must not be empty" if minimum == 1 else f"{field} needs at least {minimum}")
    if n > maximum:
        raise InvalidArgument(f"{field} has {n} entries; at most {maximum} are accepted")


def check_int(value: int, field: str, *, minimum: int, maximum: int) -> None:
    """`value` is an integer in [minimum, maximum]."""
    if not minimum <= value <= maximum:
        raise InvalidArgument(f"{field} must be between {minimum} and {maximum}, got {value}")


def check_number(value: float, field: str, *, minimum: float, maximum: float) -> None:
    """`value` is a finite number in [minimum, maximum] (NaN and infinities are refused)."""
    if not math.isfinite(value):
        raise InvalidArgument(f"{field} must be a finite number, got {value}")
    if not minimum <= value <= maximum:
        raise InvalidArgument(f"{field} must be between {minimum:g} and {maximum:g}, got {value:g}")


def check_text(value: str, field: str, *, max_chars: int, required: bool = False) -> None:
    """`value` has at most `max_chars` characters and is not blank when `required`."""
    if required and not value.strip():
        raise InvalidArgument(f"{field} must not be empty")
    if len(value) > max_chars:
        raise InvalidArgument(f"{field} has {len(value)} characters; the limit is {max_chars}")


def check_texts(values: Iterable[str], field: str, *, max_chars: int) -> None:
    """Every element of a repeated string field passes `check_text`."""
    for i, value in enumerate(values):
        check_text(value, f"{field}[{i}]", max_chars=max_chars)


def check_enum(value: int, field: str, allowed: Mapping[int, str]) -> None:
    """`value` is one of the enum numbers in `allowed` (number -> name, for the message)."""
    if value not in allowed:
        names = " or ".join(allowed.values())
        raise InvalidArgument(f"{field} must be {names}, got {value}")


def check_choice(value: str, field: str, allowed: Collection[str]) -> None:
    """`value` is one of the strings in `allowed`."""
    if value not in allowed:
        raise InvalidArgument(f"{field} must be one of {', '.join(repr(a) for a in allowed)}, got {value[:40]!r}")


def check_uuid(value: str, field: str) -> None:
    """`value` is a UUID string (any spelling `uuid.UUID` accepts)."""
    try:
        if len(value) > 64:
            raise ValueError("too long")
        uuid.UUID(value)
    except ValueError:
        raise InvalidArgument(f"{field} is not a UUID string: {value[:64]!r}") from None


def check_vector(values: Collection[float], field: str, *, max_dimension: int = MAX_VECTOR_DIMENSION) -> None:
    """A dense vector: 1..max_dimension finite components within ±MAX_VECTOR_COMPONENT, not all zero.

    A zero vector has no direction, so its cosine to anything is undefined.
    """
    if not values:
        raise InvalidArgument(f"{field} must not be empty")
    if len(values) > max_dimension:
        raise InvalidArgument(f"{field} has dimension {len(values)}; at most {max_dimension} is accepted")
    nonzero = False
    for i, x in enumerate(values):
        if not math.isfinite(x):
            raise InvalidArgument(f"{field}[{i}] is {x}; vectors must be finite (no NaN or infinity)")
        if abs(x) > MAX_VECTOR_COMPONENT:
            raise InvalidArgument(f"{field}[{i}] is {x:g}; components must be within ±{MAX_VECTOR_COMPONENT:g}")
        nonzero = nonzero or x != 0.0
    if not nonzero:
        raise InvalidArgument(f"{field} is all zeros; a vector needs a direction")


def check_http_url(url: str, field: str = "url") -> None:
    """The form of a URL to fetch: absolute http(s) with a host, within MAX_URL_CHARS.

    Only the form: whether its address may be fetched is `weaverbird_common.web.ssrf.UrlGuard`'s call.
    """
    check_text(url, field, max_chars=MAX_URL_CHARS, required=True)
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        raise InvalidArgument(f"{field} is not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in HTTP_SCHEMES:
        shown = f"{scheme!r}" if scheme else "(none)"
        raise InvalidArgument(f"{field} scheme {shown} is not allowed; only http and https URLs can be added")
    if not host:
        raise InvalidArgument(f"{field} has no host")


def check_payload_filter(flt: common_pb2.PayloadFilter, field: str = "filter") -> None:
    """Every set field of a PayloadFilter is a value some chunk could hold."""
    if flt.HasField("document_id"):
        check_text(flt.document_id, f"{field}.document_id", max_chars=MAX_ID_CHARS)
    if flt.HasField("company"):
        check_text(flt.company, f"{field}.company", max_chars=MAX_COMPANY_CHARS)
    if flt.HasField("year"):
        check_int(flt.year, f"{field}.year", minimum=0, maximum=MAX_YEAR)
    if flt.HasField("quarter"):
        check_int(flt.quarter, f"{field}.quarter", minimum=0, maximum=MAX_QUARTER)
    if flt.HasField("origin"):
        check_enum(flt.origin, f"{field}.origin", _ORIGINS)
    if flt.HasField("language"):
        check_text(flt.language, f"{field}.language", max_chars=MAX_LANGUAGE_CHARS)
    if flt.HasField("doc_type"):
        check_text(flt.doc_type, f"{field}.doc_type", max_chars=MAX_DOC_TYPE_CHARS)
