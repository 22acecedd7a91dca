"""The FinanceBench filings as a WeaverBird knowledge base: one Document per filing with its pages
numbered as the PDF loader numbers them, chunked and embedded like the ingester does, then upserted
into a running retriever service. Shared by the answer evaluation and the local-path benchmark."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import numpy as np
from tqdm import tqdm
from weaverbird.v1 import common_pb2, retriever_pb2, retriever_pb2_grpc
from weaverbird_common.docs.chunker import chunk_document, embedding_text
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.docs.entities import document_entities
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.docs.metadata import metadata_from_filename
from weaverbird_common.encoders import build_backend

from weaverbird_eval.cache import cache_dir


def page_documents(
    data_dir: Path, limit_pages: int | None = None, keep: Callable[[str, int], bool] | None = None
) -> Iterator[Document]:
    """One Document per filing, pages numbered pypdf index + 1 as the PDF loader numbers them.

    `limit_pages`: only the first N lines of pages.jsonl; `keep(doc_name, page_number)`: a page filter.
    Company, aliases, period, type and date come from the filing's name and its whole text (pages kept or
    not), as the ingester reads them (docs.entities: the first pages, and the names used throughout).
    """
    pages: dict[str, list[Page]] = defaultdict(list)
    texts: dict[str, list[tuple[int, str]]] = defaultdict(list)
    with (data_dir / "financebench" / "pages.jsonl").open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit_pages is not None and n >= limit_pages:
                break
            row = json.loads(line)
            number = row["page_num"] + 1
            if not row["text"].strip():
                continue
            texts[row["doc_name"]].append((number, row["text"]))
            if keep is None or keep(row["doc_name"], number):
                pages[row["doc_name"]].append(Page(number, row["text"]))
    for doc_name, doc_pages in sorted(pages.items()):
        found = document_entities("\n".join(text for _, text in sorted(texts[doc_name])), doc_name)
        yield Document(
            document_id=document_id_for(f"{doc_name}.pdf"),
            title=doc_name,
            source=f"{doc_name}.pdf",
            pages=sorted(doc_pages, key=lambda p: p.number or 0),
            language="en",
            company=found.company,
            year=found.year,
            quarter=found.quarter,
            published=metadata_from_filename(doc_name).published or found.dated,  # as the PDF loader dates it
            doc_type=found.doc_type,
            aliases=list(found.aliases),
        )


def build_corpus(documents: list[Document]) -> tuple[list[dict], list[str]]:
    """Chunks of every document, as retriever payload dicts (with the text), and the texts to embed."""
    payloads: list[dict] = []
    texts: list[str] = []
    for doc in tqdm(documents, desc="chunk", unit="doc"):
        for chunk in chunk_document(doc):
            payloads.append(
                {
                    "document_id": doc.document_id,
                    "title": doc.title,
                    "source": doc.source,
                    "page": chunk.page or 0,
                    "company": doc.company,
                    "year": doc.year or 0,
                    "quarter": doc.quarter or 0,
                    "doc_type": doc.doc_type,
                    "aliases": list(doc.aliases),
                    "published_date": doc.published,
                    "chunk_index": chunk.index,
                    "heading": chunk.heading,
                    "text": chunk.text,
                }
            )
            texts.append(embedding_text(doc, chunk))
    return payloads, texts


def embed_corpus(backend_name: str, texts: list[str], cache: Path | None = None) -> np.ndarray:
    """Passage vectors, cached on disk by backend and corpus hash (embedding dominates set-up time)."""
    cache = cache or cache_dir()
    digest = hashlib.sha1("\x00".join(texts).encode()).hexdigest()[:12]
    path = cache / f"kb-{backend_name}-{digest}.npy"
    if path.exists():
        return np.load(path)
    backend = build_backend(backend_name)
    batch = 64
    parts = [
        backend.embed(texts[i : i + batch], "passage")
        for i in tqdm(range(0, len(texts), batch), desc=f"embed ({backend_name})", unit="batch")
    ]
    vectors = np.concatenate(parts).astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def upsert_facts_service(addr: str, documents: list[Document]) -> int:
    """Each document's statement facts into the retriever service, as the ingester stores them."""
    from weaverbird_common.facts.extract import extract_facts
    from weaverbird_common.facts.proto import to_proto

    stored = 0
    with grpc.insecure_channel(addr, options=[("grpc.max_send_message_length", 64 << 20)]) as channel:
        stub = retriever_pb2_grpc.RetrieverServiceStub(channel)
        for doc in tqdm(documents, desc="facts (retriever service)", unit="doc"):
            facts = extract_facts(doc)
            request = retriever_pb2.UpsertFactsRequest(document_id=doc.document_id, facts=[to_proto(f) for f in facts])
            stored += stub.UpsertFacts(request, timeout=600).upserted
    return stored


def upsert_service(addr: str, payloads: list[dict], vectors: np.ndarray, language: str = "en") -> int:
    """Loads chunks into the retriever service at `addr`; returns the collection's point count."""
    with grpc.insecure_channel(addr, options=[("grpc.max_send_message_length", 64 << 20)]) as channel:
        stub = retriever_pb2_grpc.RetrieverServiceStub(channel)
        points = 0
        for start in tqdm(range(0, len(payloads), 512), desc="upsert (retriever service)", unit="batch"):
            chunks = []
            for payload, vec in zip(payloads[start : start + 512], vectors[start : start + 512], strict=True):
                fields = {k: v for k, v in payload.items() if k != "text"}
                chunks.append(
                    retriever_pb2.Chunk(
                        vector=vec.tolist(),
                        text=payload["text"],
                        payload=common_pb2.ChunkPayload(origin=common_pb2.ORIGIN_LOCAL, language=language, **fields),
                    )
                )
            points = stub.Upsert(retriever_pb2.UpsertRequest(chunks=chunks), timeout=600).collection_points
        return points
