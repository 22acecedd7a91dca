"""Stable document ids: a document is named by its canonical source (file name or normalised URL)."""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import urlsplit, urlunsplit


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
