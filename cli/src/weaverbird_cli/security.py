"""Mutual TLS and tokens for the local stack: `weaverbird up` makes them, the CLI and the launcher use them.

On first start `up` creates a local CA in `<data dir>/tls/`, a certificate for every service (each
presents it as server and as client), one for the launcher and one for the CLI, and an access policy:
services hold the `service` role by their certificate (the ingester also `admin`, as the KB's front
door deletes chunks), and two tokens are written, `cli.token` (admin: the machine's user) and
`web.token` (ask and add only: the gateway sends it for requests that carry no credentials, so whoever
reaches the page may ask and add but never delete; a delete needs the admin token sent by the person).
The files stay readable by the owner only; the CLI finds them through its data dir, so `weaverbird ask`
needs no flags.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

import grpc
from weaverbird_common.auth import token_digest
from weaverbird_common.tls import LocalCA, TlsFiles, channel_credentials

SERVICE_ROLES = {
    "embedder": ["service"],
    "retriever": ["service"],
    "generator": ["service"],
    "orchestrator": ["service"],
    "ingester": ["service", "admin"],
    "launcher": ["admin"],
}


@dataclass(frozen=True)
class LocalSecurity:
    """The files under `directory` (made by `create`, read by `load`)."""

    directory: Path

    @property
    def policy(self) -> Path:
        return self.directory / "auth-policy.json"

    def files(self, identity: str) -> TlsFiles:
        return TlsFiles(
            self.directory / f"{identity}.pem", self.directory / f"{identity}.key", self.directory / "ca.pem"
        )

    def token(self, name: str) -> str:
        return (self.directory / f"{name}.token").read_text().strip()

    @classmethod
    def create(cls, directory: Path, identities: tuple[str, ...]) -> LocalSecurity:
        """Makes (or reuses) the CA, a certificate per identity plus "launcher", "cli" and "gateway", the
        tokens and the policy. Existing tokens are kept, so a running CLI session stays valid."""
        ca = LocalCA(directory)
        security = cls(directory)
        for identity in (*identities, "launcher", "cli", "gateway"):
            if not security.files(identity).cert.exists():
                ca.issue(identity)
        tokens = []
        for name, roles in (("cli", ["admin"]), ("web", ["add"])):
            path = directory / f"{name}.token"
            if not path.exists():
                path.write_text(secrets.token_urlsafe(32) + "\n")
                path.chmod(0o600)
            tokens.append({"name": f"local-{name}", "sha256": token_digest(security.token(name)), "roles": roles})
        policy = {"tokens": tokens, "certificates": {i: SERVICE_ROLES.get(i, []) for i in (*identities, "launcher")}}
        security.policy.write_text(json.dumps(policy, indent=2))
        security.policy.chmod(0o600)
        return security

    def service_env(self, service: str) -> dict[str, str]:
        """The TLS and policy settings of one service (prefix SERVICE_)."""
        files, prefix = self.files(service), service.upper() + "_"
        return {
            f"{prefix}TLS_CERT_FILE": str(files.cert),
            f"{prefix}TLS_KEY_FILE": str(files.key),
            f"{prefix}TLS_CA_FILE": str(files.ca),
            f"{prefix}AUTH_POLICY_FILE": str(self.policy),
        }

    def gateway_env(self) -> dict[str, str]:
        files = self.files("gateway")
        return {
            "GATEWAY_TLS_CERT_FILE": str(files.cert),
            "GATEWAY_TLS_KEY_FILE": str(files.key),
            "GATEWAY_TLS_CA_FILE": str(files.ca),
            "GATEWAY_DEFAULT_TOKEN": self.token("web"),
        }

    def channel_credentials(self, identity: str, token: str | None = None) -> grpc.ChannelCredentials:
        """Credentials of a synchronous client: `identity`'s certificate, plus a bearer token if given."""
        files = self.files(identity)
        credentials = channel_credentials(files.ca, files)
        if token is None:
            return credentials
        return grpc.composite_channel_credentials(credentials, grpc.access_token_call_credentials(token))


def cli_credentials(data_dir: Path) -> grpc.ChannelCredentials | None:
    """What `weaverbird ask/ingest/add/kb` present to a stack `up` secured: None when it made no files."""
    security = LocalSecurity(Path(data_dir) / "tls")
    if not (security.files("cli").cert.exists() and (security.directory / "cli.token").exists()):
        return None
    return security.channel_credentials("cli", security.token("cli"))


def remote_credentials(ca: Path, cert: Path | None, key: Path | None, token: str | None) -> grpc.ChannelCredentials:
    """What the CLI presents to a remote stack: its CA, a client certificate if given, a token if given."""
    credentials = grpc.ssl_channel_credentials(
        root_certificates=ca.read_bytes(),
        private_key=key.read_bytes() if key else None,
        certificate_chain=cert.read_bytes() if cert else None,
    )
    if token is None:
        return credentials
    return grpc.composite_channel_credentials(credentials, grpc.access_token_call_credentials(token))
