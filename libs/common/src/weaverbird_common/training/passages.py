"""KB passages to train on: every chunk of every document, as the ingester cuts and embeds it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from weaverbird_common.docs.chunker import chunk_document, embedding_text
from weaverbird_common.docs.documents import Document


@dataclass(frozen=True)
class Passage:
    id: str  # "<document_id>:<chunk index>"
    document_id: str
    title: str
    company: str  # the document's company, else its id: negatives from "the same company" stay in it
    page: int  # 0 where the document has no pages
    heading: str
    text: str  # the chunk under its title and heading: what retrieval embeds and the reranker reads
    body: str  # the chunk alone


def document_passages(documents: Iterable[Document]) -> list[Passage]:
    out: list[Passage] = []
    for doc in documents:
        for chunk in chunk_document(doc):
            out.append(
                Passage(
                    id=f"{doc.document_id}:{chunk.index}",
                    document_id=doc.document_id,
                    title=doc.title,
                    company=doc.company or doc.document_id,
                    page=chunk.page or 0,
                    heading=chunk.heading,
                    text=embedding_text(doc, chunk),
                    body=chunk.text,
                )
            )
    return out
