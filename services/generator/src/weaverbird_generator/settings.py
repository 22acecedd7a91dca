"""Generator settings (env prefix GENERATOR_)."""

from __future__ import annotations

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict
from weaverbird_common.settings import BaseServiceSettings

# Passage tokens for the local CPU model: chosen in benchmarks/ttft.py (docs/results/latency.md, "Time to first token").
LOCAL_CONTEXT_BUDGET = 160


class GeneratorSettings(BaseServiceSettings):
    """Which LLM server to stream from, or which local GGUF model to serve with llama.cpp."""

    model_config = SettingsConfigDict(env_prefix="GENERATOR_", extra="ignore")

    endpoint: str | None = Field(
        None,
        description="Base URL of TGI or any OpenAI-compatible server (vLLM, SGLang, llama.cpp), "
        "e.g. http://tgi:8080. When unset, a local llama.cpp server runs GENERATOR_MODEL.",
    )
    api_key: str | None = Field(None, description="Bearer token for the endpoint, from a Secret.")
    model: str = Field(
        "qwen2.5-coder-1.5b",
        description="Local model: qwen2.5-coder-1.5b (bilingual; old name qwen2.5-1.5b), smollm2 (tests) or a "
        ".gguf path.",
    )
    model_dir: str = Field("var/models", description="Where model files assembled from packages are kept.")
    llama_port: int = Field(0, ge=0, le=65535, description="Port of the local llama.cpp server; 0 = free port.")
    llama_threads: int = Field(0, ge=0, description="CPU threads for llama.cpp; 0 = all cores.")
    llama_ctx: int = Field(4096, ge=512, description="Context window of the local model, in tokens.")
    llama_parallel: int = Field(2, ge=1, description="Concurrent generations the local server runs.")
    llama_repack: bool = Field(
        False,
        description="Let llama.cpp repack the weights into its CPU-specific layouts at load. Off: on a 2-core AVX2 "
        "machine repacked Q4_K_M weights read prompts ~20% slower (benchmarks/prompt_reading.py); try it on "
        "AVX-512 or ARM servers.",
    )
    max_tokens: int = Field(512, ge=1, description="Default and ceiling of new tokens per answer.")
    temperature: float = Field(
        0.0,
        ge=0.0,
        le=2.0,
        description="Default sampling temperature; 0 decodes greedily, so one question over the same passages gets "
        "the same answer (at 0.1 and a random seed the served 1.5B model's answers differed between runs).",
    )
    top_p: float = Field(0.9, gt=0.0, le=1.0, description="Default nucleus sampling top-p.")
    max_passages: int = Field(20, ge=1, description="Most context passages per request.")
    max_question_chars: int = Field(4000, ge=1, description="Longest question accepted.")
    request_timeout_s: float = Field(
        300.0, gt=0, description="Deadline of one generation at the LLM server; a caller's shorter deadline wins."
    )
    llm_concurrency: int | None = Field(
        None,
        ge=0,
        description="Generations sent to the LLM server at once; the rest wait in this service, where a cancelled "
        "one costs nothing (llama.cpp notices a closed connection only after reading the prompt). Unset = "
        "GENERATOR_LLAMA_PARALLEL for the local llama.cpp server, no limit with GENERATOR_ENDPOINT; 0 = no limit.",
    )
    max_concurrent_rpcs: int = Field(
        8,
        ge=1,
        description="Generations accepted at once (health checks not counted); more are refused at once with "
        "RESOURCE_EXHAUSTED and a message to retry. The local server runs GENERATOR_LLAMA_PARALLEL of them and "
        "queues the rest, so a few more than that keeps it busy without piling up minutes of waiting.",
    )
    context_budget_tokens: int | None = Field(
        None,
        ge=0,
        description="Tokens of passage text the model reads, kept by query-focused selection (context_focus.py); "
        f"0 = full passages. Unset = {LOCAL_CONTEXT_BUDGET} for the local llama.cpp model (a CPU reads prompts at "
        "20-50 tokens/s, so prompt length is the wait) and 0 with GENERATOR_ENDPOINT (a GPU server reads "
        "thousands of tokens/s, so it keeps the full passages).",
    )
    prompt_sources: bool = Field(
        True,
        description="Show the model each passage's source (file + page, or URL) beside its title. Off saves about "
        "12 prompt tokens a passage (~1-2 s of TTFT on a CPU) but answered worse in the answer evaluation "
        "(docs/results/answers.md). Citations sent to users always carry the source.",
    )
    prompt_cache: bool = Field(
        True,
        description="Let llama.cpp reuse the cached prompt prefix (the fixed rules) across requests; off only to "
        "measure what the cache saves.",
    )

    @property
    def llm_concurrency_limit(self) -> int:
        """Generations in flight at the LLM server at once; 0 = no limit."""
        if self.llm_concurrency is not None:
            return self.llm_concurrency
        return 0 if self.endpoint else self.llama_parallel

    @property
    def context_budget(self) -> int:
        if self.context_budget_tokens is not None:
            return self.context_budget_tokens
        return 0 if self.endpoint else LOCAL_CONTEXT_BUDGET

    @model_validator(mode="after")
    def _check(self) -> GeneratorSettings:
        if self.endpoint is not None and not self.endpoint.startswith(("http://", "https://")):
            raise ValueError(f"GENERATOR_ENDPOINT must be an http(s) URL, got {self.endpoint!r}")
        return self
