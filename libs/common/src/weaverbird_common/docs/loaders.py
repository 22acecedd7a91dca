"""Turn raw files (PDF, HTML, Markdown, plain text) into Documents with pages and metadata.

This module picks the format, enforces the extraction budget (size, markup, time in a worker
process) and assembles the Document; the formats themselves are read by pdf_text and html_text.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path, PurePosixPath
from typing import Literal

import yaml

from weaverbird_common.docs.budgets import ExtractionBudget, default_budget

# Re-exported: callers name documents and catch loading errors through the loaders.
from weaverbird_common.docs.document_ids import canonical_source as canonical_source
from weaverbird_common.docs.document_ids import document_id_for
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.docs.entities import document_entities
from weaverbird_common.docs.extraction_errors import DocumentTooLarge as DocumentTooLarge
from weaverbird_common.docs.extraction_errors import ExtractionCancelled as ExtractionCancelled
from weaverbird_common.docs.extraction_errors import ExtractionTimedOut as ExtractionTimedOut
from weaverbird_common.docs.extraction_errors import MarkupTooComplex as MarkupTooComplex
from weaverbird_common.docs.extraction_errors import OverBudget as OverBudget
from weaverbird_common.docs.extraction_errors import UnreadableDocument as UnreadableDocument
from weaverbird_common.docs.html_text import html_text
from weaverbird_common.docs.metadata import metadata_from_filename
from weaverbird_common.docs.pdf_text import PdfMode, pdf_pages
from weaverbird_common.docs.text_decoding import decode_text, normalise_text
from weaverbird_common.docs.workers import WorkerCancelled, WorkerCrashed, WorkerTimedOut, shared_pool

Format = Literal["pdf", "html", "markdown", "text"]

EXTENSIONS: dict[str, Format] = {
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
}


# Plain text and Markdown up to this size parse in well under a second (linear work, no markup), so
# they take the workers' light lane and never wait behind PDFs or HTML (docs.workers).
LIGHT_TEXT_BYTES = 256 * 1024


def load_path(path: Path | str, **overrides: object) -> Document:
    """Load a file from disk; `source` defaults to the path as given. See load_bytes for overrides."""
    path = Path(path)
    overrides.setdefault("source", str(path))
    return load_bytes(path.read_bytes(), path.name, **overrides)  # type: ignore[arg-type]


def load_text(text: str, filename: str, **overrides: object) -> Document:
    """Load text sent inline (AddDocumentRequest.text); `.md`/`.html` names keep their format."""
    fmt = EXTENSIONS.get(_suffix(filename))
    if fmt not in ("markdown", "html"):
        filename = f"{filename}.txt"  # any other name, even "x.pdf", is plain text here
    return load_bytes(text.encode("utf-8"), filename, **overrides)  # type: ignore[arg-type]


def load_bytes(
    data: bytes,
    filename: str,
    *,
    source: str | None = None,
    title: str | None = None,
    company: str | None = None,
    year: int | None = None,
    quarter: int | None = None,
    language: str | None = None,
    published: str | None = None,
    origin: str = "local",
    pdf_mode: PdfMode = "layout",
    budget: ExtractionBudget | None = None,
    cancel: threading.Event | None = None,
    principal: str = "",
) -> Document:
    """Parse `data` by its name (or content) into a Document; raises UnreadableDocument.

    Overrides win over what the file name and content say. Empty values ("" / 0 / None) count as
    unset, matching proto3 defaults, so the gRPC layer can pass request fields straight through.
    `pdf_mode="plain"` halves PDF extraction time at the cost of table rows (see _page_text).

    `budget` (default: DOCS_* from the environment) bounds the work: too large a file or too many
    HTML tags raise DocumentTooLarge / MarkupTooComplex before any parsing, and a parse running past
    `budget.timeout_s` is killed with its worker process and raises ExtractionTimedOut.

    `cancel`: set it when the caller gives up (a client that went away) and the parse is stopped at
    once (ExtractionCancelled). `principal`: who asked; each may hold only a share of the workers.
    """
    if not data or not data.strip():
        raise UnreadableDocument("empty file")
    budget = budget or default_budget()
    fmt = _detect_format(data, filename)
    check_budget(data, fmt, budget)
    args = (data, filename, fmt, source, title, company, year, quarter, language, published, origin, pdf_mode)
    if budget.timeout_s <= 0:
        return _load(*args)
    try:
        return shared_pool(budget.workers).run(
            _load,
            *args,
            timeout_s=budget.timeout_s,
            cancel=cancel,
            principal=principal,
            light=fmt in ("text", "markdown") and len(data) <= LIGHT_TEXT_BYTES,
            size_bytes=len(data),
        )
    except WorkerCancelled as exc:
        raise ExtractionCancelled(str(exc)) from exc
    except WorkerTimedOut as exc:
        raise ExtractionTimedOut(
            f"extraction took longer than {budget.timeout_s:g}s and was stopped", budget.timeout_s
        ) from exc
    except WorkerCrashed as exc:
        raise UnreadableDocument(f"the {fmt} parser crashed on this file ({exc})") from exc


def check_budget(data: bytes, fmt: Format, budget: ExtractionBudget) -> None:
    """Cheap refusals before parsing: the size limit of `fmt`, and the tag count of HTML."""
    limit = budget.max_bytes(fmt)
    if len(data) > limit:
        raise DocumentTooLarge(f"{fmt} file has {_mib(len(data))}; the limit is {_mib(limit)}", limit)
    if fmt == "html" and _count_tags(data, budget.max_html_tags + 1) > budget.max_html_tags:
        raise MarkupTooComplex(
            f"HTML has more than {budget.max_html_tags:,} tags; the limit is {budget.max_html_tags:,}",
            budget.max_html_tags,
        )


_START_TAG_RE = re.compile(rb"<[A-Za-z]")


def _count_tags(data: bytes, stop_at: int) -> int:
    """Start tags in `data`, counting no further than `stop_at` (so a huge page costs no more)."""
    count = 0
    for _ in _START_TAG_RE.finditer(data):
        count += 1
        if count >= stop_at:
            break
    return count


def _mib(size: float) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _load(
    data: bytes,
    filename: str,
    fmt: Format,
    source: str | None,
    title: str | None,
    company: str | None,
    year: int | None,
    quarter: int | None,
    language: str | None,
    published: str | None,
    origin: str,
    pdf_mode: PdfMode,
) -> Document:
    """The parse itself, without budgets (run in a worker process by load_bytes)."""
    found_title = ""
    found_date = ""
    front: dict[str, object] = {}
    if fmt == "pdf":
        pages, found_title = pdf_pages(data, pdf_mode)
    elif fmt == "html":
        text, found_title, found_date = html_text(data)
        pages = [Page(None, text)]
    else:
        text = normalise_text(decode_text(data))
        if fmt == "markdown":
            front, text = _split_front_matter(text)
            heading = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.MULTILINE)
            found_title = heading.group(1) if heading else ""
        pages = [Page(None, text)]
    if not any(page.text.strip() for page in pages):
        hint = " (scanned PDF? OCR is not supported)" if fmt == "pdf" else ""
        raise UnreadableDocument(f"no extractable text{hint}")

    src = source or filename
    all_text = "\n".join(page.text for page in pages)
    # Front matter, then the file name, then the first pages; request overrides win over all three.
    found = document_entities(all_text, filename, front)
    year = year or found.year
    return Document(
        document_id=document_id_for(src),
        title=title or str(front.get("title") or "") or found_title or _stem(filename) or src,
        source=src,
        pages=pages,
        language=language or found.language,
        company=company or found.company,
        year=year,
        quarter=quarter or (found.quarter if year == found.year else None),
        published=published
        or str(front.get("published") or "")
        or metadata_from_filename(filename).published
        or found_date
        or found.dated,
        origin=origin,
        doc_type=found.doc_type,
        aliases=list(found.aliases),
    )


_FRONT_MATTER_RE = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def _split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """YAML front matter (title, company, year, quarter, language, published; doc_type, aliases and
    tickers for the catalog) and the body after it.

    Malformed front matter is kept as text rather than failing the document.
    """
    match = _FRONT_MATTER_RE.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(data, dict):
        return {}, text
    return data, text[match.end() :]


def _suffix(filename: str) -> str:
    return PurePosixPath(filename.replace("\\", "/")).suffix.lower()


def _stem(filename: str) -> str:
    return PurePosixPath(filename.replace("\\", "/")).stem


def _detect_format(data: bytes, filename: str) -> Format:
    """Content first for PDFs (the header is unambiguous), then the extension, then HTML sniffing."""
    # The PDF spec allows junk before the header; readers accept it within the first 1 KiB.
    if b"%PDF-" in data[:1024]:
        return "pdf"
    ext = _suffix(filename)
    if ext == ".pdf":
        raise UnreadableDocument("not a PDF (no %PDF header): corrupt or mislabelled file")
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    head = data[:2048].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head:
        return "html"
    raise UnreadableDocument(f"unsupported file type {ext or '(no extension)'!r}")
