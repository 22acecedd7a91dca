"""Starts the real five-service stack once per session (SmolLM2 on llama.cpp, Qdrant Edge, USE)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from fixtures.default_stack import default_model_stack
from fixtures.kafka_broker import KafkaBroker
from fixtures.otlp_collector import OtlpCollector
from fixtures.web_servers import PageServer, SearchServer
from weaverbird.v1 import ingester_pb2_grpc, orchestrator_pb2_grpc, retriever_pb2_grpc
from weaverbird_cli import commands
from weaverbird_cli.stack import SERVICES, LocalStack, StackConfig, free_base_port
from weaverbird_common.encoders import EmbeddingBackend, build_backend

pytestmark = pytest.mark.integration


STACK_TOPICS = ("stack.ingest.v1", "stack.ingest.dlq.v1")


@pytest.fixture(scope="session")
def stack(
    tmp_path_factory: pytest.TempPathFactory,
    demo_kb: Path,
    kafka_broker: KafkaBroker,
    web_search_server_session: SearchServer,
    web_page_server_session: PageServer,
    otlp_collector: OtlpCollector,
) -> Iterator[LocalStack]:
    """All five services, with the web path pointed at the local SearxNG-compatible server and the
    page server, and the ingest topic on the local Tansu broker."""
    data_dir = tmp_path_factory.mktemp("stack")
    kafka_broker.create_topics(STACK_TOPICS[0])
    kafka_broker.create_topics(STACK_TOPICS[1], partitions=1)
    kafka = {
        "KAFKA__BOOTSTRAP_SERVERS": kafka_broker.bootstrap_servers,
        "KAFKA__INGEST_TOPIC": STACK_TOPICS[0],
        "KAFKA__DEAD_LETTER_TOPIC": STACK_TOPICS[1],
        # Short group timings: Tansu otherwise takes 20 s+ to settle a group join.
        "KAFKA__SESSION_TIMEOUT_MS": "6000",
        "KAFKA__HEARTBEAT_INTERVAL_MS": "500",
    }
    allow = json.dumps([web_page_server_session.allow_entry])
    base_port = free_base_port(2 * len(SERVICES))  # services, then their metrics ports
    config = StackConfig(
        base_port=base_port,
        metrics_base_port=base_port + len(SERVICES),
        # Spans go to a real OTLP collector in the test process; export quickly so tests need not wait.
        common_env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_collector.endpoint,
            "OTEL_EXPORTER_OTLP_INSECURE": "true",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
        },
        data_dir=data_dir,
        generator_env={
            "GENERATOR_MODEL": "smollm2",
            "GENERATOR_MODEL_DIR": str(data_dir / "models"),
            "GENERATOR_MAX_TOKENS": "48",
            "GENERATOR_LLAMA_CTX": "4096",
        },
        embedder_env={"EMBEDDER_BACKEND": "use"},
        orchestrator_env={
            "ORCHESTRATOR_WEB_PROVIDER": "searxng",
            "ORCHESTRATOR_WEB_BASE_URL": web_search_server_session.base_url,
            "ORCHESTRATOR_WEB_ALLOW_HOSTS": allow,
            "ORCHESTRATOR_WEB_PAGES": "5",
            "ORCHESTRATOR_WEB_DEADLINE_S": "3",
            # Above the calibrated 0.103: demo questions about companies the KB lacks (0.07-0.27 with
            # USE) must reach the web here, while questions about the notes (0.48-0.59) stay local.
            "ORCHESTRATOR_THRESHOLD": "0.40",
            **{f"ORCHESTRATOR_{k}": v for k, v in kafka.items()},
        },
        ingester_env={"INGESTER_FETCH_ALLOW_HOSTS": allow, **{f"INGESTER_{k}": v for k, v in kafka.items()}},
    )
    with LocalStack(config) as running:
        assert commands.ingest([str(demo_kb)], running.config.addr("ingester"), quiet=True) == 0
        yield running


@pytest.fixture(scope="session")
def orchestrator(stack: LocalStack) -> Iterator[orchestrator_pb2_grpc.OrchestratorServiceStub]:
    with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
        yield orchestrator_pb2_grpc.OrchestratorServiceStub(channel)


@pytest.fixture(scope="session")
def use_backend() -> EmbeddingBackend:
    """The USE embedding backend, loaded once for the in-process servers and knowledge bases."""
    return build_backend("use")


@pytest.fixture(scope="session")
def ingester(stack: LocalStack) -> Iterator[ingester_pb2_grpc.IngesterServiceStub]:
    with grpc.insecure_channel(stack.config.addr("ingester")) as channel:
        yield ingester_pb2_grpc.IngesterServiceStub(channel)


@pytest.fixture(scope="session")
def retriever(stack: LocalStack) -> Iterator[retriever_pb2_grpc.RetrieverServiceStub]:
    with grpc.insecure_channel(stack.config.addr("retriever")) as channel:
        yield retriever_pb2_grpc.RetrieverServiceStub(channel)


@pytest.fixture(scope="session")
def default_stack(tmp_path_factory: pytest.TempPathFactory, demo_kb: Path) -> Iterator[LocalStack]:
    """The stack with the default model (Qwen2.5-Coder-1.5B, greedy; `make models` installs it) over the
    demo KB, web search off: what a user of `make run` gets."""
    yield from default_model_stack(tmp_path_factory.mktemp("demo-stack"), demo_kb)


@pytest.fixture(scope="module")
def model_stack(tmp_path_factory: pytest.TempPathFactory, demo_kb: Path) -> Iterator[LocalStack]:
    """The same with answers from statement facts off and the model's own calculations on (off by default):
    every question reaches the model's task steps."""
    yield from default_model_stack(
        tmp_path_factory.mktemp("model-stack"),
        demo_kb,
        {"ORCHESTRATOR_FACTS_ANSWERS": "false", "ORCHESTRATOR_MODEL_CALCULATIONS": "true"},
    )
