"""A web page as the loader wants it: a file name that tells its format, and the Document it becomes
(titled by its URL when it has no title, filed under the company the question named)."""

from __future__ import annotations

import asyncio
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from weaverbird_common.docs.documents import Document
from weaverbird_common.docs.loaders import EXTENSIONS, load_bytes
from weaverbird_common.ingest_messages import IngestMessage

from weaverbird_ingester.provenance import Provenance, with_provenance


def looks_like_html(head: str) -> bool:
    head = head[:2048].lstrip().lower()
    return head.startswith("<!doctype html") or any(tag in head for tag in ("<html", "<head", "<body"))


def filename_for_text(text: str) -> str:
    """The placeholder file name of page text sent inline: HTML if it looks like it, else plain text."""
    return "page.html" if looks_like_html(text) else "page.txt"


def filename_for_url(url: str, body: bytes) -> str:
    """A file name whose extension tells load_bytes the format: the URL's, else sniffed HTML or text."""
    suffix = PurePosixPath(urlsplit(url).path).suffix.lower()
    if suffix in EXTENSIONS:
        return f"page{suffix}"
    return filename_for_text(body[:2048].decode("utf-8", errors="ignore"))


async def page_document(message: IngestMessage, source: str, data: bytes, filename: str) -> Document:
    """The Document of a published page, with the question and score that brought it in; raises
    UnreadableDocument."""
    # HTML extraction is CPU work; a thread keeps the loop (and the consumer's stop()) responsive.
    doc = await asyncio.to_thread(
        load_bytes,
        data,
        filename,
        source=source,
        title=message.title or None,
        language=message.language or None,
        published=message.published or None,
        origin="web",
    )
    if message.company:  # the orchestrator filed the page under the company its question named
        doc.company = message.company
    if not message.title and doc.title == PurePosixPath(filename).stem:
        # The loader fell back to our placeholder file name ("page"); the URL says more.
        doc.title = source
    # The question and score that brought the page in are shown by ListDocuments / GetDocument.
    return with_provenance(doc, Provenance.of_message(message))
