"""Scores web chunks against the question and picks the documents worth adding to the knowledge base."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from weaverbird_common.docs.chunker import embedding_text
from weaverbird_common.docs.documents import Document
from weaverbird_common.ingest_messages import IngestMessage
from weaverbird_common.questions import filters_from_question

from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.web import WebGathering

EmbedPassages = Callable[[Sequence[str]], Awaitable[list[list[float]]]]


@dataclass(frozen=True)
class WebEvidence:
    """The top K web passages and the web documents that cleared the threshold."""

    passages: list[Passage]
    worth_keeping: list[tuple[Document, float]]  # (document, its best passage score)


async def score_web_chunks(
    gathering: WebGathering,
    query_vector: Sequence[float],
    embed_passages: EmbedPassages,
    *,
    top_k: int,
    threshold: float,
    batch: int = 64,
) -> WebEvidence:
    """Embeds web chunks exactly like local ones (same encoder, same title/heading context) and ranks them.

    A document is worth keeping when any of its passages scores at least `threshold`: that is the
    signal that it answers questions the knowledge base could not.
    """
    if not gathering.chunks:
        return WebEvidence([], [])
    texts = [embedding_text(doc, chunk) for doc, chunk in gathering.chunks]
    vectors: list[list[float]] = []
    for start in range(0, len(texts), batch):
        vectors.extend(await embed_passages(texts[start : start + batch]))
    scores = np.asarray(vectors, dtype=np.float32) @ np.asarray(query_vector, dtype=np.float32)

    best_by_doc: dict[str, tuple[Document, float]] = {}
    passages: list[Passage] = []
    for (doc, chunk), score in zip(gathering.chunks, scores.tolist(), strict=True):
        passages.append(
            Passage(
                id=f"{doc.document_id}:{chunk.index}",
                text=chunk.text,
                score=float(score),
                document_id=doc.document_id,
                title=doc.title,
                source=doc.source,
                page=0,
                origin="web",
                heading=chunk.heading,
            )
        )
        if doc.document_id not in best_by_doc or score > best_by_doc[doc.document_id][1]:
            best_by_doc[doc.document_id] = (doc, float(score))
    passages.sort(key=lambda p: p.score, reverse=True)
    keep = [(doc, best) for doc, best in best_by_doc.values() if best >= threshold]
    return WebEvidence(passages[:top_k], keep)


def page_names_company(doc: Document, company: str) -> bool:
    """Whether the page's title or text names `company`: whole words and known aliases, as questions
    are read, so "3M" never matches inside "2023 Management" nor "INTEL" inside "intelligence"."""
    return filters_from_question(f"{doc.title}\n{doc.text}", [company]).get("company") == company


def ingest_message(doc: Document, best_score: float, question: str, company: str | None = None) -> IngestMessage:
    """The Kafka message that asks the ingester to add a whole web document to the knowledge base.

    `company` (the question's company filter) is kept only when the page names that company, so a
    search result about someone else is never filed under it."""
    return IngestMessage(
        company=company if company and page_names_company(doc, company) else None,
        url=doc.source,
        title=doc.title,
        text=doc.text,
        best_score=best_score,
        question=question,
        found_at=datetime.now(UTC),
        origin="web",
        language=doc.language or None,
        published=doc.published or None,
    )
