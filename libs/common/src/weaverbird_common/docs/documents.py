"""Plain data types passed between the ingester's loaders, chunker and service."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Page:
    """One page of a document; PDFs have many, other formats a single page without a number."""

    # 1-based like the page labels readers see (pypdf index + 1); None for page-less formats.
    number: int | None
    text: str


@dataclass(slots=True)
class Document:
    """A loaded document: its text by page plus the metadata stored with every chunk."""

    document_id: str
    title: str
    source: str
    pages: list[Page]
    language: str
    company: str
    year: int | None
    quarter: int | None
    published: str
    origin: str = "local"
    # Kind of document ("10K", "EARNINGS", "ANNUAL_REPORT") and the other names of `company` it uses
    # (registrant, tickers, 简称, stock code): read at ingest (docs.entities), they feed the KB catalog.
    doc_type: str = ""
    aliases: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """All page texts joined, for language detection and page-less consumers."""
        return "\n\n".join(page.text for page in self.pages)

    @property
    def page_count(self) -> int:
        """Pages read; 0 for page-less formats, as AddDocumentResponse.pages expects."""
        return sum(1 for page in self.pages if page.number is not None)


@dataclass(slots=True)
class Chunk:
    """A retrievable piece of a document, small enough to embed in one pass."""

    document_id: str
    index: int
    text: str
    page: int | None
    # Section the chunk sits under (may be a "Part > Item" trail); not part of `text`.
    heading: str = ""
    # Estimated tokens of `text` (see chunker.count_tokens); kept so callers need not recount.
    tokens: int = field(default=0, compare=False)
