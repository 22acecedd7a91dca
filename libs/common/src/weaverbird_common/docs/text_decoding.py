"""Bytes to clean text: encoding detection (UTF-8/16, GBK and others) and whitespace the extractors leave."""

from __future__ import annotations

import re

from weaverbird_common.docs.extraction_errors import UnreadableDocument


def decode_text(data: bytes) -> str:
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


def normalise_text(text: str) -> str:
    """Unify whitespace the extractors leave behind so the chunker sees clean lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    # NBSP and thin spaces appear in PDFs between numbers and currency signs.
    text = re.sub(r"[\u00a0\u2000-\u200a\u202f\u205f]", " ", text)
    text = re.sub(r"[\u200b\ufeff]", "", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()
