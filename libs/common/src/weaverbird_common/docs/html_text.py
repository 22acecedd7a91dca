"""An HTML page's main text as Markdown (headings and tables kept for the chunker), its title and date."""

from __future__ import annotations

import logging
import re

from weaverbird_common.docs.extraction_errors import UnreadableDocument
from weaverbird_common.docs.text_decoding import decode_text, normalise_text

log = logging.getLogger(__name__)


def html_text(data: bytes) -> tuple[str, str, str]:
    """Main text as Markdown (headings and tables survive for the chunker), <title>, date."""
    import trafilatura

    html = decode_text(data)
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
    return normalise_text(text), title, date


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
