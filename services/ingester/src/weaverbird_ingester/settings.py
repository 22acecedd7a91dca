"""Ingester settings (env prefix INGESTER_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict
from weaverbird_common.kafka_config import KafkaSettings
from weaverbird_common.settings import BaseServiceSettings, ssrf_allow_hosts_field, ssrf_private_names_field


class IngesterSettings(BaseServiceSettings):
    """Peers and chunking parameters."""

    model_config = SettingsConfigDict(env_prefix="INGESTER_", extra="ignore", env_nested_delimiter="__")

    embedder_addr: str = Field(description="Embedder host:port.")
    retriever_addr: str = Field(description="Retriever host:port.")
    chunk_tokens: int = Field(250, ge=32, le=2000, description="Target chunk size in tokens.")
    max_chunk_tokens: int = Field(400, ge=64, le=4000, description="Hard ceiling of a chunk (whole tables).")
    embed_batch: int = Field(32, ge=1, le=512, description="Chunks per embedder call.")
    facts: bool = Field(
        True, description="Read each document's statement tables into facts (RetrieverService.UpsertFacts)."
    )
    max_document_mb: int = Field(50, ge=1, description="Largest document accepted, in MiB.")
    call_timeout_s: float = Field(120.0, gt=0, description="Deadline of one embedder or retriever call.")
    data_dir: str = Field("var/ingester", description="Where the dedupe index (sqlite) lives.")
    fetch_timeout_s: float = Field(10.0, gt=0, description="Deadline of fetching one URL to add.")
    fetch_allow_hosts: list[str] = ssrf_allow_hosts_field()
    fetch_allow_private_names: bool = ssrf_private_names_field("an intranet site users may add")
    consume_concurrency: int = Field(4, ge=1, le=64, description="Documents from Kafka processed at once.")
    kafka: KafkaSettings | None = Field(
        None, description="Kafka ingest topic to consume (INGESTER_KAFKA__BOOTSTRAP_SERVERS, ...); unset = RPC only."
    )
