"""Knowledge-base management end to end on the real stack: a web page arrives through Kafka with the
question and score that found it, files and saved URLs are added over gRPC; the ingester lists (filters,
pages), shows and deletes them; a deleted document is gone from retrieval and, its dedupe entry cleared,
the same page on the topic is stored again. The same through the HTTP gateway and the CLI."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import httpx
import pytest
from fixtures.gateway_server import GatewayServer
from fixtures.kafka_broker import KafkaBroker
from fixtures.web_servers import PageServer, SearchServer
from weaverbird.v1 import (
    common_pb2,
    ingester_pb2,
    ingester_pb2_grpc,
    orchestrator_pb2,
    orchestrator_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from weaverbird_cli import commands
from weaverbird_cli.stack import LocalStack
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.ingest_messages import IngestMessage
from weaverbird_common.ingest_publisher import IngestPublisher
from weaverbird_common.kafka_config import KafkaSettings

pytestmark = pytest.mark.integration

WEB_SAVED = retriever_pb2.DOCUMENT_ORIGIN_USER
INGEST_TOPIC = "stack.ingest.v1"  # the session stack's topic (integration/conftest.py, STACK_TOPICS)

QUESTION = "What was Halcyon Quarry Minerals' revenue in fiscal 2025?"
WEB_TEXT = "\n\n".join(
    f"Halcyon Quarry Minerals reported fiscal 2025 revenue of USD {731 + i}.4 million, with lithium brine output "
    f"up {11 + i} percent at its Atacama site {i}. Net income reached USD {88 + i}.1 million."
    for i in range(6)
)
SAVED_PATH = "/kb-mgmt/veridian-harbor-2025.html"
SAVED_HTML = """<!DOCTYPE html><html lang="en"><head><title>Veridian Harbor Logistics 2025 results</title></head>
<body><article><h1>Veridian Harbor Logistics 2025 results</h1>
<p>Veridian Harbor Logistics reported 2025 revenue of USD 2.3 billion and container volumes of 4.1 million TEU,
as its new terminal at Port Elan opened. Operating margin improved to 14.2 percent.</p>
<p>The board proposed a dividend of USD 0.42 per share for fiscal year 2025.</p></article></body></html>"""
LOCAL_NOTE = """---
company: Tamsin Orchard Foods
year: 2025
---
# Tamsin Orchard Foods 2025

