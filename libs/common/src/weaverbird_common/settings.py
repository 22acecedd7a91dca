"""Typed service settings read once from the environment at process start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class BaseServiceSettings(BaseSettings):
    """Settings every service has; each service subclasses this with its own env prefix."""

    model_config = SettingsConfigDict(extra="ignore", env_file=None)

    host: str = Field("127.0.0.1", description="Interface the gRPC server binds to (0.0.0.0 in a pod).")
    grpc_port: int = Field(0, ge=0, le=65535, description="gRPC port; 0 picks a free port.")
    metrics_port: int = Field(0, ge=0, le=65535, description="Prometheus metrics port; 0 disables.")
    log_level: str = Field("INFO", description="Python logging level.")
    shutdown_grace_s: float = Field(5.0, ge=0, description="Seconds in-flight RPCs get after SIGTERM.")
    otlp_endpoint: str | None = Field(
        None,
        validation_alias="OTEL_EXPORTER_OTLP_ENDPOINT",
        description="OTLP/gRPC collector for traces (standard OTEL variable); unset = no export.",
    )
    max_message_mb: int = Field(64, ge=4, le=512, description="Largest gRPC message accepted, in MiB.")
    max_concurrent_rpcs: int = Field(
        64,
        ge=1,
        description="Calls served at once (health checks and reflection not counted); more are refused at once "
        "with RESOURCE_EXHAUSTED and a message to retry. Services doing slow work per call set a smaller default.",
    )
    tls_cert_file: Path | None = Field(
        None, description="PEM certificate this service presents, as server and as client (mutual TLS)."
    )
    tls_key_file: Path | None = Field(None, description="PEM private key of tls_cert_file.")
    tls_ca_file: Path | None = Field(
        None, description="PEM CA that signs peers' certificates; set all three TLS files or none (plaintext)."
    )
    tls_require_client_cert: bool = Field(
        True, description="With TLS on, refuse callers without a client certificate the CA signed (mTLS)."
    )
    health_port: int = Field(
        0,
        ge=0,
        le=65535,
        description="A plaintext port serving only grpc.health.v1 (0: none). With mutual TLS on, Kubernetes' "
        "gRPC probes cannot present a certificate, so they check this port instead.",
    )
    auth_policy_file: Path | None = Field(
        None,
        description="JSON policy of who may call what (token digests and certificate names with roles; see "
        "weaverbird_common.auth); unset = no authentication (only for 127.0.0.1 or a meshed network).",
    )

    @model_validator(mode="after")
    def _tls_all_or_none(self) -> BaseServiceSettings:
        files = (self.tls_cert_file, self.tls_key_file, self.tls_ca_file)
        if any(files) and not all(files):
            raise ValueError("set TLS_CERT_FILE, TLS_KEY_FILE and TLS_CA_FILE together, or none of them")
        return self


def ssrf_allow_hosts_field() -> Any:
    """The setting of a service that fetches URLs: hosts its SSRF block lets through (ingester, orchestrator)."""
    return Field(
        default_factory=list,
        description="Hosts (or IP, CIDR, host:port) exempt from the private-address SSRF block (JSON list).",
    )


def ssrf_private_names_field(examples: str) -> Any:
    """The setting that lets allow-listed names resolve to private addresses; `examples`: who needs it."""
    return Field(
        False,
        description=f"Let allow-listed host NAMES resolve to private addresses ({examples}); "
        "by default an allow-listed name must still resolve to public addresses.",
    )
