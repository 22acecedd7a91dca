"""Plain data types of the question-answering flow, independent of gRPC."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

# Re-exported: the flow's code names them as domain types.
from weaverbird_common.conversation import Example as Example
from weaverbird_common.conversation import Turn as Turn


class Route(Enum):
    LOCAL = "local"
    WEB = "web"


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk with its similarity to the question."""

    id: str
    text: str
    score: float
    document_id: str
    title: str
    source: str
    page: int
    origin: str  # "local" | "web"
    heading: str = ""
    # Share of the question's terms it holds; None when the search did not ask (read by the coverage gate).
    term_coverage: float | None = None
    # Company and fiscal year its document covers ("" / 0: unknown, as for web pages).
    company: str = ""
    year: int = 0


class Task(Enum):
    """What kind of answer a question asks for (see tasks/router.py)."""

    LOOKUP = "lookup"
    CALCULATION = "calculation"
    EXTRACTION = "extraction"
    ANALYSIS = "analysis"


@dataclass(frozen=True)
class AskParams:
    """A validated question with the K / J / c in force for it."""

    question: str
    top_k: int
    top_j: int
    threshold: float
    filters: dict[str, str | int]
    filters_from_question: bool
    language: str
    temperature: float = 0.0
    max_tokens: int = 0
    conversation_id: str = ""
    # Client-held conversation, oldest first; `question` is then the standalone rewrite of the last
    # turn and `asked` what the user typed.
    history: tuple[Turn, ...] = ()
    asked: str = ""
    # Decided by the request, or from the question (tasks/router.py).
    task: Task = Task.LOOKUP
    task_decided_by: str = ""
    json_keys: tuple[str, ...] = ()
    # None = deployment default; 0 = single pass.
    max_rounds: int | None = None
    # Whether an analysis draws a chart: the request's flag, else whether the question asks for one.
    chart: bool = False
    # Whether a figure question may be answered from statement facts (fact_path): the request's flag,
    # else ORCHESTRATOR_FACTS_ANSWERS.
    facts: bool = True


@dataclass
class Timings:
    """Milliseconds per stage."""

    embed_ms: float = 0.0
    local_search_ms: float = 0.0
    rerank_ms: float = 0.0
    web_search_ms: float = 0.0
    web_fetch_ms: float = 0.0
    web_embed_ms: float = 0.0
    rank_ms: float = 0.0
    first_token_ms: float = 0.0
    generate_ms: float = 0.0
    total_ms: float = 0.0


@dataclass(frozen=True)
class Notice:
    """A note for the user: a stable code, its parameters (plain text) and its English text (notices.py)."""

    code: str
    params: Mapping[str, str] = field(default_factory=dict)
    text: str = ""


@dataclass
class RouteDecision:
    """Where the answer's evidence comes from and why."""

    route: Route
    best_local_score: float
    threshold: float
    top_k: int
    top_j: int
    web_status: str
    note: str
    filters: dict[str, str | int]
    timings: Timings = field(default_factory=Timings)
    pages_fetched: int = 0
    pages_failed: int = 0
    pages_timed_out: int = 0
    documents_queued: int = 0
    standalone_question: str = ""
    task: Task | None = None
    task_decided_by: str = ""
    # Why this route (RouteEvent.route_reason): "covered", "low_score" or the coverage gap's kind.
    reason: str = "covered"
    # What the user is told (notices.verdict): "local", "web", "no_web" or "refused".
    verdict: str = "local"
    # Whether the best score against c decided the route (a coverage gap decides whatever the score).
    score_decided: bool = False
    notices: list[Notice] = field(default_factory=list)


@dataclass
class Retrieval:
    """Result of the retrieval path: the decision and the ranked passages (first J go to the model)."""

    decision: RouteDecision
    ranked: list[Passage]

    def for_model(self) -> list[Passage]:
        return self.ranked[: self.decision.top_j]

    def further_reading(self) -> list[Passage]:
        return self.ranked[self.decision.top_j : self.decision.top_k]


@dataclass(frozen=True)
class PromptPrepared:
    """The generator's estimate of what the model is about to read (before its first token)."""

    prompt_tokens: int
    context_tokens: int
    context_tokens_full: int
    passages_used: tuple[int, ...]


@dataclass(frozen=True)
class Stage:
    """A finished step of a task (plan, execute, express, review, extract, compute, repair, chart)."""

    stage: str
    round: int
    ms: float
    detail: str = ""
    sub_questions: tuple[str, ...] = ()
    passed: bool = True


@dataclass(frozen=True)
class GenerationDone:
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    model_id: str
    cached_tokens: int = 0
