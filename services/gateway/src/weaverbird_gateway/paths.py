"""What clients may see of where a document came from: URLs and relative paths as stored, never the
server's own absolute paths (they tell an attacker the layout and user names of the machine)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

_ABSOLUTE = re.compile(r"^(?:/|~|[A-Za-z]:/)")


def without_server_path(value: str) -> str:
    """`value` unchanged unless it is an absolute file path, a file: URL or a relative path climbing out
    with "..": then only its file name."""
    text = value.strip()
    if text.lower().startswith("file:"):
        text = unquote(urlsplit(text).path)
    elif "://" in text:
        return value  # a web page's URL is public
    normal = text.replace("\\", "/")
    if _ABSOLUTE.match(normal) or ".." in normal.split("/"):
        return PurePosixPath(normal).name
    return value
