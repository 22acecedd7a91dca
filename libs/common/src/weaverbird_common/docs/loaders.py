"""Turn raw files (PDF, HTML, Markdown, plain text) into Documents with pages and metadata."""

from __future__ import annotations

import hashlib
import io
import logging
import re
import threading
from collections import Counter
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml

from weaverbird_common.docs.budgets import ExtractionBudget, default_budget
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.docs.entities import document_entities
from weaverbird_common.docs.metadata import metadata_from_filename
from weaverbird_common.docs.workers import WorkerCancelled, WorkerCrashed, WorkerTimedOut, shared_pool

log = logging.getLogger(__name__)

Format = Literal["pdf", "html", "markdown", "text"]
PdfMode = Literal["layout", "plain"]

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


class UnreadableDocument(Exception):
    """The bytes cannot be turned into text (corrupt, encrypted, scanned, empty or unsupported)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OverBudget(UnreadableDocument):
    """The document exceeds an extraction budget (docs.budgets); the message names the limit.

    A subclass of UnreadableDocument, so callers that only know that class still refuse it cleanly.
    """

    def __init__(self, reason: str, limit: float) -> None:
        super().__init__(reason)
        self.limit = limit

    def __reduce__(self) -> tuple[type[OverBudget], tuple[str, float]]:
        return type(self), (self.reason, self.limit)  # survives the trip back from a worker process


class DocumentTooLarge(OverBudget):
    """More bytes than its format's limit: the request is at fault (INVALID_ARGUMENT)."""


class MarkupTooComplex(OverBudget):
    """HTML with more tags than max_html_tags, refused before parsing (INVALID_ARGUMENT)."""


class ExtractionTimedOut(OverBudget):
    """Parsing ran past timeout_s and was killed (RESOURCE_EXHAUSTED: it costs more than we give)."""


class ExtractionCancelled(Exception):
    """The caller cancelled the parse (its client went away); the worker doing it was killed."""


# Plain text and Markdown up to this size parse in well under a second (linear work, no markup), so
# they take the workers' light lane and never wait behind PDFs or HTML (docs.workers).
LIGHT_TEXT_BYTES = 256 * 1024


# ---------------------------------------------------------------------------------------------
# Document ids
# ---------------------------------------------------------------------------------------------


def canonical_source(source: str) -> str:
    """The part of a source that identifies a document: the file name, or the normalised URL.

    Local files are keyed by file name only (``financebench/ADOBE_2022_10K.pdf`` and
    ``/data/ADOBE_2022_10K.pdf`` are the same filing): ids then survive moving the data folder,
    another checkout, or uploading the bytes with just the name, and re-adding a file replaces its
    chunks as the API promises. The price is that two different files with the same name in
    different folders replace each other, which is acceptable for a knowledge base of filings.
    URLs keep host, path and query (they identify pages) but drop the fragment and case of scheme
    and host, which never change the page.
    """
    source = source.strip()
    if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*://", source):
        parts = urlsplit(source)
        path = parts.path if parts.path not in ("", "/") else "/"
        return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))
    # Either separator: a Windows client may send "C:\\kb\\a.pdf" to a Linux server.
    name = PureWindowsPath(source).name if "\\" in source else PurePosixPath(source).name
    return name or source


