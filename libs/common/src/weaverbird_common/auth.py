"""Who may call what: a caller's identity from a bearer token or its client certificate, and roles per RPC.

Roles: `ask` (questions and retrieval), `add` (put documents into the KB; implies ask), `admin` (delete
and everything else; implies all), and `service` (the internal RPCs one service calls on another:
embedding, search, upsert, generation). People and apps carry tokens; services carry certificates
(mutual TLS), whose common name is the service's name. A token wins over a certificate, so a proxy
such as the HTTP gateway acts with its user's rights, not its own.

Health checks and reflection stay open (probes and tooling carry no credentials). An RPC missing from
the table needs `admin`: a new method is closed until someone decides who may call it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

import grpc

from weaverbird_common.interceptor import CallInterceptor, is_probe, wrap_calls

Role = Literal["ask", "add", "admin", "service"]
ROLES: frozenset[str] = frozenset({"ask", "add", "admin", "service"})
# What holding a role also grants.
_IMPLIES: dict[str, frozenset[str]] = {
    "ask": frozenset({"ask"}),
    "add": frozenset({"add", "ask"}),
    "admin": ROLES,
    "service": frozenset({"service"}),
}

_V1 = "/weaverbird.v1."
METHOD_ROLES: dict[str, Role] = {
    f"{_V1}OrchestratorService/AskStream": "ask",
    f"{_V1}OrchestratorService/Ask": "ask",
    f"{_V1}OrchestratorService/Retrieve": "ask",
    f"{_V1}IngesterService/AddDocument": "add",
    # Browsing the KB shows what answers already show (passages); removing from it is administration.
    f"{_V1}IngesterService/ListDocuments": "ask",
    f"{_V1}IngesterService/GetDocument": "ask",
    f"{_V1}IngesterService/DeleteDocument": "admin",
    f"{_V1}RetrieverService/ListDocuments": "service",
    f"{_V1}RetrieverService/GetDocument": "service",
    f"{_V1}EmbedderService/Embed": "service",
    f"{_V1}EmbedderService/DescribeModel": "service",
    f"{_V1}GeneratorService/GenerateStream": "service",
    f"{_V1}RetrieverService/Upsert": "service",
    f"{_V1}RetrieverService/Search": "service",
    f"{_V1}RetrieverService/CollectionStats": "service",
    f"{_V1}RetrieverService/Catalog": "service",
    f"{_V1}RetrieverService/UpsertFacts": "service",
    f"{_V1}RetrieverService/LookupFacts": "service",
    f"{_V1}RetrieverService/DeleteDocument": "admin",
}


def required_role(method: str, overrides: Mapping[str, Role] | None = None) -> Role | None:
    """The role `method` (e.g. "/weaverbird.v1.IngesterService/AddDocument") needs; None when it is open."""
    if is_probe(method):
        return None
    table = {**METHOD_ROLES, **(overrides or {})}
    return table.get(method, "admin")


@dataclass(frozen=True)
class Identity:
    """A caller: its name (for logs and audit) and the roles it holds, implied ones included."""

    name: str
    roles: frozenset[str]

    def may(self, role: str) -> bool:
        return role in self.roles


def _expand(roles: Iterable[str]) -> frozenset[str]:
    unknown = set(roles) - ROLES
    if unknown:
        raise ValueError(f"unknown roles {sorted(unknown)}; known: {sorted(ROLES)}")
    return frozenset().union(*(_IMPLIES[r] for r in roles)) if roles else frozenset()


def token_digest(token: str) -> str:
    """What a policy file stores instead of the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


class Authenticator:
    """Maps credentials to identities: token digests and certificate common names to named roles."""

    def __init__(
        self, tokens: Mapping[str, tuple[str, Sequence[str]]], certificates: Mapping[str, Sequence[str]]
    ) -> None:
        """`tokens`: sha256 hex digest -> (name, roles); `certificates`: common name -> roles."""
        self._tokens = {d.lower(): Identity(name, _expand(roles)) for d, (name, roles) in tokens.items()}
        self._certs = {cn: Identity(cn, _expand(roles)) for cn, roles in certificates.items()}

    @classmethod
    def from_file(cls, path: Path) -> Authenticator:
        """Reads a policy: {"tokens": [{"name", "sha256", "roles"}], "certificates": {"<CN>": [roles]}}."""
        policy = json.loads(path.read_text(encoding="utf-8"))
        tokens = {t["sha256"]: (t["name"], t["roles"]) for t in policy.get("tokens", [])}
        return cls(tokens, policy.get("certificates", {}))

    def identify(self, metadata: Iterable[tuple[str, Any]], peer_common_names: Sequence[str]) -> Identity | None:
        """The caller's identity: its bearer token's, else its certificate's; None when it has neither."""
        for key, value in metadata:
            if key.lower() == "authorization":
                scheme, _, token = str(value).partition(" ")
                if scheme.lower() != "bearer" or not token:
                    return None
                digest = token_digest(token.strip())
                for known, identity in self._tokens.items():
                    if hmac.compare_digest(known, digest):
                        return identity
                return None  # a wrong token is not rescued by a certificate
        for name in peer_common_names:
            if name in self._certs:
                return self._certs[name]
        return None


# Who the AuthInterceptor admitted for the call running in this task (None without authentication):
# the ingester shares its parse workers fairly between callers by it.
CALLER: ContextVar[str | None] = ContextVar("weaverbird_caller", default=None)


def peer_common_names(context: grpc.aio.ServicerContext) -> list[str]:
    """Common names of the client certificate the TLS handshake verified (empty without mTLS)."""
    names = context.auth_context().get("x509_common_name", [])
    return [n.decode() if isinstance(n, bytes) else str(n) for n in names]


class AuthInterceptor(CallInterceptor):
    """UNAUTHENTICATED without known credentials, PERMISSION_DENIED without the method's role."""

    def __init__(self, authenticator: Authenticator, overrides: Mapping[str, Role] | None = None) -> None:
        self._auth = authenticator
        self._overrides = dict(overrides or {})

    @asynccontextmanager
    async def _checked(
        self, method: str, role: Role, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[None]:
        identity = self._auth.identify(context.invocation_metadata() or (), peer_common_names(context))
        if identity is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "credentials required: a bearer token (authorization metadata) or a client certificate",
            )
        if not identity.may(role):
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, f"{identity.name} may not call {method}: needs {role}"
            )
        CALLER.set(identity.name)
        yield

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        role = required_role(method, self._overrides)
        if role is None:
            return handler
        if not handler.request_streaming:
            return wrap_calls(handler, partial(self._checked, method, role))

        # No WeaverBird RPC streams requests; refuse rather than let one through unchecked.
        async def refuse(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, f"{method} is not served with authentication on")

        return grpc.unary_unary_rpc_method_handler(refuse)