Tamsin Orchard Foods reported 2025 revenue of GBP 412.9 million, up 6 percent on higher cider volumes.
"""
Ingester = ingester_pb2_grpc.IngesterServiceStub


@pytest.fixture(scope="module")
def publisher(kafka_broker: KafkaBroker) -> Iterator[IngestPublisher]:
    """The orchestrator's publisher class, on the stack's ingest topic."""
    settings = KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers, ingest_topic=INGEST_TOPIC)
    pub = IngestPublisher(settings)
    yield pub
    pub.close(5.0)


@pytest.fixture(scope="module")
def gateway(stack: LocalStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    log = tmp_path_factory.mktemp("kb-gateway") / "gateway.log"
    with (
        GatewayServer(stack.config.addr("orchestrator"), stack.config.addr("ingester"), log) as server,
        httpx.Client(base_url=server.base_url, timeout=120) as client,
    ):
        yield client


def _wait_for(condition: Callable[[], Any], what: str, timeout_s: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.5)
    pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what}")


def _list(stub: Ingester, **flt: Any) -> list[retriever_pb2.DocumentSummary]:
    """Every page of the listing under the filter."""
    docs: list[retriever_pb2.DocumentSummary] = []
    request = ingester_pb2.IngesterServiceListDocumentsRequest(filter=retriever_pb2.DocumentFilter(**flt), page_size=2)
    while True:
        reply = stub.ListDocuments(request, timeout=30)
        docs += reply.documents
        if not reply.next_page_token:
            assert reply.total_size == len(docs)
            return docs
        request.page_token = reply.next_page_token


def _get(stub: Ingester, document_id: str) -> ingester_pb2.IngesterServiceGetDocumentResponse | None:
    try:
        return stub.GetDocument(ingester_pb2.IngesterServiceGetDocumentRequest(document_id=document_id), timeout=30)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.NOT_FOUND:
            return None
        raise


def _retrieved_ids(stack: LocalStack, question: str, document_id: str) -> set[str]:
    """Document ids the orchestrator retrieves for `question` within `document_id` (a request filter keeps
    the question local, so only the KB is searched)."""
    with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
        reply = orchestrator_pb2_grpc.OrchestratorServiceStub(channel).Retrieve(
            orchestrator_pb2.AskRequest(
                question=question, top_k=5, filter=common_pb2.PayloadFilter(document_id=document_id)
            ),
            timeout=60,
        )
    return {p.document_id for p in reply.passages}


def test_web_page_from_kafka_is_listed_shown_deleted_and_stored_again(
    stack: LocalStack,
    ingester: Ingester,
    retriever: retriever_pb2_grpc.RetrieverServiceStub,
    publisher: IngestPublisher,
    web_page_server: PageServer,
    web_search_server: SearchServer,
    gateway: httpx.Client,
    capsys: pytest.CaptureFixture[str],
) -> None:
    started = datetime.now(UTC) - timedelta(seconds=1)
    url = web_page_server.url("/kb-mgmt/halcyon-quarry-fy2025.html")
    web_id = document_id_for(url)
    message = IngestMessage(
        url=url, title="Halcyon Quarry Minerals FY2025", text=WEB_TEXT, best_score=0.573, question=QUESTION
    )
    assert publisher.publish(message)
    _wait_for(lambda: _get(ingester, web_id), "the web page to arrive through Kafka")

    # Files and saved URLs come in over gRPC, each with its origin.
    web_page_server.set_pages({SAVED_PATH: SAVED_HTML})
    saved = ingester.AddDocument(ingester_pb2.AddDocumentRequest(url=web_page_server.url(SAVED_PATH)), timeout=60)
    note = ingester.AddDocument(
        ingester_pb2.AddDocumentRequest(text=LOCAL_NOTE, filename="tamsin-orchard-2025.md"), timeout=60
    )

    # Show: metadata, provenance of the web page, chunk count.
    shown = _get(ingester, web_id)
    assert shown is not None
    doc = shown.document
    assert (doc.source, doc.title, doc.language) == (url, "Halcyon Quarry Minerals FY2025", "en")
    assert doc.chunks >= 1 and "Halcyon Quarry Minerals" in shown.preview
    p = doc.provenance
    assert p.origin == retriever_pb2.DOCUMENT_ORIGIN_WEB and p.question == QUESTION
    assert math.isclose(p.best_score, 0.573, rel_tol=1e-5)
    assert p.found_at.ToDatetime(tzinfo=UTC) == message.found_at
    assert started <= p.added_at.ToDatetime(tzinfo=UTC) <= datetime.now(UTC)

    # List: the filters, and pages of 2 that add up to the total without repeats.
    since = retriever_pb2.DocumentFilter().added_since
    since.FromDatetime(started)
    recent = {d.document_id: d for d in _list(ingester, added_since=since)}
    assert {web_id, saved.document_id, note.document_id} <= set(recent)
    everything = _list(ingester)
    assert len(everything) == len({d.document_id for d in everything}) > len(recent)  # the demo KB is older
    origins = (
        retriever_pb2.DOCUMENT_ORIGIN_LOCAL,
        retriever_pb2.DOCUMENT_ORIGIN_WEB,
        retriever_pb2.DOCUMENT_ORIGIN_USER,
    )
    by_origin = {origin: {d.document_id for d in _list(ingester, origin=origin)} for origin in origins}
    assert web_id in by_origin[retriever_pb2.DOCUMENT_ORIGIN_WEB]
    assert saved.document_id in by_origin[retriever_pb2.DOCUMENT_ORIGIN_USER]
    assert note.document_id in by_origin[retriever_pb2.DOCUMENT_ORIGIN_LOCAL]
    assert recent[note.document_id].company  # front matter filed it under its company
    by_company = _list(ingester, company=recent[note.document_id].company.lower())
    assert [d.document_id for d in by_company] == [note.document_id]
    assert note.document_id not in {d.document_id for d in _list(ingester, language="zh")}

    # The HTTP gateway: same listing and details, then delete with its dedupe entry.
    listed = gateway.get("/api/documents", params={"origin": "web", "since": started.isoformat()}).json()
    row = next(d for d in listed["documents"] if d["document_id"] == web_id)
    assert row["provenance"]["question"] == QUESTION and row["provenance"]["origin"] == "web"
    details = gateway.get(f"/api/documents/{web_id}").json()
    assert details["document"]["chunks"] == doc.chunks and details["preview"] == shown.preview
    assert gateway.get("/api/documents", params={"origin": "bogus"}).status_code == 422
    bad_token = gateway.get("/api/documents", params={"page_token": "nope"})
    assert bad_token.status_code == 400 and "page_token" in bad_token.json()["detail"]
    assert _retrieved_ids(stack, QUESTION, web_id) == {web_id}

    deleted = gateway.delete(f"/api/documents/{web_id}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"document_id": web_id, "deleted_chunks": doc.chunks, "dedupe_cleared": True}
    assert gateway.get(f"/api/documents/{web_id}").status_code == 404
    again = gateway.delete(f"/api/documents/{web_id}")
    assert again.status_code == 404 and web_id in again.json()["detail"]
    assert _retrieved_ids(stack, QUESTION, web_id) == set()  # gone from Search
    assert web_id not in {d.document_id for d in _list(ingester)}

    # The same page on the topic again is stored again (its dedupe entry was cleared) ...
    assert publisher.publish(message)
    _wait_for(lambda: _get(ingester, web_id), "the deleted page to be stored again")
    assert _retrieved_ids(stack, QUESTION, web_id) == {web_id}
    # ... and so it is after a delete that bypassed the ingester (the retriever's own DeleteDocument):
    # the ingester sees the remembered page has no chunks any more.
    assert retriever.DeleteDocument(retriever_pb2.DeleteDocumentRequest(document_id=web_id), timeout=30).deleted > 0
    assert publisher.publish(message)
    _wait_for(lambda: _get(ingester, web_id), "the page deleted behind the ingester's back to be stored again")

    # The CLI: list, show, delete.
    addr = stack.config.addr("ingester")
    assert (
        commands.kb_list(addr, retriever_pb2.DocumentFilter(origin=retriever_pb2.DOCUMENT_ORIGIN_WEB), 50, "", True)
        == 0
    )
    out = capsys.readouterr().out
    assert web_id in out and repr(QUESTION) in out and "score 0.573" in out
    assert commands.kb_show(addr, note.document_id) == 0
    out = capsys.readouterr().out
    assert "tamsin-orchard-2025.md" in out and "origin:     local" in out
    assert commands.kb_delete(addr, saved.document_id) == 0
    assert f"deleted document {saved.document_id}" in capsys.readouterr().out
    assert commands.kb_delete(addr, saved.document_id) == 1
    assert "NOT_FOUND" in capsys.readouterr().err
    assert _get(ingester, saved.document_id) is None


def test_bad_kb_requests_get_clear_statuses(ingester: Ingester) -> None:
    cases = [
        (ingester.GetDocument, ingester_pb2.IngesterServiceGetDocumentRequest(), "document_id"),
        (ingester.DeleteDocument, ingester_pb2.IngesterServiceDeleteDocumentRequest(document_id=" "), "document_id"),
        (ingester.ListDocuments, ingester_pb2.IngesterServiceListDocumentsRequest(page_size=501), "page_size"),
        (ingester.ListDocuments, ingester_pb2.IngesterServiceListDocumentsRequest(page_token="zz"), "page_token"),
        (
            ingester.ListDocuments,
            ingester_pb2.IngesterServiceListDocumentsRequest(filter=retriever_pb2.DocumentFilter(language="fr")),
            "filter.language",
        ),
    ]
    for call, request, field in cases:
        with pytest.raises(grpc.RpcError) as err:
            call(request, timeout=30)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (field, err.value.details())
        assert field in (err.value.details() or "")
    with pytest.raises(grpc.RpcError) as err:
        ingester.DeleteDocument(ingester_pb2.IngesterServiceDeleteDocumentRequest(document_id="0123456789abcdef"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
