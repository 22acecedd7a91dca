"""PDF pages as text: pypdf's layout mode (table rows kept on one line), decryption of owner-locked
filings, and running headers and footers removed."""

from __future__ import annotations

import io
import logging
import re
from collections import Counter
from typing import Any, Literal

from weaverbird_common.docs.documents import Page
from weaverbird_common.docs.extraction_errors import UnreadableDocument
from weaverbird_common.docs.text_decoding import normalise_text

log = logging.getLogger(__name__)

PdfMode = Literal["layout", "plain"]


def pdf_pages(data: bytes, mode: PdfMode) -> tuple[list[Page], str]:
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
            texts.append(normalise_text(_page_text(page) if mode == "layout" else page.extract_text() or ""))
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
