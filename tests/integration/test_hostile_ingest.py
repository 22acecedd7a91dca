"""Ingest stays responsive under hostile documents (issue 34, item 6), through a real gRPC ingester with
real parse workers: a one-line text add completes while two slow PDFs are still being parsed, and a parse
whose client gave up is cancelled (its worker process killed, its slot freed) instead of running for a
minute. benchmarks/hostile_ingest.py measures the same scenario."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import pytest
from fixtures.processes import is_alive, live_children
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc
from weaverbird_common.docs import loaders
from weaverbird_common.docs.budgets import ExtractionBudget
from weaverbird_common.docs.workers import SlotScheduler, shared_pool
from weaverbird_common.encoders import EmbeddingBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `benchmarks` is a folder, not a package
from benchmarks.hostile_ingest import ONE_LINE, ingester, slow_pdf

pytestmark = pytest.mark.integration

WAIT_S = 60.0  # upper bound only; the slow PDF alone parses for well over a minute
Add = ingester_pb2.AddDocumentRequest


def _busy_workers() -> set[int]:
    """Pids of this process's parse workers that are running (state R), i.e. parsing."""
    workers = [c for c in live_children(os.getpid()) if c.mentions(b"weaverbird_common.docs.workers")]
    return {worker.pid for worker in workers if worker.state == "R"}


async def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen"
        await asyncio.sleep(0.05)


@pytest.fixture
async def stub(
    use_backend: EmbeddingBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[ingester_pb2_grpc.IngesterServiceStub]:
    # A long parse budget, so only cancellation (not the timeout) can stop the slow PDF here.
    monkeypatch.setattr(loaders, "default_budget", lambda: ExtractionBudget(timeout_s=900, workers=2))
    async with ingester(use_backend, tmp_path) as addr, grpc.aio.insecure_channel(addr) as channel:
        yield ingester_pb2_grpc.IngesterServiceStub(channel)


def _scheduler() -> SlotScheduler:
    return shared_pool(2).scheduler


async def test_an_abandoned_parse_is_cancelled_and_its_worker_killed(
    stub: ingester_pb2_grpc.IngesterServiceStub,
) -> None:
    call = stub.AddDocument(Add(data=slow_pdf(), filename="slow.pdf"), timeout=600)
    seen: set[int] = set()

    def one_parsing() -> bool:
        # Keep the pids of the read that matched: a worker leaves state R for a moment now and then (a
        # page fault, a pipe write), so a second read may find none.
        seen.clear()
        seen.update(_busy_workers())
        return len(seen) == 1

    await _until(one_parsing, "the slow parse starting")
    (parsing,) = seen
    call.cancel()  # the client goes away
    with pytest.raises(asyncio.CancelledError):
        await call
    await _until(lambda: not is_alive(parsing), "the parse worker being killed")
    await _until(lambda: _scheduler().in_use() == 0, "the parse slot being freed")


async def test_a_one_line_add_completes_while_two_slow_pdfs_are_parsed(
    stub: ingester_pb2_grpc.IngesterServiceStub,
) -> None:
    big = [stub.AddDocument(Add(data=slow_pdf(), filename=f"slow-{i}.pdf"), timeout=600) for i in range(2)]
    # One caller (127.0.0.1) gets one of the two general slots; its second PDF waits for it.
    await _until(lambda: _scheduler().in_use() == 1 and _scheduler().waiting() == 1, "the PDFs being scheduled")
    await _until(lambda: len(_busy_workers()) == 1, "the first PDF parsing")
    reply = await stub.AddDocument(Add(text=ONE_LINE, filename="note.txt"), timeout=WAIT_S)
    assert reply.chunks == 1 and reply.title == "note"
    assert not any(call.done() for call in big)  # it did not wait for them
    for call in big:
        call.cancel()
    await _until(lambda: _scheduler().in_use() == 0 and _scheduler().waiting() == 0, "the PDFs being cancelled")
    await _until(lambda: _busy_workers() == set(), "the parse workers stopping")
