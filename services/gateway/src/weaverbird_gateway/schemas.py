"""JSON shapes of the HTTP API (requests and responses); FastAPI documents them in /docs.

Field names follow the gRPC messages so a client can read the .proto comments for meaning; enums become
short lower-case words ("local", "web", "supported").
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Values must fit the int32 fields of the gRPC messages; ranges that matter are checked by the services.
Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
# The orchestrator's default question limit (ORCHESTRATOR_MAX_QUESTION_CHARS); longer ones go no further.
MAX_QUESTION_CHARS = 2000


class _Strict(BaseModel):
    """Unknown fields are refused (422), so a misspelt "topk" is not silently ignored."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Filters(_Strict):
    """Exact-match conditions on the passages searched, ANDed; unset fields do not filter. When no
    filter is given, the orchestrator takes company / year / quarter from the question itself."""

    company: str | None = None
    year: Int32 | None = None
    quarter: Int32 | None = None
    language: str | None = Field(None, description='"en" or "zh".')
    doc_type: str | None = Field(None, description='"10K", "10Q", "EARNINGS", ...')
    origin: Literal["local", "web"] | None = None
    document_id: str | None = None


TaskName = Literal["lookup", "calculation", "extraction", "analysis"]


class Turn(_Strict):
    """An earlier turn of the conversation, held by the client."""

    role: Literal["user", "assistant"]
    text: str = Field(min_length=1, description="The question asked, or the answer shown.")


class AskBody(_Strict):
    """A question with the paper's three knobs (K, J and c), the conversation so far, and the task wanted."""

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description="English or Chinese. The orchestrator refuses a blank one (400) and one over its own "
        "ORCHESTRATOR_MAX_QUESTION_CHARS (2000 by default).",
    )
    top_k: Int32 | None = Field(None, description="K: passages retrieved per source; unset = deployment default.")
    top_j: Int32 | None = Field(None, description="J: passages given to the model (<= K); the rest is further reading.")
    threshold: float | None = Field(
        None, description="c in [-1, 1]: the web is consulted when the best local score is below it."
    )
    filters: Filters | None = None
    conversation_id: str = Field("", description="Echoed back in the done event.")
    temperature: float = Field(0.0, description="0 = generator default.")
    max_tokens: Int32 = Field(0, description="0 = generator default.")
    history: list[Turn] = Field(
        default_factory=list,
        description="Earlier turns, oldest first (at most the orchestrator's max_history_turns, 20 by default). "
        "A follow-up is rewritten into a standalone question before retrieval (route.standalone_question).",
    )
    task: TaskName | None = Field(None, description="The kind of answer wanted; unset = decided from the question.")
    json_keys: list[str] = Field(
        default_factory=list,
        description="Keys of an extraction's JSON answer; empty = read from the question.",
    )
    max_rounds: Int32 | None = Field(
        None, description="Plan-execute-express-review rounds of an analysis (0 = one pass); unset = default."
    )
    chart: bool | None = Field(
        None, description="Whether an analysis draws a chart; unset = only when the question asks for one."
    )
    facts: bool | None = Field(
        None,
        description="Whether a figure or metric question may be answered from the KB's statement facts, computed "
        "without the model; unset = the deployment default.",
    )


class DocumentMeta(_Strict):
    """Overrides what the ingester reads from the document itself."""

    title: str = ""
    company: str = ""
    year: Int32 = 0
    quarter: Int32 = 0
    language: str = Field("", description='"en", "zh" or "" (detect).')
    published_date: str = Field("", description="ISO 8601 date.")

    @field_validator("title", "company")
    @classmethod
    def _visible(cls, value: str) -> str:
        """Shown on one line: control characters (NUL, line breaks) become spaces, format characters (bidi
        overrides) go."""
        kept = (" " if unicodedata.category(c) == "Cc" else c for c in value if unicodedata.category(c) != "Cf")
        return " ".join("".join(kept).split())


