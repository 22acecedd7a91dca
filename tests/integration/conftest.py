"""Starts the real five-service stack once per session (SmolLM2 on llama.cpp, Qdrant Edge, USE)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from weaverbird.v1 import orchestrator_pb2_grpc
from weaverbird_cli import commands
from weaverbird_cli.stack import SERVICES, LocalStack, StackConfig

pytestmark = pytest.mark.integration


def _free_base_port(count: int = len(SERVICES)) -> int:
    """A run of `count` consecutive free ports on 127.0.0.1."""
    for base in range(32000, 60000, 97):
        try:
            socks = []
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
    raise RuntimeError("no free port range")


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory, demo_kb: Path) -> Iterator[LocalStack]:
    data_dir = tmp_path_factory.mktemp("stack")
    config = StackConfig(
        base_port=_free_base_port(),
        data_dir=data_dir,
        generator_env={
            "GENERATOR_MODEL": "smollm2",
            "GENERATOR_MODEL_DIR": str(data_dir / "models"),
            "GENERATOR_MAX_TOKENS": "48",
            "GENERATOR_LLAMA_CTX": "4096",
        },
        embedder_env={"EMBEDDER_BACKEND": "use"},
    )
    with LocalStack(config) as running:
        assert commands.ingest([str(demo_kb)], running.config.addr("ingester"), quiet=True) == 0
        yield running


@pytest.fixture(scope="session")
def orchestrator(stack: LocalStack) -> Iterator[orchestrator_pb2_grpc.OrchestratorServiceStub]:
    with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
        yield orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
