"""Builds and runs a grpc.aio server: health checking, reflection (v1 and v1alpha) and the interceptor chain."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from opentelemetry import trace

from weaverbird_common import reflection
from weaverbird_common.auth import Authenticator, AuthInterceptor
from weaverbird_common.concurrency import ConcurrencyLimitInterceptor
from weaverbird_common.interceptor import ErrorInterceptor
from weaverbird_common.settings import BaseServiceSettings
from weaverbird_common.telemetry.registry import register_metrics, start_metrics_server
from weaverbird_common.telemetry.rpc_metrics import MetricsInterceptor
from weaverbird_common.telemetry.tracing import configure_tracing, tracing_server_interceptor
from weaverbird_common.tls import TlsFiles, server_credentials
from weaverbird_common.tls import tls_files as files_from


def tls_files(settings: BaseServiceSettings) -> TlsFiles | None:
    """The service's certificate files from its settings; None when TLS is off."""
    return files_from(settings.tls_cert_file, settings.tls_key_file, settings.tls_ca_file)


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServiceBinding:
    """One gRPC service to host: the generated `add_*_to_server` function, the servicer, its full name."""

    add_to_server: Callable[[Any, grpc.aio.Server], None]
    servicer: Any
    full_name: str  # e.g. weaverbird_pb2.DESCRIPTOR.services_by_name["X"].full_name

    @classmethod
    def of(cls, pb2: ModuleType, pb2_grpc: ModuleType, service: str, servicer: Any) -> ServiceBinding:
        """The binding of `service` (e.g. "RetrieverService") read from its generated modules."""
        add = getattr(pb2_grpc, f"add_{service}Servicer_to_server")
        return cls(add, servicer, pb2.DESCRIPTOR.services_by_name[service].full_name)


@dataclass
class RunningServer:
    """A started server: the bound port and the health servicer to flip on shutdown or failure."""

    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer
    service_names: tuple[str, ...]
    stopping: bool = field(default=False, init=False)
    health_server: grpc.aio.Server | None = field(default=None, init=False)
    _health_updates: set[asyncio.Task[None]] = field(default_factory=set, init=False, repr=False)

    async def set_serving(self, serving: bool) -> None:
        """Sets every hosted service and the overall status "" to SERVING or NOT_SERVING."""
        status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in (*self.service_names, ""):
            await self.health.set(name, status)

    def supervise(self, task: asyncio.Future[Any], what: str) -> None:
        """Turns the server NOT_SERVING for good if `task` fails, or returns, before stop().

        For background loops the service is useless without (the Kafka consumer): Kubernetes' gRPC
        liveness probe then fails and the pod is restarted, instead of answering SERVING while its
        work has silently stopped. Cancellation never counts: it is how shutdown ends tasks.

        Args:
            task: the running loop.
            what: its name in the log, e.g. "kafka consumer".
        """

        def on_done(done: asyncio.Future[Any]) -> None:
            if done.cancelled():
                log.info("%s cancelled", what)
                return
            error = done.exception()  # also marks it retrieved, so asyncio does not report it again
            if self.stopping:
                if error is not None:
                    log.warning("%s failed during shutdown: %s: %s", what, type(error).__name__, error)
                return
            if error is not None:
                log.error("%s died; health is now NOT_SERVING", what, exc_info=error)
            else:
                log.error("%s ended on its own; health is now NOT_SERVING", what)
            update = asyncio.get_running_loop().create_task(self.set_serving(False))
            self._health_updates.add(update)  # a task nobody references may be collected unfinished
            update.add_done_callback(self._health_updates.discard)

        task.add_done_callback(on_done)

    async def stop(self, grace_s: float) -> None:
        """Marks every service NOT_SERVING (so load balancers drain), then stops after `grace_s`."""
        self.stopping = True
        await self.set_serving(False)
        if self.health_server is not None:
            await self.health_server.stop(grace_s)
        await self.server.stop(grace_s)

    async def serve_health_on(self, host: str, port: int) -> int:
        """Also answers grpc.health.v1 (only) in plaintext on `port`, from the same health state; returns
        the bound port. For kubelet's gRPC probes, which cannot do mutual TLS."""
        server = grpc.aio.server()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        bound = server.add_insecure_port(f"{host}:{port}")
        if bound == 0:
            raise OSError(f"cannot bind the health port {host}:{port}")
        await server.start()
        self.health_server = server
        return bound


