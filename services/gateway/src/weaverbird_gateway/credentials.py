"""The caller's `Authorization` header: its syntax is checked before it goes anywhere, and the 401s say
whether credentials were missing or wrong (RFC 6750)."""

from __future__ import annotations

import re

from weaverbird_gateway.errors import GatewayError

# RFC 6750 b64token. gRPC refuses anything else in metadata, and a grpc.aio call behind the tracing
# interceptor then never completes: the header must be refused here, not sent.
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_CHALLENGE = 'Bearer realm="weaverbird"'


def unauthorized(credentials_sent: bool) -> GatewayError:
    """401 with a `WWW-Authenticate: Bearer` challenge."""
    if credentials_sent:
        return GatewayError(
            401,
            "invalid credentials: the bearer token was not accepted",
            "UNAUTHENTICATED",
            {"WWW-Authenticate": f'{_CHALLENGE}, error="invalid_token"'},
        )
    return GatewayError(
        401,
        "credentials required: send 'Authorization: Bearer <token>'",
        "UNAUTHENTICATED",
        {"WWW-Authenticate": _CHALLENGE},
    )


def check_authorization(header: str) -> None:
    """Raises 400 for a malformed header (non-ASCII, control characters, a token with other characters)
    and 401 for a scheme other than Bearer."""
    scheme, _, token = header.strip().partition(" ")
    if scheme.isascii() and scheme.isalpha() and scheme.lower() != "bearer":
        raise unauthorized(credentials_sent=True)
    if scheme.lower() != "bearer" or not _TOKEN.fullmatch(token.strip()):
        raise GatewayError(
            400,
            "malformed Authorization header: expected 'Bearer <token>' (RFC 6750 characters only)",
            "INVALID_ARGUMENT",
            {"WWW-Authenticate": f'{_CHALLENGE}, error="invalid_request"'},
        )
