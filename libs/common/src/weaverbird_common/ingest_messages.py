"""Versioned JSON messages on the ingest topic (web documents to add) and its dead-letter topic.

The orchestrator publishes an `IngestMessage` for every web page that had a passage scoring at least
c; the ingester consumes them. A message the ingester cannot use is republished as a `DeadLetter`
carrying the original bytes, so nothing is silently dropped and a fixed consumer can replay it.

Compatibility rules, the same as for the v1 protos: fields are only ever added within version 1 and
unknown fields are ignored on decode, so a newer producer never breaks an older consumer. A breaking
change bumps `schema_version` (and the topic suffix); consumers dead-letter versions they do not know.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit
from uuid import UUID, uuid4

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

SCHEMA_VERSION = 1

# Kafka's default message.max.bytes is about 1 MB; callers pass their configured limit.
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024

# Original bytes kept in a dead letter: enough to diagnose and replay a normal message, while an
# oversized one (the reason it failed) cannot make the dead letter oversized too.
DEFAULT_MAX_ORIGINAL_BYTES = 256 * 1024

DeadLetterReason = Literal[
    "bad_json",  # not UTF-8 JSON, or not a JSON object
    "unsupported_version",  # schema_version missing or not one this consumer knows
    "invalid_schema",  # a field is missing or invalid
    "oversized",  # the record or the fetched document is larger than allowed
    "fetch_failed",  # URL-only message whose page could not be fetched after retries
    "unreadable",  # no text could be extracted (weaverbird_common.docs.loaders.UnreadableDocument)
    "write_failed",  # chunking/embedding/storing failed for a reason retrying did not fix
    "unauthenticated",  # not signed with the producers' key (KafkaSettings.signing_key)
]

Origin = Literal["web", "user"]


class IngestMessageError(ValueError):
    """A record is not a usable ingest message; `reason` is the dead-letter reason to report."""

    def __init__(self, reason: DeadLetterReason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: DeadLetterReason = reason
        self.detail = detail


def sha256_text(text: str) -> str:
    """Hex SHA-256 of `text` as UTF-8: the `content_sha256` of a message carrying `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Record header carrying hex HMAC-SHA256(signing key, record value). The local broker (Tansu) cannot
# require authentication with in-memory storage, so anyone on the machine can produce to it; the
# ingester trusts a record only when a producer holding the stack's key signed it.
SIGNATURE_HEADER = "weaverbird-signature"


def record_signature(key: str, value: bytes) -> bytes:
    """The SIGNATURE_HEADER value for a record `value` under `key`."""
    return hmac.new(key.encode("utf-8"), value, hashlib.sha256).hexdigest().encode("ascii")


def check_record_signature(key: str, value: bytes, headers: Sequence[tuple[str, bytes | None]] | None) -> None:
    """Raises IngestMessageError("unauthenticated") unless `headers` (Kafka's [(name, bytes)]) carry
    a valid signature of `value`; compared in constant time."""
    given = [v for k, v in (headers or []) if k == SIGNATURE_HEADER]
    if len(given) != 1 or not isinstance(given[0], bytes):
        raise IngestMessageError("unauthenticated", "the record is not signed by a trusted producer")
    if not hmac.compare_digest(given[0], record_signature(key, value)):
        raise IngestMessageError("unauthenticated", "the record's signature does not match")


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


class IngestMessage(BaseModel):
    """One web document for the ingester (schema version 1).

    `text` is the extracted page text; when it is empty the ingester fetches `url` itself.
    `content_sha256` is filled in from `text` when omitted and checked against it when given, so a
    message corrupted on the way is rejected rather than stored.
    """

    # Unknown fields are ignored so producers can add optional fields within version 1.
    model_config = ConfigDict(extra="ignore")

    schema_version: Literal[1] = Field(SCHEMA_VERSION, description="Message schema version; always 1 here.")
    message_id: UUID = Field(default_factory=uuid4, description="Unique id of this message (not of the page).")
    url: str = Field(max_length=4096, description="http(s) URL of the page; identifies the document.")
    title: str = Field("", max_length=1000, description="Page title; empty lets the loader find one.")
    text: str = Field("", description="Extracted text; empty means the ingester fetches the URL.")
    best_score: float | None = Field(None, description="Best passage score that qualified the page (>= c).")
    question: str | None = Field(None, max_length=10_000, description="Question whose search found the page.")
    found_at: AwareDatetime = Field(
        default_factory=lambda: datetime.now(UTC), description="When the page was found, ISO 8601 in UTC."
    )
    origin: Origin = Field("web", description="web: found by web search; user: submitted by a user.")
    language: str | None = Field(None, max_length=16, description="Language code of the text, if known.")
    published: str | None = Field(None, max_length=64, description="Publication date as found on the page.")
    content_sha256: str | None = Field(None, description="Hex SHA-256 of `text` as UTF-8.")
    company: str | None = Field(
        None,
        max_length=200,
        description="Company the page is about: set when the question that found it named a known company "
        "and the page names it too; stored as the chunks' company payload so company filters find it.",
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip()
        parts = urlsplit(value)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an absolute http(s) URL with a host")
        return value

    @field_validator("found_at")
    @classmethod
    def _found_at_utc(cls, value: datetime) -> datetime:
        return _utc(value)

    @field_validator("best_score")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        # JSON has no NaN/Infinity; Python's json would write them and break other consumers.
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("content_sha256")
    @classmethod
    def _hex_digest(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().lower()
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise ValueError("must be 64 hex digits")
        return value

    @model_validator(mode="after")
    def _hash_matches_text(self) -> IngestMessage:
        if self.text:
            actual = sha256_text(self.text)
            if self.content_sha256 is None:
                self.content_sha256 = actual
            elif self.content_sha256 != actual:
                raise ValueError("content_sha256 does not match text")
        return self


class DeadLetter(BaseModel):
    """A record the ingester gave up on, with why and where it came from (schema version 1).

    `original` is the record value as UTF-8 text when it is valid UTF-8, else base64
    (`original_encoding` says which), cut to at most DEFAULT_MAX_ORIGINAL_BYTES bytes.
    """

    model_config = ConfigDict(extra="ignore")

    schema_version: Literal[1] = SCHEMA_VERSION
    reason: DeadLetterReason
    error_class: str = Field(description="Exception class name, e.g. IngestMessageError or UnreadableDocument.")
    error: str = Field(description="Human-readable detail, truncated to 2000 characters.")
    failed_at: AwareDatetime = Field(default_factory=lambda: datetime.now(UTC))
    source_topic: str
    source_partition: int = Field(ge=0)
    source_offset: int = Field(ge=0)
    attempts: int = Field(1, ge=1, description="Processing attempts made before giving up.")
    message_id: str | None = Field(None, description="message_id of the original, when it could be decoded.")
    url: str | None = Field(None, description="url of the original, when it could be decoded.")
    original: str
    original_encoding: Literal["utf-8", "base64"]
    original_size: int = Field(ge=0, description="Size of the original value in bytes, before any cut.")
    original_truncated: bool = False

    @field_validator("failed_at")
    @classmethod
    def _failed_at_utc(cls, value: datetime) -> datetime:
        return _utc(value)

    @classmethod
    def from_record(
        cls,
        raw: bytes,
        *,
        reason: DeadLetterReason,
        error: BaseException | str,
        source_topic: str,
        source_partition: int,
        source_offset: int,
        attempts: int = 1,
        message: IngestMessage | None = None,
        max_original_bytes: int = DEFAULT_MAX_ORIGINAL_BYTES,
    ) -> DeadLetter:
        """Builds the dead letter of record `raw` (the Kafka value; may be undecodable)."""
        truncated = len(raw) > max_original_bytes
        original, encoding = _encode_original(raw[:max_original_bytes], truncated)
        return cls(
            reason=reason,
            error_class=type(error).__name__ if isinstance(error, BaseException) else "str",
            error=str(error)[:2000],
            source_topic=source_topic,
            source_partition=source_partition,
            source_offset=source_offset,
            attempts=attempts,
            message_id=str(message.message_id) if message else None,
            url=message.url if message else None,
            original=original,
            original_encoding=encoding,
            original_size=len(raw),
            original_truncated=truncated,
        )

    def original_bytes(self) -> bytes:
        """The kept original bytes (a prefix of the record when `original_truncated`)."""
        if self.original_encoding == "utf-8":
            return self.original.encode("utf-8")
        return base64.b64decode(self.original, validate=True)


def _encode_original(raw: bytes, truncated: bool) -> tuple[str, Literal["utf-8", "base64"]]:
    # Text is far easier to read when inspecting the dead-letter topic; base64 keeps anything else.
    # A cut may split a multi-byte character, so up to 3 trailing bytes of a cut value may be dropped.
    for trim in range(4 if truncated else 1):
        try:
            return raw[: len(raw) - trim].decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            continue
    return base64.b64encode(raw).decode("ascii"), "base64"


def _errors_summary(exc: ValidationError, limit: int = 5) -> str:
    parts = [f"{'.'.join(str(p) for p in err['loc']) or '(message)'}: {err['msg']}" for err in exc.errors()[:limit]]
    more = exc.error_count() - limit
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _load_object(raw: bytes, max_bytes: int) -> dict[str, object]:
    if len(raw) > max_bytes:
        raise IngestMessageError("oversized", f"{len(raw)} bytes exceeds the limit of {max_bytes}")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IngestMessageError("bad_json", str(exc)) from exc
    if not isinstance(data, dict):
        raise IngestMessageError("bad_json", f"expected a JSON object, got {type(data).__name__}")
    return data  # type: ignore[return-value]  # json.loads gives dict[str, Any]


def _check_version(data: dict[str, object]) -> None:
    version = data.get("schema_version")
    # bool is an int in Python; `true` is not version 1.
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise IngestMessageError("unsupported_version", f"schema_version {version!r}; this consumer reads 1")


def encode_ingest_message(message: IngestMessage, *, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> bytes:
    """The record value for `message`: compact UTF-8 JSON.

    Raises:
        IngestMessageError: reason "oversized" when the encoding exceeds `max_bytes` (default 1 MiB).
    """
    raw = message.model_dump_json().encode("utf-8")
    if len(raw) > max_bytes:
        raise IngestMessageError("oversized", f"{len(raw)} bytes exceeds the limit of {max_bytes}")
    return raw


def decode_ingest_message(raw: bytes, *, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> IngestMessage:
    """Parses and validates a record value.

    Raises:
        IngestMessageError: with reason "oversized" (checked first, before parsing), "bad_json",
            "unsupported_version" or "invalid_schema"; `detail` names the offending fields.
    """
    data = _load_object(raw, max_bytes)
    _check_version(data)
    try:
        return IngestMessage.model_validate(data)
    except ValidationError as exc:
        raise IngestMessageError("invalid_schema", _errors_summary(exc)) from exc


def encode_dead_letter(letter: DeadLetter) -> bytes:
    """The record value for `letter`: compact UTF-8 JSON."""
    return letter.model_dump_json().encode("utf-8")


def decode_dead_letter(raw: bytes) -> DeadLetter:
    """Parses a dead-letter record value (for replay tools and tests).

    Raises:
        IngestMessageError: as decode_ingest_message, without a size limit.
    """
    data = _load_object(raw, max_bytes=len(raw))
    _check_version(data)
    try:
        letter = DeadLetter.model_validate(data)
        letter.original_bytes()
    except ValidationError as exc:
        raise IngestMessageError("invalid_schema", _errors_summary(exc)) from exc
    except (binascii.Error, ValueError) as exc:
        raise IngestMessageError("invalid_schema", f"original: not valid base64: {exc}") from exc
    return letter
