"""How and when a document came into the knowledge base, carried with the document to the retriever.

The loaders return a plain `Document`; the ingester wraps it in a `SourcedDocument` that also holds its
`Provenance`, so the writer and the KnowledgeBase protocol keep their shapes (a writer or knowledge base
that knows nothing of provenance still works, it just stores none).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from weaverbird.v1 import retriever_pb2
from weaverbird_common.docs.documents import Document
from weaverbird_common.ingest_messages import IngestMessage

DocumentOrigin = Literal["local", "web", "user"]

_ORIGINS: dict[DocumentOrigin, int] = {
    "local": retriever_pb2.DOCUMENT_ORIGIN_LOCAL,
    "web": retriever_pb2.DOCUMENT_ORIGIN_WEB,
    "user": retriever_pb2.DOCUMENT_ORIGIN_USER,
}


@dataclass(frozen=True)
class Provenance:
    """local: a file or text; web: found by web search for `question` with `best_score`; user: a saved URL.

    `added_at` is set by the writer when it stores the document (None until then)."""

    origin: DocumentOrigin
    added_at: datetime | None = None
    question: str = ""
    best_score: float | None = None
    found_at: datetime | None = None

    @classmethod
    def of_message(cls, message: IngestMessage) -> Provenance:
        """What an ingest-topic message tells: a page the web search found, or one a user queued."""
        if message.origin == "user":
            return cls("user")
        return cls("web", question=message.question or "", best_score=message.best_score, found_at=message.found_at)

    def to_proto(self) -> retriever_pb2.DocumentProvenance:
        proto = retriever_pb2.DocumentProvenance(origin=_ORIGINS[self.origin], question=self.question)  # type: ignore[arg-type]
        if self.best_score is not None:
            proto.best_score = self.best_score
        if self.added_at is not None:
            proto.added_at.FromDatetime(self.added_at.astimezone(UTC))
        if self.found_at is not None:
            proto.found_at.FromDatetime(self.found_at.astimezone(UTC))
        return proto


@dataclass(slots=True)
class SourcedDocument(Document):
    """A loaded document with its provenance."""

    provenance: Provenance | None = None


def with_provenance(doc: Document, provenance: Provenance) -> SourcedDocument:
    fields = {f.name: getattr(doc, f.name) for f in dataclasses.fields(Document)}
    return SourcedDocument(**fields, provenance=provenance)


def provenance_of(doc: Document) -> Provenance | None:
    return doc.provenance if isinstance(doc, SourcedDocument) else None


def stamped(doc: Document, now: datetime | None = None) -> SourcedDocument:
    """doc with its provenance's added_at set to now (the time of this write); a document that came
    without provenance is a file or text (local) unless it is a web page (a URL a user added)."""
    provenance = provenance_of(doc) or Provenance("user" if doc.origin == "web" else "local")
    return with_provenance(doc, dataclasses.replace(provenance, added_at=now or datetime.now(UTC)))
