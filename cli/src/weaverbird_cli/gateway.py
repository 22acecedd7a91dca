"""Runs the HTTP gateway (web page + JSON API) beside the local stack for `weaverbird up`.

The gateway speaks HTTP, not gRPC, so it is started after the gRPC services are healthy and checked
through its own /healthz instead of the gRPC health service.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import httpx


class GatewayProcess:
    """`python -m weaverbird_gateway` on 127.0.0.1:`port`, pointed at the stack's orchestrator and ingester."""

    def __init__(
        self,
        port: int,
        orchestrator_addr: str,
        ingester_addr: str,
        log_path: Path,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        """`extra_env`: e.g. the gateway's TLS files and default token when the stack is secured."""
        self.url = f"http://127.0.0.1:{port}/"
        self._env = {
            **os.environ,
            "GATEWAY_HOST": "127.0.0.1",
            "GATEWAY_PORT": str(port),
            "GATEWAY_ORCHESTRATOR_ADDR": orchestrator_addr,
            "GATEWAY_INGESTER_ADDR": ingester_addr,
            **(extra_env or {}),
        }
        self._log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60.0) -> None:
        """Starts the gateway and waits for /healthz; raises RuntimeError with the log's tail if it fails."""
        process = self.spawn()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the gateway exited ({process.returncode}); see {self._log_path}")
            if self.is_healthy(timeout_s=1.0):
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(
            f"the gateway did not answer {self.url}healthz within {timeout_s:.0f}s; see {self._log_path}"
        )

    def spawn(self) -> subprocess.Popen[bytes]:
        """Starts the gateway process without waiting (the supervisor's restart calls this too)."""
        with self._log_path.open("ab") as log:
            # Its own process group: Ctrl-C reaches the launcher, which stops the gateway in order.
            self.process = subprocess.Popen(
                [sys.executable, "-m", "weaverbird_gateway"],
                env=self._env,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        return self.process

    def is_healthy(self, timeout_s: float = 0.5) -> bool:
        """One GET /healthz: the supervisor's readiness probe after a restart."""
        try:
            return httpx.get(f"{self.url}healthz", timeout=timeout_s).status_code == 200
        except httpx.TransportError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
