"""Ingest benchmark: Kafka -> ingester -> embedder -> retriever on the real stack, beside bare embedding.

Publishes FinanceBench pages as web-document messages to the local Tansu broker, then times until the
retriever holds every chunk. Prints documents/s, chunks/s, single-document Kafka-to-searchable latency
and the ratio to bare embedding throughput measured in the same run (target: at least 80 %).

    python -m benchmarks.ingest [--docs 150]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import grpc
from kafka import KafkaProducer
from weaverbird.v1 import retriever_pb2, retriever_pb2_grpc
from weaverbird_cli.broker import DEAD_LETTER_TOPIC, INGEST_TOPIC, start_broker, stop_broker
from weaverbird_cli.stack import LocalStack, StackConfig
from weaverbird_common.docs.chunker import chunk_document, embedding_text
from weaverbird_common.docs.loaders import document_id_for, load_bytes
from weaverbird_common.encoders import build_backend
from weaverbird_common.ingest_messages import IngestMessage, encode_ingest_message
from weaverbird_eval.financebench_kb import page_documents

from benchmarks.financebench import DEFAULT_DATA
from benchmarks.harness import write_result


def page_texts(data: Path, count: int) -> list[tuple[str, str]]:
    """(url, text) of the first `count` non-trivial FinanceBench pages, as if found on the web."""
    out: list[tuple[str, str]] = []
    for doc in page_documents(data, limit_pages=count * 3):
        for page in doc.pages:
            if len(page.text) > 500 and len(out) < count:
                out.append((f"https://filings.example/{doc.title}/page/{page.number}", page.text))
    return out


def points(stub: retriever_pb2_grpc.RetrieverServiceStub) -> int:
    return stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=10).points


def wait_for(stub: retriever_pb2_grpc.RetrieverServiceStub, target: int, timeout_s: float) -> float:
    start = time.perf_counter()
    while points(stub) < target:
        if time.perf_counter() - start > timeout_s:
            raise TimeoutError(f"only {points(stub)} of {target} points after {timeout_s:.0f}s")
        time.sleep(0.05)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--docs", type=int, default=150)
    parser.add_argument("--no-facts", action="store_true", help="ingester without statement facts (INGESTER_FACTS)")
    args = parser.parse_args(argv)
    if not (args.data / "financebench" / "pages.jsonl").exists():
        print(f"skipped: FinanceBench data not found under {args.data}", file=sys.stderr)
        return 0

    pages = page_texts(args.data, args.docs + 1)
    probe, pages = pages[-1], pages[:-1]
    # The chunks the ingester will produce, for the expected count and the bare-embedding baseline.
    texts: list[str] = []
    counts: list[int] = []
    for url, text in pages:
        doc = load_bytes(text.encode(), "page.txt", source=url, origin="web")
        chunks = chunk_document(doc)
        counts.append(len(chunks))
        texts += [embedding_text(doc, c) for c in chunks]
    backend = build_backend("use")
    backend.embed(texts[:32], "passage")
    start = time.perf_counter()
    for i in range(0, len(texts), 32):  # the ingester's batch size
        backend.embed(texts[i : i + 32], "passage")
    bare_chunks_s = len(texts) / (time.perf_counter() - start)

    with tempfile.TemporaryDirectory() as tmp:
        broker = start_broker(Path(tmp) / "tansu.log")
        try:
            broker.create_topics(INGEST_TOPIC)
            broker.create_topics(DEAD_LETTER_TOPIC, partitions=1)
            kafka = {"KAFKA__BOOTSTRAP_SERVERS": broker.bootstrap_servers, "KAFKA__SESSION_TIMEOUT_MS": "6000",
                     "KAFKA__HEARTBEAT_INTERVAL_MS": "500"}  # fmt: skip
            config = StackConfig(
                base_port=53051,
                data_dir=Path(tmp),
                generator_env={"GENERATOR_MODEL": "smollm2", "GENERATOR_MODEL_DIR": f"{tmp}/models"},
                embedder_env={"EMBEDDER_BACKEND": "use"},
                ingester_env={
                    **{f"INGESTER_{k}": v for k, v in kafka.items()},
                    "INGESTER_FACTS": "false" if args.no_facts else "true",
                },
            )
            with LocalStack(config) as stack, grpc.insecure_channel(stack.config.addr("retriever")) as channel:
                stub = retriever_pb2_grpc.RetrieverServiceStub(channel)
                producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)

                def send(url: str, text: str) -> None:
                    message = IngestMessage(url=url, title=url, text=text, found_at=datetime.now(UTC), origin="web")
                    # Keyed by document id like the orchestrator's publisher, so documents spread over partitions.
                    producer.send(INGEST_TOPIC, encode_ingest_message(message), key=document_id_for(url).encode())

                # One document first: it also waits out the consumer group's join.
                before = points(stub)
                send(*pages[0])
                producer.flush()
                wait_for(stub, before + counts[0], 120)
                before = points(stub)
                start = time.perf_counter()
                for url, text in pages[1:]:
                    send(url, text)
                producer.flush()
                expected = sum(counts[1:])
                elapsed = wait_for(stub, before + expected, 600)
                docs_s, chunks_s = (len(pages) - 1) / elapsed, expected / elapsed

                before = points(stub)
                start = time.perf_counter()
                send(*probe)
                producer.flush()
                to_searchable_ms = (time.perf_counter() - start + wait_for(stub, before + 1, 60)) * 1000
                producer.close()
        finally:
            stop_broker(broker)

    report = {
        "documents": len(pages) - 1,
        "chunks": expected,
        "documents_per_s": docs_s,
        "chunks_per_s": chunks_s,
        "bare_embedding_chunks_per_s": bare_chunks_s,
        "ratio_to_bare_embedding": chunks_s / bare_chunks_s,
        "kafka_to_searchable_ms_one_document": to_searchable_ms,
        "facts": not args.no_facts,
    }
    print(f"ingest through Kafka: {docs_s:.1f} documents/s, {chunks_s:.1f} chunks/s ({expected} chunks)")
    print(f"bare embedding (same chunks, batches of 32): {bare_chunks_s:.1f} chunks/s")
    print(f"ratio ingest / bare embedding: {report['ratio_to_bare_embedding']:.2f} (target >= 0.80)")
    print(f"one document, Kafka to searchable: {to_searchable_ms:.0f} ms")
    write_result("ingest_no_facts" if args.no_facts else "ingest", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
