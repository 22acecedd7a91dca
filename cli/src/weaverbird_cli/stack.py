"""Starts the five services as child processes on 127.0.0.1, waits until each reports healthy and,
with a RestartPolicy, restarts any that crash while the others keep running."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from weaverbird_cli.security import LocalSecurity
from weaverbird_cli.supervisor import Child, RestartPolicy, Supervisor

SERVICES = ("embedder", "retriever", "generator", "orchestrator", "ingester")


@dataclass
class StackConfig:
    """Ports, data directory and per-service environment of a local stack."""

    base_port: int
    data_dir: Path
    generator_env: Mapping[str, str]
    embedder_env: Mapping[str, str] = field(default_factory=dict)
    orchestrator_env: Mapping[str, str] = field(default_factory=dict)
    ingester_env: Mapping[str, str] = field(default_factory=dict)
    # Applied to every service (e.g. OTEL_* variables).
    common_env: Mapping[str, str] = field(default_factory=dict)
    # First of five consecutive Prometheus ports; None = metrics endpoints off.
    metrics_base_port: int | None = None
    log_dir: Path | None = None
    # Mutual TLS between the services and an access policy (`weaverbird up`); None = plaintext, no auth.
    security: LocalSecurity | None = None

    def port(self, service: str) -> int:
        return self.base_port + SERVICES.index(service)

    def metrics_port(self, service: str) -> int:
        if self.metrics_base_port is None:
            raise ValueError("metrics are off in this stack")
        return self.metrics_base_port + SERVICES.index(service)

    def addr(self, service: str) -> str:
        return f"127.0.0.1:{self.port(service)}"

    def env(self, service: str) -> dict[str, str]:
        prefix = service.upper() + "_"
        common = {
            **self.common_env,
            f"{prefix}GRPC_PORT": str(self.port(service)),
            f"{prefix}HOST": "127.0.0.1",
        }
        if self.metrics_base_port is not None:
            common[f"{prefix}METRICS_PORT"] = str(self.metrics_port(service))
        specific: dict[str, str] = {
            "embedder": dict(self.embedder_env),
            "retriever": {"RETRIEVER_DATA_DIR": str(self.data_dir / "qdrant")},
            "generator": dict(self.generator_env),
            "orchestrator": {
                "ORCHESTRATOR_EMBEDDER_ADDR": self.addr("embedder"),
                "ORCHESTRATOR_RETRIEVER_ADDR": self.addr("retriever"),
                "ORCHESTRATOR_GENERATOR_ADDR": self.addr("generator"),
                **self.orchestrator_env,
            },
            "ingester": {
                "INGESTER_EMBEDDER_ADDR": self.addr("embedder"),
                "INGESTER_RETRIEVER_ADDR": self.addr("retriever"),
                "INGESTER_DATA_DIR": str(self.data_dir / "ingester"),
                **self.ingester_env,
            },
        }[service]
        secured = self.security.service_env(service) if self.security is not None else {}
        return {**common, **secured, **specific}

    def health_credentials(self) -> grpc.ChannelCredentials | None:
        """What the launcher presents to check health: its certificate when the stack is secured."""
        return self.security.channel_credentials("launcher") if self.security is not None else None


def free_base_port(count: int, start: int = 32000) -> int:
    """The first of `count` consecutive free ports on 127.0.0.1 (a stack needs a contiguous run)."""
    for base in range(start, 60000, 97):
        socks: list[socket.socket] = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port range on 127.0.0.1")


def _open(addr: str, credentials: grpc.ChannelCredentials | None) -> grpc.Channel:
    return grpc.insecure_channel(addr) if credentials is None else grpc.secure_channel(addr, credentials)


def is_serving(addr: str, timeout_s: float = 0.5, credentials: grpc.ChannelCredentials | None = None) -> bool:
    """One grpc.health.v1 check of `addr`: True only for SERVING."""
    with _open(addr, credentials) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=timeout_s)
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def wait_healthy(
    addr: str,
    timeout_s: float,
    process: subprocess.Popen[bytes] | None = None,
    credentials: grpc.ChannelCredentials | None = None,
) -> None:
    """Polls grpc.health.v1 at `addr` until SERVING. Raises RuntimeError on timeout or child exit."""
    deadline = time.monotonic() + timeout_s
    with _open(addr, credentials) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"service at {addr} exited with code {process.returncode}")
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.2)
    raise RuntimeError(f"service at {addr} not healthy after {timeout_s:.0f}s")


class LocalStack:
    """The five services as child processes; use as a context manager.

    With `restart_policy`, a service that exits after the stack started is restarted (see
    supervisor.Supervisor) and `processes` always holds the current process of each service.
    """

    def __init__(
        self, config: StackConfig, startup_timeout_s: float = 180.0, restart_policy: RestartPolicy | None = None
    ) -> None:
        self.config = config
        self._timeout = startup_timeout_s
        self._policy = restart_policy
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.supervisor: Supervisor | None = None
        self._log_dir = config.log_dir or config.data_dir / "logs"

    def start(self) -> LocalStack:
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        self._log_dir.mkdir(parents=True, exist_ok=True)
        try:
            for service in SERVICES:
                self._spawn(service)
            for service in SERVICES:
                wait_healthy(
                    self.config.addr(service),
                    self._timeout,
                    self.processes[service],
                    self.config.health_credentials(),
                )
            if self._policy is not None:
                self.supervisor = Supervisor(self._policy, self._timeout)
                for service in SERVICES:
                    self.supervisor.watch(self._child(service))
                self.supervisor.start()
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, service: str) -> subprocess.Popen[bytes]:
        env = {**os.environ, **self.config.env(service)}
        with (self._log_dir / f"{service}.log").open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", f"weaverbird_{service}"],
                env=env,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                # Own process group: a Ctrl-C in the terminal reaches only the launcher, which then
                # stops the services in order instead of racing them (and its supervisor) to the exit.
                start_new_session=True,
            )
        self.processes[service] = process
        return process

    def _child(self, service: str) -> Child:
        addr = self.config.addr(service)
        return Child(
            name=service,
            spawn=lambda: self._spawn(service),
            ready=lambda: is_serving(addr, credentials=self.config.health_credentials()),
            process=self.processes[service],
        )

    def supervise(self, child: Child) -> None:
        """Restarts `child` (e.g. the HTTP gateway) under the stack's policy too; no-op without one."""
        if self.supervisor is not None:
            self.supervisor.watch(child)

    def release(self, name: str) -> None:
        """Stops supervising `name`, so stopping it on purpose is not taken for a crash."""
        if self.supervisor is not None:
            self.supervisor.release(name)

    def stop(self) -> None:
        # The supervisor first: a service we terminate must not be restarted.
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None
        # Reverse order: front doors first, so nothing calls a peer that is already gone.
        for service in reversed(SERVICES):
            process = self.processes.get(service)
            if process is not None and process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
