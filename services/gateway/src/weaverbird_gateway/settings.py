"""Gateway settings (env prefix GATEWAY_): where it listens, which services it calls, who may reach it
(host names, origins) and the size limits of what it reads."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class GatewaySettings(BaseSettings):
    """Read once at start; every field has a GATEWAY_<NAME> variable."""

    # hide_input_in_errors: a malformed default token must not be printed in the start-up error.
    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore", env_file=None, hide_input_in_errors=True)

    host: str = Field("127.0.0.1", description="Interface the HTTP server binds to (0.0.0.0 in a pod).")
    port: int = Field(8080, ge=0, le=65535, description="HTTP port; 0 picks a free port.")
    log_level: str = Field("INFO", description="Python logging level.")
    orchestrator_addr: str = Field(description="Orchestrator host:port (gRPC).")
    ingester_addr: str = Field(description="Ingester host:port (gRPC).")
    max_upload_mb: float = Field(
        50.0,
        gt=0,
        description="Largest file POST /api/documents/upload accepts, in MiB (keep <= INGESTER_MAX_DOCUMENT_MB).",
    )
    max_body_kb: int = Field(
        1024, ge=1, description="Largest body of a JSON request, in KiB; a larger one gets 413 before it is read."
    )
    max_header_kb: int = Field(
        32, ge=1, le=1024, description="Largest request line + headers, in KiB; larger ones get 431 (h11's buffer)."
    )
    allowed_hosts: list[str] = Field(
        default_factory=lambda: ["localhost", "127.0.0.1", "[::1]"],
        description='Host names served, any port (JSON list; "*.example.com" matches subdomains); another Host '
        "header gets 400, so a DNS-rebinding page cannot reach the API. The chart adds its Service and Ingress names.",
    )
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Origins (scheme://host[:port]) whose pages may send writes besides the gateway's own origin "
        "(e.g. behind a proxy that rewrites Host). A write from another Origin, or with Sec-Fetch-Site: cross-site, "
        "gets 403.",
    )
    ask_timeout_s: float = Field(600.0, gt=0, description="Deadline of one streamed answer (CPU models are slow).")
    retrieve_timeout_s: float = Field(30.0, gt=0, description="Deadline of one Retrieve call.")
    add_timeout_s: float = Field(300.0, gt=0, description="Deadline of one AddDocument call (a large PDF takes time).")
    kb_timeout_s: float = Field(30.0, gt=0, description="Deadline of one knowledge-base list / show / delete call.")
    ready_timeout_s: float = Field(2.0, gt=0, description="Deadline of the orchestrator health check behind /readyz.")
    retry_after_s: int = Field(
        1, ge=1, description="Retry-After sent with 429 when the service gave no hint of its own."
    )
    max_message_mb: int = Field(64, ge=4, le=512, description="Largest gRPC message sent or received, in MiB.")
    shutdown_grace_s: float = Field(5.0, ge=0, description="Seconds open requests get after SIGTERM.")
    root_path: str = Field(
        "", description="Path prefix when served behind a proxy under a sub-path (e.g. /weaverbird)."
    )

    tls_cert_file: Path | None = Field(
        None, description="PEM certificate the gateway presents to the services (mutual TLS); with key and CA."
    )
    tls_key_file: Path | None = Field(None, description="PEM private key of tls_cert_file.")
    tls_ca_file: Path | None = Field(None, description="PEM CA that signed the services' certificates.")
    default_token: SecretStr | None = Field(
        None,
        description="Bearer token sent for HTTP requests that carry no Authorization header of their own, except "
        "deletes (an admin must send their own); for a single-user local run (`weaverbird up`, whose web token may "
        "ask and add only): in a cluster an auth proxy in front supplies the user's.",
    )

    @field_validator("default_token")
    @classmethod
    def _token_syntax(cls, value: SecretStr | None) -> SecretStr | None:
        # gRPC refuses other characters in metadata, and the calls would then fail (or hang) one by one.
        if value is not None and not re.fullmatch(r"[A-Za-z0-9\-._~+/]+=*", value.get_secret_value().strip()):
            raise ValueError("must be a bearer token: letters, digits and -._~+/ only (RFC 6750)")
        return value

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    @property
    def max_body_bytes(self) -> int:
        return self.max_body_kb * 1024

    @property
    def max_header_bytes(self) -> int:
        return self.max_header_kb * 1024
