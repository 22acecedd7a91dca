"""The status table in both directions and the server interceptor's behaviour."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc
from weaverbird_common import errors
from weaverbird_common.server import ServiceBinding, start_server

TABLE = [
    (errors.InvalidArgument, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.NotFound, grpc.StatusCode.NOT_FOUND),
    (errors.FailedPrecondition, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.Unavailable, grpc.StatusCode.UNAVAILABLE),
    (errors.DeadlineExceeded, grpc.StatusCode.DEADLINE_EXCEEDED),
    (errors.Overloaded, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.Unimplemented, grpc.StatusCode.UNIMPLEMENTED),
]


@pytest.mark.parametrize(("cls", "code"), TABLE)
def test_status_round_trip(cls: type[errors.WeaverbirdError], code: grpc.StatusCode) -> None:
    assert cls.code == code
    back = errors.error_from_status(code, "details", "peer")
    assert isinstance(back, cls)
    assert "peer" in str(back)


class _Failing(embedder_pb2_grpc.EmbedderServiceServicer):
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def Embed(self, request, context):
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "code", "fragment"),
    [
        (errors.InvalidArgument("question must not be empty"), grpc.StatusCode.INVALID_ARGUMENT, "must not be empty"),
        (errors.Unavailable("retriever is unavailable"), grpc.StatusCode.UNAVAILABLE, "retriever"),
        (KeyError("secret internals"), grpc.StatusCode.INTERNAL, "incident"),
    ],
)
async def test_interceptor_maps_errors_and_hides_internals(
    exc: Exception, code: grpc.StatusCode, fragment: str
) -> None:
    binding = ServiceBinding(
        embedder_pb2_grpc.add_EmbedderServiceServicer_to_server,
        _Failing(exc),
        embedder_pb2.DESCRIPTOR.services_by_name["EmbedderService"].full_name,
    )
    running = await start_server([binding])
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            status = await health.Check(health_pb2.HealthCheckRequest(service=binding.full_name))
            assert status.status == health_pb2.HealthCheckResponse.SERVING
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await embedder_pb2_grpc.EmbedderServiceStub(channel).Embed(embedder_pb2.EmbedRequest())
        assert info.value.code() == code
        assert fragment in info.value.details()
        assert "Traceback" not in info.value.details() and "secret internals" not in info.value.details()
    finally:
        await running.stop(0)


RAW_CASES = [b"\xff\xff\xff\xff", b"\x0a\x02\xff\xfe", b"\x12\x05abc"]  # corrupt wire, bad UTF-8, truncated


def _identity(raw: bytes) -> bytes:
    return raw


@pytest.mark.parametrize("raw", RAW_CASES)
async def test_undecodable_requests_get_invalid_argument_without_internal_names(raw: bytes) -> None:
    binding = ServiceBinding(
        embedder_pb2_grpc.add_EmbedderServiceServicer_to_server,
        _Failing(AssertionError("the servicer must not see undecodable bytes")),
        embedder_pb2.DESCRIPTOR.services_by_name["EmbedderService"].full_name,
    )
    running = await start_server([binding])
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            methods = {
                "/weaverbird.v1.EmbedderService/Embed": False,
                "/grpc.health.v1.Health/Check": False,
                "/grpc.health.v1.Health/Watch": True,  # server streaming
            }
            for method, streams in methods.items():
                kind = channel.unary_stream if streams else channel.unary_unary
                call = kind(method, request_serializer=_identity, response_deserializer=_identity)
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    result = call(raw, timeout=5)
                    if streams:
                        [_ async for _ in result]
                    else:
                        await result
                assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, method
                details = info.value.details()
                assert details.startswith("request is not a valid "), details
                assert "<class" not in details and "DecodeError" not in details and "google." not in details
            reflection = channel.stream_stream(
                "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                request_serializer=_identity,
                response_deserializer=_identity,
            )
            with pytest.raises(grpc.aio.AioRpcError) as info:
                [_ async for _ in reflection(iter([raw]), timeout=5)]
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            # The server still answers well-formed calls, streaming ones included.
            health = health_pb2_grpc.HealthStub(channel)
            watch = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=5)
            first = await watch.read()
            assert first.status == health_pb2.HealthCheckResponse.SERVING
            watch.cancel()
    finally:
        await running.stop(0)


def test_plain_message_drops_library_class_names() -> None:
    assert errors.plain_message("corrupt PDF: PdfReadError: startxref not found") == "corrupt PDF: startxref not found"
    assert errors.plain_message("ValueError") == "unreadable input"
    assert errors.plain_message("no extractable text") == "no extractable text"
