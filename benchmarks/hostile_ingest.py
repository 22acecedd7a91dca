"""Ingest under hostile documents (issue 34, item 6): two slow PDFs abandoned by their client after 5 s,
and a one-line text add sent meanwhile. Prints how long the add took (target: under 2 s; before the
fix it waited 58.3 s for a parse worker) and how long after the abandonment the PDFs' workers were free.

The ingester is the real gRPC service (IngesterServicer in a real grpc.aio server, real parse workers);
its knowledge base is the real USE embedder and an embedded Qdrant store in this process.

    python -m benchmarks.hostile_ingest
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc
from weaverbird_common.docs.loaders import LIGHT_TEXT_BYTES
from weaverbird_common.docs.workers import SlotScheduler
from weaverbird_common.encoders import EmbeddingBackend, build_backend
from weaverbird_common.server import ServiceBinding, start_server
from weaverbird_ingester.servicer import IngesterServicer
from weaverbird_ingester.writer import DocumentWriter
from weaverbird_retriever.stores import open_store

from benchmarks.harness import write_result
from tests.fixtures.in_process_kb import InProcessKnowledgeBase
from tests.fixtures.pdf_files import pdf_document

ABANDON_AFTER_S = 5.0
ONE_LINE = "Northwind Robotics opened a second plant in Ohio in March 2025."


def slow_pdf(pages: int = 300, operators: int = 20_000) -> bytes:
    """A valid ~48 KB PDF that keeps pypdf busy for a minute or more: every page draws one character
    `operators` times, from one Flate-compressed content stream shared by all pages."""
    stream = zlib.compress(b"BT /F1 11 Tf 72 720 Td " + b"(a) Tj " * operators + b"ET", 9)
    kids = " ".join(f"{5 + i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode() + stream + b"\nendstream",
    ]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
    objects += [page + b"/Contents 4 0 R >>"] * pages
    return pdf_document(objects)


async def _no_fetch(url: str) -> tuple[bytes, str]:
    raise ValueError(f"this ingester fetches nothing ({url})")


@contextlib.asynccontextmanager
async def ingester(backend: EmbeddingBackend, data_dir: Path) -> AsyncIterator[str]:
    """A real gRPC ingester on 127.0.0.1 over an in-process knowledge base; yields its address."""
    store = open_store("local", path=str(data_dir / "kb"), url=None, api_key=None, collection="hostile")
    store.ensure_collection(backend.dimension)
    writer = DocumentWriter(InProcessKnowledgeBase(backend, store), 250, 400, 32)
    servicer = IngesterServicer(writer, 8 << 20, _no_fetch)
    name = ingester_pb2.DESCRIPTOR.services_by_name["IngesterService"].full_name
    running = await start_server(
        [ServiceBinding(ingester_pb2_grpc.add_IngesterServiceServicer_to_server, servicer, name)]
    )
    try:
        yield f"127.0.0.1:{running.port}"
    finally:
        await running.stop(0)
        store.close()


async def _until_idle(scheduler: SlotScheduler, timeout_s: float) -> float:
    started = time.monotonic()
    while scheduler.in_use() or scheduler.waiting():
        if time.monotonic() - started > timeout_s:
            return float("nan")
        await asyncio.sleep(0.02)
    return time.monotonic() - started


async def measure() -> dict[str, Any]:
    from weaverbird_common.docs.budgets import default_budget
    from weaverbird_common.docs.workers import shared_pool

    backend = build_backend("use")
    pdf = slow_pdf()
    assert len(ONE_LINE.encode()) <= LIGHT_TEXT_BYTES
    with tempfile.TemporaryDirectory() as tmp:
        async with ingester(backend, Path(tmp)) as addr, grpc.aio.insecure_channel(addr) as channel:
            stub = ingester_pb2_grpc.IngesterServiceStub(channel)
            scheduler = shared_pool(default_budget().workers).scheduler
            # Warm the workers (their imports take about a second) as a running service has them.
            await stub.AddDocument(ingester_pb2.AddDocumentRequest(text="warm up", filename="w.txt"), timeout=60)
            big = [
                asyncio.ensure_future(
                    stub.AddDocument(
                        ingester_pb2.AddDocumentRequest(data=pdf, filename=f"slow-{i}.pdf"), timeout=ABANDON_AFTER_S
                    )
                )
                for i in range(2)
            ]
            await asyncio.sleep(1.0)  # both PDFs are parsing or queued
            started = time.monotonic()
            reply = await stub.AddDocument(
                ingester_pb2.AddDocumentRequest(text=ONE_LINE, filename="note.txt"), timeout=60
            )
            add_s = time.monotonic() - started
            assert reply.chunks == 1
            results = await asyncio.gather(*big, return_exceptions=True)
            # Measured from the client's deadline: cancelling kills the parse workers (item 6).
            freed_s = await _until_idle(scheduler, 120)
            codes = [r.code().name if isinstance(r, grpc.aio.AioRpcError) else "OK" for r in results]
    return {
        "pdf_bytes": len(pdf),
        "one_line_add_s": round(add_s, 3),
        "workers_free_after_abandon_s": round(freed_s, 3),
        "big_pdf_outcomes": codes,
    }


def main() -> None:
    report = asyncio.run(measure())
    outcomes = ", ".join(report["big_pdf_outcomes"])
    print(f"slow PDFs: 2 x {report['pdf_bytes']:,} bytes, abandoned after {ABANDON_AFTER_S:g} s: {outcomes}")
    print(f"one-line text add while they parse: {report['one_line_add_s']:.3f} s (target < 2 s)")
    print(f"parse workers free {report['workers_free_after_abandon_s']:.3f} s after the client gave up")
    write_result("hostile_ingest", report)


if __name__ == "__main__":
    main()
