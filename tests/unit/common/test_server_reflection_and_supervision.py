"""The common server: reflection answered under grpc.reflection.v1 and v1alpha by a real reflection
client, and supervised background tasks that turn health NOT_SERVING when they die."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import grpc
import pytest
from fixtures.health import NOT_SERVING, SERVING, health_statuses, until_not_serving
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc
from weaverbird_common.server import RunningServer, ServiceBinding, start_server

EMBEDDER = embedder_pb2.DESCRIPTOR.services_by_name["EmbedderService"].full_name
V1_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


@pytest.fixture
async def server() -> AsyncIterator[RunningServer]:
    binding = ServiceBinding(
        embedder_pb2_grpc.add_EmbedderServiceServicer_to_server, embedder_pb2_grpc.EmbedderServiceServicer(), EMBEDDER
    )
    running = await start_server([binding])
    yield running
    await running.stop(0)


# ---------------------------------------------------------------------------------------------
# Reflection v1
# ---------------------------------------------------------------------------------------------


class _V1Stub:
    """grpcio-reflection's client speaks v1alpha only; this points it at the v1 method instead.

    The v1 and v1alpha messages are the same on the wire (v1 is the v1alpha proto renamed), so the
    client's v1alpha classes encode v1 requests faithfully.
    """

    def __init__(self, channel: grpc.Channel) -> None:
        self.ServerReflectionInfo = channel.stream_stream(
            V1_METHOD,
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )


class V1ReflectionDatabase(ProtoReflectionDescriptorDatabase):
    def __init__(self, channel: grpc.Channel) -> None:
        super().__init__(channel)
        self._stub = _V1Stub(channel)


@pytest.fixture
def sync_channel(server: RunningServer) -> Iterator[grpc.Channel]:
    # grpcio-reflection's client is synchronous: it runs in a thread while this loop serves.
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield channel


async def test_a_reflection_client_resolves_services_over_v1(sync_channel: grpc.Channel) -> None:
    database = V1ReflectionDatabase(sync_channel)
    services = await asyncio.to_thread(database.get_services)
    assert set(services) >= {
        EMBEDDER,
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    }

    pool = descriptor_pool.DescriptorPool(database)
    embed = (await asyncio.to_thread(pool.FindServiceByName, EMBEDDER)).methods_by_name["Embed"]
    assert embed.input_type.full_name == "weaverbird.v1.EmbedRequest"
    assert "texts" in embed.input_type.fields_by_name

    # Reflection describes itself under v1 as the published grpc/reflection/v1/reflection.proto does.
    reflection = await asyncio.to_thread(pool.FindServiceByName, "grpc.reflection.v1.ServerReflection")
    assert reflection.file.name == "grpc/reflection/v1/reflection.proto"
    info = reflection.methods_by_name["ServerReflectionInfo"]
    assert info.input_type.full_name == "grpc.reflection.v1.ServerReflectionRequest"
    assert info.output_type.full_name == "grpc.reflection.v1.ServerReflectionResponse"
    assert info.client_streaming and info.server_streaming


async def test_v1_round_trip_with_the_v1_types_the_server_describes(sync_channel: grpc.Channel) -> None:
    # Bootstrap: fetch the v1 message types over v1 reflection, then speak v1 with exactly those types.
    pool = descriptor_pool.DescriptorPool(V1ReflectionDatabase(sync_channel))
    request_type = await asyncio.to_thread(pool.FindMessageTypeByName, "grpc.reflection.v1.ServerReflectionRequest")
    response_type = pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionResponse")
    request_cls = message_factory.GetMessageClass(request_type)
    response_cls = message_factory.GetMessageClass(response_type)
    call: Callable[..., Any] = sync_channel.stream_stream(
        V1_METHOD, request_serializer=request_cls.SerializeToString, response_deserializer=response_cls.FromString
    )

    def ask() -> list[Any]:
        requests = [request_cls(file_containing_symbol=EMBEDDER), request_cls(file_containing_symbol="no.such.Thing")]
        return list(call(iter(requests), timeout=10))

    found, missing = await asyncio.to_thread(ask)
    assert found.original_request.file_containing_symbol == EMBEDDER
    assert len(found.file_descriptor_response.file_descriptor_proto) >= 1
    assert missing.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


async def test_v1alpha_is_still_served(sync_channel: grpc.Channel) -> None:
    services = await asyncio.to_thread(ProtoReflectionDescriptorDatabase(sync_channel).get_services)
    assert EMBEDDER in services


# ---------------------------------------------------------------------------------------------
# Supervision
# ---------------------------------------------------------------------------------------------


async def _settle(task: asyncio.Future[Any]) -> None:
    """Waits for `task` to end, then lets its done-callbacks and what they schedule run."""
    await asyncio.gather(task, return_exceptions=True)
    for _ in range(5):
        await asyncio.sleep(0)


async def _fail_when(release: asyncio.Event, error: Exception) -> None:
    """A supervised loop that raises `error` once `release` is set."""
    await release.wait()
    raise error


async def test_a_dying_task_turns_health_not_serving_and_is_logged(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    release = asyncio.Event()
    server.supervise(
        asyncio.create_task(_fail_when(release, ConnectionError("broker protocol violation"))), "kafka consumer"
    )
    assert await health_statuses(server.port, EMBEDDER) == {"": SERVING, EMBEDDER: SERVING}
    with caplog.at_level(logging.ERROR, logger="weaverbird_common.server"):
        release.set()
        await asyncio.wait_for(until_not_serving(server.port), 30)
    assert await health_statuses(server.port, EMBEDDER) == {"": NOT_SERVING, EMBEDDER: NOT_SERVING}
    (record,) = [r for r in caplog.records if "kafka consumer died" in r.getMessage()]
    assert record.exc_info is not None and "broker protocol violation" in str(record.exc_info[1])


async def test_a_task_that_returns_while_serving_counts_as_dead(server: RunningServer) -> None:
    async def loop() -> None:
        return None

    server.supervise(asyncio.create_task(loop()), "exporter")
    await asyncio.wait_for(until_not_serving(server.port), 30)
    assert await health_statuses(server.port, EMBEDDER) == {"": NOT_SERVING, EMBEDDER: NOT_SERVING}


async def test_a_cancelled_task_is_not_a_death(server: RunningServer) -> None:
    task = asyncio.create_task(asyncio.Event().wait())
    server.supervise(task, "kafka consumer")
    await asyncio.sleep(0)
    task.cancel()
    await _settle(task)
    assert await health_statuses(server.port, EMBEDDER) == {"": SERVING, EMBEDDER: SERVING}


async def test_a_task_failing_during_shutdown_is_not_reported_as_a_death(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    release = asyncio.Event()
    task = asyncio.create_task(_fail_when(release, RuntimeError("closed under me")))
    server.supervise(task, "kafka consumer")
    await server.stop(0)
    with caplog.at_level(logging.WARNING, logger="weaverbird_common.server"):
        release.set()
        await _settle(task)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert any("failed during shutdown" in r.getMessage() for r in caplog.records)
