"""What clients see of a document's name and origin: file names made safe, sources made relative.

An upload's file name is the client's text: it may carry NUL and other control characters, bidi
overrides that disguise an extension, or path parts ("../../etc/passwd", "C:\\Users\\x\\a.pdf"). It
becomes a title and a source, so it is reduced to a clean base name first. A source read from disk
(`weaverbird ingest /srv/kb/x.md`) must not show the server's layout to every client that lists
documents: paths are shown relative, with at most two parent folders; URLs are shown without any
user name or password they carried.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath
from urllib.parse import urlsplit, urlunsplit

MAX_NAME_CHARS = 255
# Parent folders kept in front of a file name when an absolute path is shown.
SHOWN_PARENTS = 2
FALLBACK_NAME = "document"

_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_DRIVE_RE = re.compile(r"^[A-Za-z]:")
_SPACES_RE = re.compile(r"\s+")


def clean_line(text: str) -> str:
    """`text` without control, format (bidi overrides, zero-width) or unassigned characters, on one
    line with single spaces."""
    kept = "".join(" " if ch in "\t\r\n" else ch for ch in text if ch in "\t\r\n" or not _is_invisible(ch))
    return _SPACES_RE.sub(" ", kept).strip()


def _is_invisible(ch: str) -> bool:
    return unicodedata.category(ch).startswith("C")  # Cc, Cf, Cs, Co, Cn


def _parts(path: str) -> list[str]:
    """Path parts of either separator, without empty, "." and ".." parts or a drive letter."""
    path = _DRIVE_RE.sub("", path.replace("\\", "/"))
    return [p for p in (clean_line(part) for part in path.split("/")) if p not in ("", ".", "..")]


def safe_filename(name: str) -> str:
    """The base name of `name`, cleaned (see clean_line) and at most MAX_NAME_CHARS; FALLBACK_NAME
    when nothing usable is left. Keeps the extension when shortening."""
    parts = _parts(name)
    base = parts[-1] if parts else ""
    base = base.lstrip(".") or FALLBACK_NAME  # no hidden files, no "..."
    if len(base) > MAX_NAME_CHARS:
        _, dot, ext = base.rpartition(".")
        keep = ext if dot and len(ext) <= 10 else ""
        base = base[: MAX_NAME_CHARS - len(keep) - 1] + "." + keep if keep else base[:MAX_NAME_CHARS]
    return base


def display_source(source: str) -> str:
    """How a document's source is stored and shown: a URL without credentials, or a relative path
    (an absolute one keeps only its last SHOWN_PARENTS folders and the file name)."""
    source = source.strip()
    if _URL_RE.match(source):
        parts = urlsplit(source)
        host = parts.netloc.rpartition("@")[2]  # drops "user:password@"
        return clean_line(urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)))
    absolute = source.startswith(("/", "\\")) or bool(_DRIVE_RE.match(source))
    parts = _parts(source)
    if not parts:
        return FALLBACK_NAME
    parts[-1] = safe_filename(parts[-1])
    if absolute:
        parts = parts[-(SHOWN_PARENTS + 1) :]
    return str(PurePosixPath(*parts))
