"""Builds and runs a grpc.aio server with health checking, reflection and error mapping."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from weaverbird_common import telemetry
from weaverbird_common.interceptor import ErrorInterceptor
from weaverbird_common.settings import BaseServiceSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServiceBinding:
    """One gRPC service to host: the generated `add_*_to_server` function, the servicer, its full name."""

    add_to_server: Callable[[Any, grpc.aio.Server], None]
    servicer: Any
    full_name: str  # e.g. weaverbird_pb2.DESCRIPTOR.services_by_name["X"].full_name


@dataclass
class RunningServer:
    """A started server: the bound port and the health servicer to flip on shutdown."""

    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer
    service_names: tuple[str, ...]

    async def stop(self, grace_s: float) -> None:
        """Marks every service NOT_SERVING (so load balancers drain), then stops after `grace_s`."""
        for name in (*self.service_names, ""):
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(grace_s)


async def start_server(
    bindings: Sequence[ServiceBinding],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    max_message_mb: int = 64,
    extra_interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
) -> RunningServer:
    """Starts a server hosting `bindings` plus grpc.health.v1 and reflection.

    Args:
        bindings: services to host.
        host: interface to bind; 127.0.0.1 by default.
        port: port to bind; 0 picks a free one (the chosen port is returned).
        max_message_mb: send/receive message size limit.
        extra_interceptors: run before the error interceptor (tracing, metrics).

    Returns:
        The running server and its port.
    """
    limit = max_message_mb * 1024 * 1024
    server = grpc.aio.server(
        interceptors=[*extra_interceptors, ErrorInterceptor()],
        options=[
            ("grpc.max_send_message_length", limit),
            ("grpc.max_receive_message_length", limit),
            ("grpc.so_reuseport", 0),
        ],
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for binding in bindings:
        binding.add_to_server(binding.servicer, server)
    names = tuple(b.full_name for b in bindings)
    reflection.enable_server_reflection((*names, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot bind gRPC server to {host}:{port}")
    await server.start()
    for name in (*names, ""):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(server=server, port=bound, health=health_servicer, service_names=names)


async def serve_forever(
    service: str,
    settings: BaseServiceSettings,
    bindings: Sequence[ServiceBinding],
    *,
    on_stop: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Runs a service until SIGTERM/SIGINT, then drains in-flight calls for `shutdown_grace_s`.

    Every service gets the same telemetry here: Prometheus metrics on `metrics_port`, OpenTelemetry
    spans for every RPC (exported when OTEL_EXPORTER_OTLP_ENDPOINT is set).
    """
    telemetry.start_metrics_server(settings.metrics_port, settings.host)
    tracing = telemetry.configure_tracing(f"weaverbird-{service}", settings.otlp_endpoint)
    running = await start_server(
        bindings,
        host=settings.host,
        port=settings.grpc_port,
        max_message_mb=settings.max_message_mb,
        extra_interceptors=[telemetry.TracingServerInterceptor(), telemetry.MetricsInterceptor(service)],
    )
    # The launcher and tests parse this line to learn the port when grpc_port=0.
    print(f"WEAVERBIRD_LISTENING {settings.host}:{running.port}", flush=True)
    log.info("listening host=%s port=%d services=%s", settings.host, running.port, ",".join(running.service_names))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down grace_s=%.1f", settings.shutdown_grace_s)
    await running.stop(settings.shutdown_grace_s)
    if on_stop is not None:
        await on_stop()
    tracing.shutdown()