class AddUrlBody(_Strict):
    """Save a web page to the knowledge base."""

    url: str = Field(description="http(s) URL on the public internet.")
    asynchronous: bool = Field(
        False, description="Queue it through Kafka (202) instead of waiting until searchable (201)."
    )
    metadata: DocumentMeta | None = None


class DocumentAdded(BaseModel):
    document_id: str
    title: str
    pages: int
    chunks: int
    queued: bool


DocumentOriginName = Literal["local", "web", "user"]


class DocumentProvenance(BaseModel):
    """How a document came in: `local` (a file or text), `web` (found by web search while answering
    `question`, with best passage score `best_score` >= c, at `found_at`) or `user` (a page a user saved).
    Documents stored before provenance was recorded have no times and `local` / `web` only."""

    origin: DocumentOriginName | Literal["unspecified"]
    added_at: datetime | None
    question: str
    best_score: float | None
    found_at: datetime | None


class DocumentInfo(BaseModel):
    """One document of the knowledge base, as its first chunk describes it."""

    document_id: str
    title: str
    source: str = Field(description="A URL or a file name.")
    language: str
    company: str
    aliases: list[str]
    year: int
    quarter: int
    doc_type: str
    published_date: str
    chunks: int
    provenance: DocumentProvenance


class DocumentList(BaseModel):
    """A page of documents, newest first; pass `next_page_token` as `page_token` for the next ("" = last)."""

    documents: list[DocumentInfo]
    next_page_token: str
    total_size: int = Field(description="Documents matching the filters, over all pages.")


class DocumentFact(BaseModel):
    """One figure read from one of the document's statement tables."""

    page: int = Field(description="Page of the table (1-based); 0 when the document has no pages.")
    table: str
    label: str = Field(description="The row label as printed.")
    concept: str = Field(description="Canonical line item (revenue, net_income, ...); empty when none fits.")
    period: str = Field(description="FY2024, Q3 2024, 9M 2024 or 'as of 2024-12-31'.")
    value: float = Field(description="As printed (signed); value times the scale is the amount.")
    scale: float
    unit: str = Field(description="currency, per_share, percent, shares or number.")
    currency: str


class DocumentDetails(BaseModel):
    document: DocumentInfo
    preview: str = Field(description="The text of the document's first chunk (at most 2000 characters).")
    facts: list[DocumentFact] = Field(
        default_factory=list, description="Figures read from its statement tables (at most 500, table order)."
    )


class DocumentDeleted(BaseModel):
    document_id: str
    deleted_chunks: int
    dedupe_cleared: bool = Field(description="The ingester forgot the page, so the same URL is stored again.")


class Timings(BaseModel):
    """Milliseconds per stage."""

    embed_ms: float
    local_search_ms: float
    rerank_ms: float
    web_search_ms: float
    web_fetch_ms: float
    web_embed_ms: float
    rank_ms: float
    first_token_ms: float
    generate_ms: float
    total_ms: float


class RouteInfo(BaseModel):
    """How the question was routed: local when the best local score >= c and the KB covers it."""

    route: Literal["local", "web", "unspecified"]
    best_local_score: float
    threshold: float
    top_k: int
    top_j: int
    web_status: str
    note: str
    filter: dict[str, str | int]
    timings: Timings
    pages_fetched: int
    pages_failed: int
    pages_timed_out: int
    documents_queued: int
    standalone_question: str = Field(
        description="The question as searched: the one asked, or its standalone rewrite when history was given."
    )
    task: TaskName | Literal["unspecified"]
    task_decided_by: str = Field(description='"request", "rules" or "llm"; empty when no task was decided.')
    route_reason: str = Field(
        "",
        description='Why this route: "covered", "low_score", or the coverage gap that sent the question away '
        '("company", "period", "quarter", "date", "name", "terms").',
    )
    verdict: str = Field(
        "",
        description='What the answer rests on, the badge word: "local", "web", "no_web" (weak local evidence, '
        'nothing from the web) or "refused".',
    )
    score_decided: bool = Field(False, description="Whether best_local_score against threshold decided the route.")
    notices: list[Notice] = Field(default_factory=list, description="The note as codes to render per language.")


