"""Domain errors shared by every service, and the one table that maps them to gRPC status codes."""

from __future__ import annotations

import re

import grpc

# "PdfReadError: " and the like, as libraries' messages often start: a class name is no help to a user.
_CLASS_PREFIX = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)\b:?\s*")


class WeaverbirdError(Exception):
    """Base of every error a service reports to its caller; the message is safe to show to clients."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL


class InvalidArgument(WeaverbirdError):
    """The request itself is wrong (empty question, K out of range, ...); retrying will not help."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(WeaverbirdError):
    """A named thing (document, collection) does not exist."""

    code = grpc.StatusCode.NOT_FOUND


class FailedPrecondition(WeaverbirdError):
    """The system is not in a state to serve this (e.g. vectors of another dimension are stored)."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class Unavailable(WeaverbirdError):
    """A dependency (another service, the LLM server, the store) cannot be reached; retry later."""

    code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(WeaverbirdError):
    """The work did not finish within its deadline."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


class Overloaded(WeaverbirdError):
    """Too much work queued; the caller should back off for `retry_after_s`."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED

    def __init__(self, message: str, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Unimplemented(WeaverbirdError):
    """The request asks for a feature this deployment does not provide."""

    code = grpc.StatusCode.UNIMPLEMENTED


# Client direction: a status received from a peer becomes the matching domain error.
_ERROR_BY_CODE: dict[grpc.StatusCode, type[WeaverbirdError]] = {
    cls.code: cls
    for cls in (
        InvalidArgument,
        NotFound,
        FailedPrecondition,
        Unavailable,
        DeadlineExceeded,
        Overloaded,
        Unimplemented,
    )
}


def error_from_status(code: grpc.StatusCode, details: str, peer: str) -> WeaverbirdError:
    """Turns a gRPC status from a peer service into a domain error that names the peer.

    A peer's INVALID_ARGUMENT is our caller's problem only when we forwarded their input, which the
    calling code knows; here it keeps its class so that code can decide.
    """
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.UNKNOWN):
        return Unavailable(f"{peer} is unavailable: {details}")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return DeadlineExceeded(f"{peer} did not answer in time")
    cls = _ERROR_BY_CODE.get(code, WeaverbirdError)
    return cls(f"{peer}: {details}")


def plain_message(text: str) -> str:
    """`text` without Python exception class names, for a library's message passed on to a client."""
    return _CLASS_PREFIX.sub("", text).strip() or "unreadable input"
