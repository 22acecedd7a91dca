"""Clients see clean titles and relative sources, never server paths (issue 34, item 8), on the real
stack: an upload's file name with NUL, a bidi override and path parts is stored cleaned, an absolute
source is stored relative, and a document an older ingester stored under an absolute path is listed
and shown with a relative one."""

from __future__ import annotations

import grpc
import pytest
from weaverbird.v1 import (
    common_pb2,
    embedder_pb2,
    embedder_pb2_grpc,
    ingester_pb2,
    ingester_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from weaverbird_cli.stack import LocalStack

pytestmark = pytest.mark.integration

NOTE = b"# Brightwater Ferries 2025\n\nBrightwater Ferries reported 2025 revenue of NZD 318.2 million.\n"


def _listed(ingester: ingester_pb2_grpc.IngesterServiceStub, document_id: str) -> retriever_pb2.DocumentSummary:
    page_token = ""
    while True:
        reply = ingester.ListDocuments(
            ingester_pb2.IngesterServiceListDocumentsRequest(page_size=100, page_token=page_token), timeout=30
        )
        for doc in reply.documents:
            if doc.document_id == document_id:
                return doc
        if not reply.next_page_token:
            pytest.fail(f"{document_id} not listed")
        page_token = reply.next_page_token


def test_an_uploaded_name_is_cleaned_before_it_becomes_title_or_source(
    ingester: ingester_pb2_grpc.IngesterServiceStub,
) -> None:
    hostile = "../../etc/brightwater\x00-ferries\u202edm.\x07md"
    reply = ingester.AddDocument(ingester_pb2.AddDocumentRequest(data=NOTE, filename=hostile), timeout=120)
    listed = _listed(ingester, reply.document_id)
    for shown in (reply.title, listed.title, listed.source):
        assert not any(ch in shown for ch in "\x00\u202e\x07/\\"), repr(shown)
    assert listed.source == "brightwater-ferriesdm.md"


def test_an_absolute_source_is_stored_relative(ingester: ingester_pb2_grpc.IngesterServiceStub) -> None:
    request = ingester_pb2.AddDocumentRequest(
        data=NOTE, filename="brightwater.md", source="/home/alice/private/kb/notes/brightwater.md"
    )
    reply = ingester.AddDocument(request, timeout=120)
    got = ingester.GetDocument(ingester_pb2.IngesterServiceGetDocumentRequest(document_id=reply.document_id))
    assert got.document.source == "kb/notes/brightwater.md"
    assert _listed(ingester, reply.document_id).source == "kb/notes/brightwater.md"


def test_a_path_an_older_ingester_stored_is_shown_relative(
    stack: LocalStack, ingester: ingester_pb2_grpc.IngesterServiceStub
) -> None:
    # Written straight to the retriever, as ingesters before this change stored local files.
    with grpc.insecure_channel(stack.config.addr("embedder")) as channel:
        vector = (
            embedder_pb2_grpc.EmbedderServiceStub(channel)
            .Embed(embedder_pb2.EmbedRequest(texts=["legacy note"], kind=embedder_pb2.EMBED_KIND_PASSAGE), timeout=60)
            .vectors[0]
            .values
        )
    payload = common_pb2.ChunkPayload(
        document_id="fedcba9876543210", title="Legacy\x00 note", source="/work/main/demo/kb/legacy-note.md"
    )
    with grpc.insecure_channel(stack.config.addr("retriever")) as channel:
        retriever_pb2_grpc.RetrieverServiceStub(channel).Upsert(
            retriever_pb2.UpsertRequest(
                chunks=[retriever_pb2.Chunk(vector=vector, text="legacy note", payload=payload)]
            ),
            timeout=60,
        )
    listed = _listed(ingester, "fedcba9876543210")
    assert (listed.source, listed.title) == ("demo/kb/legacy-note.md", "Legacy note")
    got = ingester.GetDocument(ingester_pb2.IngesterServiceGetDocumentRequest(document_id="fedcba9876543210"))
    assert got.document.source == "demo/kb/legacy-note.md"
