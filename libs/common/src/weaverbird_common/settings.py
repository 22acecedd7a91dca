"""Typed service settings read once from the environment at process start."""

from __future__ import annotations

from pydantic import Field
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
