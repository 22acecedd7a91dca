"""What the question flow yields, in order: the route, a prompt estimate, task stages, answer tokens,
citations, further reading, done. Plain types; servicer.py turns them into AskEvent protos."""

from __future__ import annotations

from dataclasses import dataclass, field

from weaverbird_orchestrator.domain import (
    GenerationDone,
    Passage,
    PromptPrepared,
    RouteDecision,
    Stage,
    Task,
)
from weaverbird_orchestrator.numeric_check import AnswerCheck
from weaverbird_orchestrator.outcomes import CalculationOutcome, ChartSpec, ExtractionOutcome


@dataclass(frozen=True)
class TokenEvent:
    text: str


@dataclass(frozen=True)
class CitationsEvent:
    passages: list[Passage]
    cited: set[int]


@dataclass(frozen=True)
class FurtherReadingEvent:
    passages: list[Passage]


@dataclass(frozen=True)
class TaskExtras:
    """The structured parts of a task's answer (each set only by its task; see tasks/)."""

    calculation: CalculationOutcome | None = None
    structured: ExtractionOutcome | None = None
    chart: ChartSpec | None = None


@dataclass(frozen=True)
class DoneEvent:
    generation: GenerationDone
    decision: RouteDecision
    conversation_id: str
    # Numeric check of the answer (see numeric_check.py).
    answer_check: AnswerCheck = "no_numbers"
    unsupported_numbers: tuple[str, ...] = ()
    answer_cites_passages: bool = False
    # Non-empty when numeric_check_policy "replace" withheld the answer: what clients show instead (the
    # stream stopped before the answer's first figure; the unary Ask returns only this).
    replacement: str = ""
    # Why it was withheld: "unsupported_figures", "names_nothing" or "lists_nothing" (see the proto's AnswerDone).
    replacement_reason: str = ""
    task: Task = Task.LOOKUP
    extras: TaskExtras = field(default_factory=TaskExtras)


AskEvent = RouteDecision | PromptPrepared | Stage | TokenEvent | CitationsEvent | FurtherReadingEvent | DoneEvent