def document_id_for(source: str) -> str:
    """Stable id of the document at `source`: 16 hex digits of SHA-1 of its canonical source.

    A hash rather than the name itself keeps ids short, of one shape for files and URLs and safe
    in any store's id field; 64 bits make a collision in one knowledge base vanishingly unlikely.
    """
    return hashlib.sha1(canonical_source(source).encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------------------------


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
        pages, found_title = _load_pdf(data, pdf_mode)
    elif fmt == "html":
        text, found_title, found_date = _load_html(data)
        pages = [Page(None, text)]
    else:
        text = _normalise_text(_decode(data))
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


# ---------------------------------------------------------------------------------------------
# Format detection and decoding
# ---------------------------------------------------------------------------------------------


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


def _decode(data: bytes) -> str:
    """Bytes to text: UTF-8/UTF-16 by BOM or validity, else a detected charset (GBK is common)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    if b"\x00" in data[:4096]:
        raise UnreadableDocument("binary content in a text file")
    try:
        from charset_normalizer import from_bytes  # shipped with trafilatura's requirements

        best = from_bytes(data).best()
        if best is not None:
            return str(best)
    except ImportError:  # pragma: no cover - only if trafilatura's dependencies change
        pass
    return data.decode("gb18030", errors="replace")


def _normalise_text(text: str) -> str:
    """Unify whitespace the extractors leave behind so the chunker sees clean lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    # NBSP and thin spaces appear in PDFs between numbers and currency signs.
    text = re.sub(r"[\u00a0\u2000-\u200a\u202f\u205f]", " ", text)
    text = re.sub(r"[\u200b\ufeff]", "", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# ---------------------------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------------------------


def _load_pdf(data: bytes, mode: PdfMode) -> tuple[list[Page], str]:
    """Pages with 1-based numbers (pypdf index + 1) and the metadata title, if it is a real one."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    try:
        # pypdf raises many exception types on damaged files; all mean the same to the caller.
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            # Most filings are encrypted with an owner password only: an empty user password opens
            # them for reading. pypdf already tried it; a falsy result means a real password.
            if not reader.decrypt(""):
                raise UnreadableDocument("encrypted PDF: a password is required")
        page_objects = list(reader.pages)
    except UnreadableDocument:
        raise
    except DependencyError as exc:
        # AES-encrypted PDFs (Adobe's 10-K, for one) need the optional `cryptography` package.
        raise UnreadableDocument(f"encrypted PDF needs pypdf's crypto extra: {exc}") from exc
    except FileNotDecryptedError as exc:
        raise UnreadableDocument("encrypted PDF: a password is required") from exc
    except Exception as exc:
        raise UnreadableDocument(f"corrupt PDF: {type(exc).__name__}: {exc}") from exc
    if not page_objects:
        raise UnreadableDocument("PDF has no pages")

    texts: list[str] = []
    for index, page in enumerate(page_objects):
        try:
            texts.append(_normalise_text(_page_text(page) if mode == "layout" else page.extract_text() or ""))
        except Exception as exc:  # one bad page should not lose the other 99
            log.warning("pdf page %d unreadable: %s: %s", index + 1, type(exc).__name__, exc)
            texts.append("")
    texts = _strip_repeated_margins(texts)
    pages = [Page(index + 1, text) for index, text in enumerate(texts)]

    title = ""
    try:
        raw = (reader.metadata or {}).get("/Title")
        title = str(raw).strip() if raw else ""
    except Exception:  # broken info dictionaries are common and never worth failing the file for
        title = ""
    return pages, title if _is_real_title(title) else ""


def _page_text(page: Any) -> str:
    """Text of one page, in pypdf's layout mode unless the page is set in several columns.

    Layout mode keeps each table row on one line with its label and puts column headers above
    their numbers; plain mode often breaks rows apart ("Net product sales\n$ 118,573 ...") and
    loses paragraph breaks. Layout mode costs about 1.5-2x the time and renders two-column pages
    side by side, hence the fallback.
    """
    try:
        text = page.extract_text(extraction_mode="layout") or ""
    except Exception as exc:  # layout mode is newer and trips on some fonts; plain mode may not
        log.debug("layout extraction failed, using plain: %s", exc)
        text = ""
    if not text.strip() or _looks_multi_column(text):
        return page.extract_text() or ""
    return "\n".join(_tidy_layout_line(line) for line in text.split("\n"))


_NUMBER_RE = re.compile(r"(?<![\w.])\(?[$€£¥]?\d[\d,]*(?:\.\d+)?\)?%?(?![\w.])")


def _tidy_layout_line(line: str) -> str:
    """Drop layout padding: single spaces in prose (justified text is padded), two in table rows."""
    line = line.strip()
    if len(_NUMBER_RE.findall(line)) >= 2:
        return re.sub(r"\s{2,}", "  ", line)  # keep a visible gap between table columns
    return re.sub(r"\s+", " ", line)


def _looks_multi_column(text: str) -> bool:
    """True when most long prose lines have a wide gap near the middle, i.e. two text columns."""
    lines = [line.rstrip() for line in text.split("\n")]
    width = max((len(line) for line in lines), default=0)
    if width < 60:
        return False
    long_lines = [line for line in lines if len(line) > 0.6 * width and len(_NUMBER_RE.findall(line)) < 2]
    if len(long_lines) < 8:
        return False
    gapped = sum(1 for line in long_lines if re.search(r"\S {4,}\S", line[int(0.3 * width) : int(0.7 * width)]))
    return gapped > 0.5 * len(long_lines)


def _is_real_title(title: str) -> bool:
    """Reject generator junk: accession numbers, 'Microsoft Word - x.docx', 'untitled'."""
    if not (3 <= len(title) <= 200) or not re.search(r"[A-Za-z\u4e00-\u9fff]{3}", title):
        return False
    lowered = title.lower()
    return not (
        lowered.startswith(("microsoft word", "untitled", "document"))
        or re.search(r"\.(docx?|pdf|xlsx?|pptx?|indd|rtf)$", lowered)
    )


_MARGIN_LINES = 3


def _margin_key(line: str) -> str:
    # Digits vary from page to page ("Page 12 of 80", "54"); the words around them do not.
    return re.sub(r"\d+", "#", line.strip().lower())


def _strip_repeated_margins(texts: list[str]) -> list[str]:
    """Drop running headers/footers ("Table of Contents", page numbers) repeated on many pages.

    They would otherwise end up in almost every chunk and make unrelated pages look alike. Only
    lines at the very top or bottom are removed, and only while they keep matching, so a table's
    last row is never taken out of the middle of a page.
    """
    if len(texts) < 4:
        return texts
    counts: Counter[str] = Counter()
    for text in texts:
        lines = [line for line in text.split("\n") if line.strip()]
        counts.update({_margin_key(line) for line in lines[:_MARGIN_LINES] + lines[-_MARGIN_LINES:]})
    threshold = max(3, int(0.3 * len(texts)))
    repeated = {key for key, count in counts.items() if count >= threshold}
    if not repeated:
        return texts
    cleaned: list[str] = []
    for text in texts:
        lines = text.split("\n")
        while lines and (not lines[0].strip() or _margin_key(lines[0]) in repeated):
            lines.pop(0)
        while lines and (not lines[-1].strip() or _margin_key(lines[-1]) in repeated):
            lines.pop()
        cleaned.append("\n".join(lines))
    return cleaned


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------


def _load_html(data: bytes) -> tuple[str, str, str]:
    """Main text as Markdown (headings and tables survive for the chunker), <title>, date."""
    import trafilatura

    html = _decode(data)
    text = None
    try:
        # Markdown output keeps "#" headings and pipe tables; comments under articles are noise.
        text = trafilatura.extract(
            html,
            output_format="markdown",
            include_tables=True,
            include_formatting=True,
            include_comments=False,
            include_links=False,
            include_images=False,
            favor_recall=True,
        )
    except Exception as exc:  # trafilatura can trip on odd markup; the fallback below still works
        log.warning("trafilatura failed: %s: %s", type(exc).__name__, exc)
    if text:
        text = _strip_emphasis(text)
    else:
        text = _html_fallback_text(html)

    title, date = "", ""
    try:
        from lxml import html as lxml_html

        tree = lxml_html.fromstring(html)
        title = " ".join(" ".join(tree.xpath("//title//text()")).split())
    except Exception:  # no parsable <title> is fine; trafilatura's guess is used instead
        title = ""
    try:
        meta = trafilatura.extract_metadata(html)
        if meta is not None:
            title = title or (meta.title or "")
            date = meta.date or ""
    except Exception:
        pass
    return _normalise_text(text), title, date


def _strip_emphasis(markdown: str) -> str:
    """Remove **bold** / *italic* markers: they only add noise tokens to embeddings."""
    markdown = re.sub(r"\*\*(.+?)\*\*", r"\1", markdown)
    markdown = re.sub(r"__(.+?)__", r"\1", markdown)
    return re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", markdown)


def _html_fallback_text(html: str) -> str:
    """Visible text without scripts/styles, for pages trafilatura finds no main content in."""
    from lxml import html as lxml_html

    try:
        tree = lxml_html.fromstring(html)
    except Exception as exc:
        raise UnreadableDocument(f"unparsable HTML: {exc}") from exc
    for element in tree.xpath("//script|//style|//noscript|//template|//head"):
        element.drop_tree()
    blocks = tree.xpath(
        "//*[self::p or self::li or self::h1 or self::h2 or self::h3 or self::h4 or self::td or self::pre]"
    )
    if blocks:
        return "\n\n".join(" ".join(b.text_content().split()) for b in blocks if b.text_content().strip())
    return tree.text_content()