def interceptor_chain(
    service: str,
    *,
    observed: bool = False,
    tracer_provider: trace.TracerProvider | None = None,
    authenticator: Authenticator | None = None,
    max_concurrent_rpcs: int | None = None,
) -> list[grpc.aio.ServerInterceptor]:
    """Every server's interceptors, in their one order (the first runs outermost).

    1. tracing and 2. metrics (when `observed`): outermost, so every refusal below is traced and
       counted with its final code;
    3. authentication (with an `authenticator`): before the limiter, so a caller without rights
       takes no slot;
    4. concurrency limit (with `max_concurrent_rpcs`): our own, not grpc.aio.server's
       maximum_concurrent_rpcs, which counts health checks too (a full server would fail its liveness
       probe) and answers a fixed "Concurrent RPC limit exceeded!";
    5. errors: innermost, next to the handler, whose exceptions it turns into statuses.
    """
    chain: list[grpc.aio.ServerInterceptor] = []
    if observed:
        chain += [tracing_server_interceptor(tracer_provider), MetricsInterceptor(service)]
    if authenticator is not None:
        chain.append(AuthInterceptor(authenticator))
    if max_concurrent_rpcs:
        chain.append(ConcurrencyLimitInterceptor(max_concurrent_rpcs, service))
    chain.append(ErrorInterceptor())
    return chain


async def start_server(
    bindings: Sequence[ServiceBinding],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    max_message_mb: int = 64,
    observed: bool = False,
    tracer_provider: trace.TracerProvider | None = None,
    max_concurrent_rpcs: int | None = None,
    service: str = "server",
    tls: TlsFiles | None = None,
    require_client_cert: bool = True,
    authenticator: Authenticator | None = None,
) -> RunningServer:
    """Starts a server hosting `bindings` plus grpc.health.v1 and reflection (v1 and v1alpha).

    Args:
        bindings: services to host.
        host: interface to bind; 127.0.0.1 by default.
        port: port to bind; 0 picks a free one (the chosen port is returned).
        max_message_mb: send/receive message size limit.
        observed: trace every call and count it in the RPC metrics (labelled `service`).
        tracer_provider: where those spans go; the global provider by default.
        max_concurrent_rpcs: calls served at once (health checks and reflection not counted); one more is
            answered RESOURCE_EXHAUSTED at once, with a message telling the client to retry. None = no limit.
        service: the name that message and the metrics use.
        tls: serve TLS with this certificate (and verify clients against its CA: mutual TLS when
            `require_client_cert`); None = plaintext.
        authenticator: who may call what (auth.py); None = no authentication.

    Returns:
        The running server and its port.
    """
    limit = max_message_mb * 1024 * 1024
    server = grpc.aio.server(
        interceptors=interceptor_chain(
            service,
            observed=observed,
            tracer_provider=tracer_provider,
            authenticator=authenticator,
            max_concurrent_rpcs=max_concurrent_rpcs,
        ),
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
    reflection.enable_server_reflection((*names, health.SERVICE_NAME), server)
    address = f"{host}:{port}"
    if tls is None:
        bound = server.add_insecure_port(address)
    else:
        bound = server.add_secure_port(address, server_credentials(tls, require_client_cert=require_client_cert))
    if bound == 0:
        raise OSError(f"cannot bind gRPC server to {host}:{port}")
    await server.start()
    running = RunningServer(server=server, port=bound, health=health_servicer, service_names=names)
    await running.set_serving(True)
    return running


async def serve_forever(
    service: str,
    settings: BaseServiceSettings,
    bindings: Sequence[ServiceBinding],
    *,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    supervised: Mapping[str, asyncio.Future[Any]] | None = None,
) -> None:
    """Runs a service until SIGTERM/SIGINT, then drains in-flight calls for `shutdown_grace_s`.

    Every service gets the same telemetry here: Prometheus metrics on `metrics_port` (the RPC
    metrics and the service's own, see telemetry.registry), OpenTelemetry spans for every
    RPC (exported when OTEL_EXPORTER_OTLP_ENDPOINT is set).

    Args:
        service: the service's short name ("ingester"): metrics label, tracing name, own metrics.
        settings: the common settings.
        bindings: services to host.
        on_stop: awaited after the server stopped (close clients, stop loops).
        supervised: background tasks by name that must run as long as the server; if one fails or
            ends first, health turns NOT_SERVING (RunningServer.supervise).
    """
    register_metrics(service)
    start_metrics_server(settings.metrics_port, settings.host)
    tracing = configure_tracing(f"weaverbird-{service}", settings.otlp_endpoint)
    running = await start_server(
        bindings,
        host=settings.host,
        port=settings.grpc_port,
        max_message_mb=settings.max_message_mb,
        observed=True,
        max_concurrent_rpcs=settings.max_concurrent_rpcs,
        service=service,
        tls=tls_files(settings),
        require_client_cert=settings.tls_require_client_cert,
        authenticator=Authenticator.from_file(settings.auth_policy_file) if settings.auth_policy_file else None,
    )
    for what, task in (supervised or {}).items():
        running.supervise(task, what)
    if settings.health_port:
        await running.serve_health_on(settings.host, settings.health_port)
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
