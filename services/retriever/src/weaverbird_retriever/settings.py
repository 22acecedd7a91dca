"""Retriever settings (env prefix RETRIEVER_)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict
from weaverbird_common.settings import BaseServiceSettings


class RetrieverSettings(BaseServiceSettings):
    """Which Qdrant to use and the request limits."""

    model_config = SettingsConfigDict(env_prefix="RETRIEVER_", extra="ignore")

    store: Literal["edge", "local", "server"] = Field(
        "edge",
        description="edge = embedded Qdrant Edge (HNSW, on disk); local = qdrant-client local mode; "
        "server = a Qdrant server at RETRIEVER_QDRANT_URL.",
    )
    data_dir: str = Field("var/qdrant", description="Directory of the embedded store (edge, local).")
    qdrant_url: str | None = Field(None, description="Qdrant server URL (store=server), e.g. http://qdrant:6333.")
    qdrant_api_key: str | None = Field(None, description="Qdrant API key (store=server), from a Secret.")
    qdrant_timeout_s: int = Field(
        10,
        ge=1,
        le=300,
        description="Longest wait for one request to the Qdrant server (store=server); past it the call "
        "answers UNAVAILABLE and the ingester pauses and retries.",
    )
    collection: str = Field("weaverbird", description="Collection name.")
    max_k: int = Field(100, ge=1, le=1000, description="Largest k a search may ask for.")
    max_upsert_batch: int = Field(1024, ge=1, description="Most chunks per Upsert call.")
    search_mode: Literal["dense", "lexical", "hybrid"] = Field(
        "hybrid",
        description="Mode of a Search that does not name one (and has the query text): dense, lexical "
        "(BM25) or hybrid (both legs fused in the store).",
    )
    fusion: Literal["rrf", "dbsf"] = Field(
        "dbsf",
        description="How hybrid search merges its legs: distribution-based score fusion (each leg's scores "
        "normalised by their mean and spread, then summed) or reciprocal rank fusion. DBSF ranked better on "
        "all three datasets (docs/results/retrieval.md).",
    )
    prefetch: int = Field(50, ge=1, le=1000, description="Candidates each hybrid leg hands to the fusion.")
    lexical_weight: float = Field(
        4.0,
        gt=0,
        le=100,
        description="Weight of the lexical leg against the dense leg's 1 (DBSF: a whole number; RRF: its "
        "ranks are divided by it, which at k = 60 gives it *less* say). 4 with DBSF: most of the measured gain "
        "for about 1 ms of search (9 ranked a little better for 3.4 ms; docs/results/retrieval.md).",
    )
    figure_weight: float = Field(
        8.0,
        ge=0,
        le=100,
        description="Hybrid search: added to each fused candidate's score times its share of number tokens, so "
        "the table holding a figure outranks prose that shares the question's words (0 = off; 8 chosen on the "
        "tuning halves of three datasets; docs/results/retrieval.md).",
    )

    @model_validator(mode="after")
    def _dbsf_weight_is_whole(self) -> RetrieverSettings:
        # DBSF weights by listing the lexical leg that many times (stores/base.lexical_copies).
        if self.fusion == "dbsf" and not float(self.lexical_weight).is_integer():
            raise ValueError(f"RETRIEVER_LEXICAL_WEIGHT must be a whole number with DBSF, got {self.lexical_weight}")
        return self