class Notice(BaseModel):
    code: str = Field(description="Stable code (orchestrator.proto Notice lists them).")
    params: dict[str, str] = Field(default_factory=dict)
    text: str = Field("", description="English text.")


class Citation(BaseModel):
    """A passage, citable as [number]: `source` is a URL (web) or a file path (local), `page` 1-based or 0."""

    number: int
    title: str
    source: str
    page: int
    origin: Literal["local", "web", "unspecified"]
    score: float
    document_id: str
    text: str
    cited_in_answer: bool


class PromptInfo(BaseModel):
    """What the model is about to read (its size is the wait for the first token on a CPU)."""

    prompt_tokens: int
    context_tokens: int
    context_tokens_full: int
    passages_used: list[int]


class TokenEvent(BaseModel):
    """A piece of the answer text, in order."""

    text: str


class CitationsEvent(BaseModel):
    """The passages given to the model, numbered as the answer cites them."""

    citations: list[Citation]


class FurtherReadingEvent(BaseModel):
    """The retrieved passages not given to the model."""

    passages: list[Citation]


class StageInfo(BaseModel):
    """A finished stage of an analysis' plan-execute-express-review loop or of a task's steps."""

    stage: str = Field(description='"plan", "execute", "express", "review", "extract", "compute", "repair", ...')
    round: int = Field(description="1-based round of the loop.")
    ms: float
    detail: str
    sub_questions: list[str] = Field(description='"plan": the sub-questions; "execute": the one retrieved for.')
    passed: bool = Field(description='"review": whether every criterion passed.')


class FigureInfo(BaseModel):
    """A figure read from passage [passage] for a calculation."""

    label: str
    value: float
    unit: str
    text: str = Field(description="As written in the passage.")
    passage: int


class CalculationInfo(BaseModel):
    """A calculation done in code from cited figures (task "calculation")."""

    figures: list[FigureInfo]
    formula: str
    result: float
    unit: str
    result_text: str


class StructuredInfo(BaseModel):
    """An extraction's JSON (task "extraction"); `valid` only when it parses and has every requested key."""

    json_text: str = Field(alias="json", description="The JSON document; empty when none could be produced.")
    valid: bool
    missing_keys: list[str]
    errors: list[str]
    repaired: bool
    keys: list[str]

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class ChartSeriesInfo(BaseModel):
    name: str
    values: list[float] = Field(description="One value per category.")
    passages: list[int] = Field(description="Citation numbers of the passages the values come from.")


class ChartInfo(BaseModel):
    """Chart parameters (task "analysis"): the page draws them as SVG."""

    type: str = Field(description='"bar", "line" or "pie".')
    title: str
    categories: list[str]
    series: list[ChartSeriesInfo]
    x_label: str
    y_label: str
    unit: str


class DoneInfo(BaseModel):
    """Last event. When `replacement_answer` is set the answer was withheld (a figure is in no cited
    passage): show it instead of the text streamed so far."""

    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    model_id: str
    timings: Timings
    conversation_id: str
    answer_check: Literal["supported", "unsupported", "no_numbers", "refused", "unspecified"]
    unsupported_numbers: list[str]
    answer_cites_passages: bool
    replacement_answer: str
    replacement_reason: str = Field(
        description='Why the answer was withheld: "unsupported_figures" (a figure in no cited passage) or '
        '"names_nothing" (a which / who / what-kind question answered by restating it) or "lists_nothing" (a '
        'list announced, its items only citation markers); "" when it was not.'
    )
    task: TaskName | Literal["unspecified"]
    calculation: CalculationInfo | None = Field(description='Set for task "calculation".')
    structured: StructuredInfo | None = Field(description='Set for task "extraction".')
    chart: ChartInfo | None = Field(description='Set for task "analysis" when a chart was built.')


class RetrieveResult(BaseModel):
    route: RouteInfo
    passages: list[Citation]


class ErrorBody(BaseModel):
    """Every error: the service's message, the gRPC code name (or an HTTP reason) and the HTTP status."""

    detail: str
    code: str
    status: int
