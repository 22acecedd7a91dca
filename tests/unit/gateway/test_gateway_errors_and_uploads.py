"""The gateway's plain modules: gRPC status -> HTTP status table, and what uploads it accepts."""

from __future__ import annotations

import grpc
import pytest
from weaverbird_gateway import uploads
from weaverbird_gateway.errors import GatewayError, from_rpc_error


def rpc_error(code: grpc.StatusCode, details: str, trailing: tuple[tuple[str, str], ...] = ()) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details=details)


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (grpc.StatusCode.INVALID_ARGUMENT, 400),
        (grpc.StatusCode.UNAUTHENTICATED, 401),
        (grpc.StatusCode.PERMISSION_DENIED, 403),
        (grpc.StatusCode.NOT_FOUND, 404),
        (grpc.StatusCode.FAILED_PRECONDITION, 409),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
        (grpc.StatusCode.UNIMPLEMENTED, 501),
        (grpc.StatusCode.INTERNAL, 502),
        (grpc.StatusCode.UNKNOWN, 502),
        (grpc.StatusCode.UNAVAILABLE, 503),
        (grpc.StatusCode.DEADLINE_EXCEEDED, 504),
    ],
)
def test_each_grpc_code_has_its_http_status_and_keeps_the_services_message(code: grpc.StatusCode, status: int) -> None:
    error = from_rpc_error(rpc_error(code, "generator: the model is warming up"), "orchestrator")
    assert error.status == status
    assert error.message == "generator: the model is warming up"
    assert error.body() == {"detail": error.message, "code": code.name, "status": status}


def test_429_carries_the_services_retry_after_or_the_default() -> None:
    hinted = from_rpc_error(
        rpc_error(grpc.StatusCode.RESOURCE_EXHAUSTED, "queue full", (("retry-after", "7"),)), "orchestrator"
    )
    assert hinted.headers == {"Retry-After": "7"}
    plain = from_rpc_error(rpc_error(grpc.StatusCode.RESOURCE_EXHAUSTED, "queue full"), "ingester", retry_after_s=3)
    assert plain.headers == {"Retry-After": "3"}
    assert from_rpc_error(rpc_error(grpc.StatusCode.NOT_FOUND, "no such document"), "x").headers == {}


def test_transport_failures_get_a_plain_message_not_grpc_internals() -> None:
    text = "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Connection refused"
    error = from_rpc_error(rpc_error(grpc.StatusCode.UNAVAILABLE, text), "orchestrator")
    assert (error.status, error.message) == (503, "the orchestrator is unavailable; try again shortly")
    own = from_rpc_error(rpc_error(grpc.StatusCode.UNAVAILABLE, "generator is unavailable: loading"), "orchestrator")
    assert own.message == "generator is unavailable: loading"  # a service's own words are kept
    late = from_rpc_error(rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"), "ingester")
    assert (late.status, late.message) == (504, "the ingester did not answer in time")


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("10-K.pdf", "application/pdf"),
        ("note.MD", "text/markdown"),
        ("note.md", ""),
        ("page.htm", "text/html; charset=gbk"),
        ("summary.txt", "application/octet-stream"),
        ("C:\\reports\\annual.pdf", None),
    ],
)
def test_the_ingesters_file_types_are_accepted(name: str, content_type: str | None) -> None:
    uploads.accept_file(name, content_type)


@pytest.mark.parametrize(
    ("name", "content_type", "message"),
    [
        ("setup.exe", "application/octet-stream", "unsupported file type '.exe'"),
        ("report.docx", "application/vnd.openxmlformats", "unsupported file type '.docx'"),
        ("README", "text/plain", "(no extension)"),
        ("report.pdf", "text/html", "does not match a .pdf file"),
        ("note.txt", "image/png", "does not match a .txt file"),
    ],
)
def test_other_files_get_415(name: str, content_type: str, message: str) -> None:
    with pytest.raises(GatewayError) as caught:
        uploads.accept_file(name, content_type)
    assert caught.value.status == 415 and message in caught.value.message


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    limit = 1024 * 1024
    uploads.check_declared_length(str(limit), limit)
    uploads.check_declared_length(None, limit)
    with pytest.raises(GatewayError) as caught:
        uploads.check_declared_length(str(limit + uploads.MULTIPART_OVERHEAD + 1), limit)
    assert caught.value.status == 413 and "1 MiB" in caught.value.message


async def test_a_body_without_length_is_cut_off_once_past_the_limit() -> None:
    chunks = [{"type": "http.request", "body": b"x" * 40_000, "more_body": True} for _ in range(3)]

    async def receive() -> dict[str, object]:
        return chunks.pop(0)

    capped = uploads.capped_receive(receive, 50_000)
    assert len((await capped())["body"]) == 40_000
    assert len((await capped())["body"]) == 40_000  # 80,000: within limit + multipart overhead
    with pytest.raises(GatewayError) as caught:
        await capped()
    assert caught.value.status == 413
