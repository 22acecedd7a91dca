"""What POST /api/documents/upload accepts: the ingester's file types, a size limit enforced while the
body arrives (a too-large upload is refused before it is read whole, not after), and a file name cleaned
of path parts and control characters before it becomes a source or a title."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import PurePosixPath

from starlette.types import Message, Receive
from weaverbird_common.docs.loaders import EXTENSIONS

from weaverbird_gateway.errors import GatewayError

# Declared content types each ingester format may arrive with. Browsers and tools often send
# application/octet-stream (or nothing) for .md and .txt, so a generic type is accepted for every
# extension; the ingester reads the format from the extension and the bytes (a PDF needs %PDF-).
_CONTENT_TYPES: dict[str, frozenset[str]] = {
    "pdf": frozenset({"application/pdf", "application/x-pdf"}),
    "html": frozenset({"text/html", "application/xhtml+xml"}),
    "markdown": frozenset({"text/markdown", "text/x-markdown", "text/plain"}),
    "text": frozenset({"text/plain"}),
}
_GENERIC = frozenset({"", "application/octet-stream", "binary/octet-stream"})
# Multipart framing and the small metadata fields around the file.
MULTIPART_OVERHEAD = 64 * 1024

ACCEPTED_EXTENSIONS = tuple(sorted(EXTENSIONS))
MAX_FILENAME_CHARS = 200


def safe_filename(filename: str) -> str:
    """The name's last path part (either slash), without control or format characters (NUL, newlines,
    bidi overrides that disguise an extension), trimmed, at most MAX_FILENAME_CHARS with its extension."""
    name = PurePosixPath(filename.replace("\\", "/")).name
    name = "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"))
    name = " ".join(name.split()).strip(". ")
    if len(name) > MAX_FILENAME_CHARS:
        suffix = PurePosixPath(name).suffix[:16]
        name = name[: MAX_FILENAME_CHARS - len(suffix)] + suffix
    return name


def accept_file(filename: str, content_type: str | None) -> None:
    """Raises a 415 GatewayError unless the ingester can read a file of this name and declared type."""
    name = safe_filename(filename)
    ext = PurePosixPath(name).suffix.lower()
    if not name or ext not in EXTENSIONS:
        raise GatewayError(
            415,
            f"unsupported file type {ext or '(no extension)'!r}; accepted: {', '.join(ACCEPTED_EXTENSIONS)}",
            "UNSUPPORTED_MEDIA_TYPE",
        )
    declared = (content_type or "").split(";")[0].strip().lower()
    if declared not in _GENERIC and declared not in _CONTENT_TYPES[EXTENSIONS[ext]]:
        raise GatewayError(415, f"content type {declared!r} does not match a {ext} file", "UNSUPPORTED_MEDIA_TYPE")


def too_large(limit_bytes: int, size: int | None = None) -> GatewayError:
    mib = limit_bytes / (1024 * 1024)
    told = f"the file has {size} bytes; " if size is not None else ""
    return GatewayError(413, f"{told}uploads are limited to {mib:g} MiB ({limit_bytes} bytes)", "PAYLOAD_TOO_LARGE")


def check_declared_length(content_length: str | None, limit_bytes: int) -> None:
    """Refuses at once a body whose Content-Length already says it is too large."""
    if content_length and content_length.strip().isdigit() and int(content_length) > limit_bytes + MULTIPART_OVERHEAD:
        raise too_large(limit_bytes)


def counting_receive(receive: Receive, limit: int, error: Callable[[], Exception]) -> Receive:
    """`receive` that raises error() once the body passes `limit` bytes (a chunked body has no length)."""
    received = 0

    async def wrapped() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise error()
        return message

    return wrapped


def capped_receive(receive: Receive, limit_bytes: int) -> Receive:
    """`receive` that raises 413 once the body passes the limit (for chunked uploads with no length)."""
    return counting_receive(receive, limit_bytes + MULTIPART_OVERHEAD, lambda: too_large(limit_bytes))
