"""Ingest message schema: round trips, defaults, and the validation error behind each dead-letter reason."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

import pytest
from pydantic import SecretStr, ValidationError
from weaverbird_common.ingest_messages import (
    DeadLetter,
    IngestMessage,
    IngestMessageError,
    decode_dead_letter,
    decode_ingest_message,
    encode_dead_letter,
    encode_ingest_message,
    sha256_text,
)
from weaverbird_common.kafka_config import KafkaSettings


def _valid(**overrides: object) -> dict[str, object]:
    data: dict[str, object] = {
        "schema_version": 1,
        "message_id": "6f1c1f3e-8a55-4a53-9a3c-1f1f0c0ffee0",
        "url": "https://example.com/news/1",
        "title": "Q3 results",
        "text": "营收增长 12%. Revenue grew 12%.",
        "best_score": 0.73,
        "question": "How much did revenue grow?",
        "found_at": "2025-03-01T08:30:00Z",
        "origin": "web",
        "language": "zh",
        "published": "2025-02-28",
        "company": "AURORA_TIDAL_POWER",
    }
    data.update(overrides)
    return data


def _decode_error(raw: bytes, **kwargs: int) -> IngestMessageError:
    with pytest.raises(IngestMessageError) as info:
        decode_ingest_message(raw, **kwargs)
    return info.value


def test_round_trip_keeps_every_field() -> None:
    message = IngestMessage.model_validate(_valid())
    decoded = decode_ingest_message(encode_ingest_message(message))
    assert decoded == message
    assert decoded.message_id == UUID("6f1c1f3e-8a55-4a53-9a3c-1f1f0c0ffee0")
    assert decoded.content_sha256 == sha256_text("营收增长 12%. Revenue grew 12%.")
    assert decoded.company == "AURORA_TIDAL_POWER"


def test_defaults_id_time_and_hash() -> None:
    message = IngestMessage(url="https://example.com/a", text="hello")
    assert message.schema_version == 1 and message.origin == "web"
    assert message.found_at.tzinfo is not None and message.found_at.utcoffset() == timedelta(0)
    assert message.content_sha256 == sha256_text("hello")
    wire = json.loads(encode_ingest_message(message))
    assert wire["found_at"].endswith("Z")
    assert UUID(wire["message_id"]) == message.message_id
    assert IngestMessage(url="https://example.com/a").message_id != message.message_id


def test_url_only_message_has_no_hash() -> None:
    message = decode_ingest_message(json.dumps(_valid(text="")).encode())
    assert message.text == "" and message.content_sha256 is None


def test_found_at_is_normalised_to_utc() -> None:
    shanghai = datetime(2025, 3, 1, 16, 30, tzinfo=timezone(timedelta(hours=8)))
    message = IngestMessage(url="https://example.com/a", found_at=shanghai)
    assert message.found_at == datetime(2025, 3, 1, 8, 30, tzinfo=UTC)
    assert message.found_at.utcoffset() == timedelta(0)


def test_unknown_fields_are_ignored_for_forward_compatibility() -> None:
    message = decode_ingest_message(json.dumps(_valid(added_in_v1_1="x")).encode())
    assert not hasattr(message, "added_in_v1_1")


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"{not json", "bad_json"),
        (b"\xff\xfe\x00garbage", "bad_json"),
        (b"[1, 2]", "bad_json"),
        (b'"a string"', "bad_json"),
        (json.dumps(_valid(schema_version=2)).encode(), "unsupported_version"),
        (json.dumps(_valid(schema_version="1")).encode(), "unsupported_version"),
        (json.dumps(_valid(schema_version=True)).encode(), "unsupported_version"),
        (json.dumps({k: v for k, v in _valid().items() if k != "schema_version"}).encode(), "unsupported_version"),
    ],
)
def test_undecodable_records(raw: bytes, reason: str) -> None:
    assert _decode_error(raw).reason == reason


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"url": None}, "url"),
        ({"url": "notaurl"}, "url"),
        ({"url": "ftp://example.com/a"}, "url"),
        ({"url": "https:///nohost"}, "url"),
        ({"found_at": "2025-03-01T08:30:00"}, "found_at"),  # naive: whose 08:30?
        ({"origin": "crawler"}, "origin"),
        ({"best_score": "high"}, "best_score"),
        ({"message_id": "not-a-uuid"}, "message_id"),
        ({"content_sha256": "abc"}, "content_sha256"),
        ({"content_sha256": "0" * 64}, "content_sha256 does not match"),
        ({"title": "t" * 1001}, "title"),
    ],
)
def test_schema_errors_name_the_field(overrides: dict[str, object], field: str) -> None:
    data = _valid(**overrides)
    data = {k: v for k, v in data.items() if v is not None}
    error = _decode_error(json.dumps(data).encode())
    assert error.reason == "invalid_schema"
    assert field in error.detail


def test_non_finite_score_is_rejected() -> None:
    with pytest.raises(ValidationError):
        IngestMessage(url="https://example.com/a", best_score=float("nan"))


def test_oversized_is_checked_before_parsing() -> None:
    raw = encode_ingest_message(IngestMessage(url="https://example.com/a", text="x" * 5000))
    assert decode_ingest_message(raw, max_bytes=len(raw)).text == "x" * 5000
    assert _decode_error(raw, max_bytes=len(raw) - 1).reason == "oversized"
    assert _decode_error(b"{" * 2000, max_bytes=1000).reason == "oversized"  # not bad_json
    with pytest.raises(IngestMessageError) as info:
        encode_ingest_message(IngestMessage(url="https://example.com/a", text="x" * 5000), max_bytes=1000)
    assert info.value.reason == "oversized"


def test_dead_letter_round_trip_keeps_text_originals_readable() -> None:
    message = IngestMessage.model_validate(_valid())
    raw = encode_ingest_message(message)
    letter = DeadLetter.from_record(
        raw,
        reason="unreadable",
        error=ValueError("no extractable text"),
        source_topic="weaverbird.ingest.v1",
        source_partition=2,
        source_offset=41,
        attempts=1,
        message=message,
    )
    decoded = decode_dead_letter(encode_dead_letter(letter))
    assert decoded == letter
    assert decoded.original_encoding == "utf-8" and decoded.original_bytes() == raw
    assert (decoded.error_class, decoded.error) == ("ValueError", "no extractable text")
    assert decoded.url == message.url and decoded.message_id == str(message.message_id)
    assert decoded.failed_at.utcoffset() == timedelta(0)


def test_dead_letter_keeps_binary_originals_as_base64() -> None:
    raw = b"\x00\xff\xfe binary \x80"
    letter = DeadLetter.from_record(
        raw, reason="bad_json", error="not JSON", source_topic="t", source_partition=0, source_offset=0
    )
    assert letter.original_encoding == "base64"
    assert base64.b64decode(letter.original) == raw
    assert decode_dead_letter(encode_dead_letter(letter)).original_bytes() == raw


def test_dead_letter_truncates_large_originals_without_splitting_characters() -> None:
    raw = ("价" * 100).encode()  # 3 bytes per character
    letter = DeadLetter.from_record(
        raw,
        reason="oversized",
        error="too big",
        source_topic="t",
        source_partition=0,
        source_offset=7,
        max_original_bytes=100,
    )
    assert letter.original_truncated and letter.original_size == 300
    assert letter.original_encoding == "utf-8" and letter.original == "价" * 33
    assert raw.startswith(letter.original_bytes())


def test_dead_letter_with_corrupt_base64_is_a_schema_error() -> None:
    letter = DeadLetter.from_record(
        b"\xff", reason="bad_json", error="x", source_topic="t", source_partition=0, source_offset=0
    )
    data = json.loads(encode_dead_letter(letter))
    data["original"] = "!!!"
    with pytest.raises(IngestMessageError) as info:
        decode_dead_letter(json.dumps(data).encode())
    assert info.value.reason == "invalid_schema"


# KafkaSettings is the other half of the ingest contract and small enough to check here.


def test_kafka_kwargs_for_kafka_python() -> None:
    settings = KafkaSettings(
        bootstrap_servers=" b1:9092, b2:9092 ",
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="ingester",
        sasl_password=SecretStr("s3cret"),
        ssl_cafile="/etc/kafka/ca.pem",
        max_message_bytes=2 * 1024 * 1024,
    )
    producer = settings.producer_kwargs()
    consumer = settings.consumer_kwargs()
    assert producer["bootstrap_servers"] == ["b1:9092", "b2:9092"]
    assert producer["sasl_plain_password"] == "s3cret" and producer["ssl_cafile"] == "/etc/kafka/ca.pem"
    assert producer["max_request_size"] > settings.max_message_bytes
    assert consumer["enable_auto_commit"] is False and consumer["group_id"] == "weaverbird-ingester"
    assert consumer["max_partition_fetch_bytes"] > settings.max_message_bytes
    assert "s3cret" not in repr(settings)


@pytest.mark.parametrize(
    "overrides",
    [
        {"bootstrap_servers": " , "},
        {"security_protocol": "SASL_PLAINTEXT"},  # no credentials
        {"sasl_username": "u"},  # credentials without SASL
        {"dead_letter_topic": "weaverbird.ingest.v1"},
        {"heartbeat_interval_ms": 20_000, "session_timeout_ms": 30_000},
    ],
)
def test_kafka_settings_reject_inconsistent_values(overrides: dict[str, object]) -> None:
    values: dict[str, object] = {"bootstrap_servers": "localhost:9092", **overrides}
    with pytest.raises(ValidationError):
        KafkaSettings.model_validate(values)
