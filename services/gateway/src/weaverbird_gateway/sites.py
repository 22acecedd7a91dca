"""Which sites may use the gateway: host names it answers to (against DNS rebinding) and the origins whose
pages may change the knowledge base (against cross-site writes). Pure functions over header values."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

# Methods that change state; a browser sends them from another site only with an Origin header.
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(authority: str) -> str | None:
    """The lower-case host of a Host header or an origin's authority ("[::1]:8080" -> "[::1]"); None
    when it is malformed (non-ASCII, a bad port, an unclosed IPv6 bracket)."""
    text = authority.strip().lower()
    if not text or not text.isascii():
        return None
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        name, rest = text[: end + 1], text[end + 1 :]
    else:
        name, colon, port = text.partition(":")
        rest = colon + port
    if rest and not (rest.startswith(":") and rest[1:].isdigit()):
        return None
    name = name.rstrip(".")  # "localhost." is localhost
    if not name or any(c in name for c in "/\\@?# "):
        return None
    return name


def host_allowed(name: str, allowed: Iterable[str]) -> bool:
    """`name` is one of `allowed`: exact names, "*.example.com" for subdomains, or "*" for any."""
    for pattern in allowed:
        pattern = pattern.strip().lower().rstrip(".")
        if pattern == "*" or pattern == name:
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


def _origin(value: str) -> str | None:
    """scheme://host[:port] in lower case, or None for "null" and anything that is not an origin."""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query or parts.fragment:
        return None
    if host_name(parts.netloc) is None:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


def origin_allowed(origin: str, host: str, allowed_origins: Iterable[str]) -> bool:
    """A page from `origin` may write: it is the gateway's own origin (same host and port as the Host
    header it was sent with) or one of `allowed_origins`."""
    normalised = _origin(origin)
    if normalised is None:
        return False
    if normalised.split("://", 1)[1] == host.strip().lower():
        return True
    return normalised in {o.strip().rstrip("/").lower() for o in allowed_origins}
