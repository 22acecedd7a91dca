"""How every answer ends, whatever produced it (a lookup's stream, a calculation, an extraction, an
analysis): its figures checked against the passages, then citations, further reading and the done event."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from weaverbird_common import telemetry

from weaverbird_orchestrator.domain import AskParams, GenerationDone, Passage, Retrieval
from weaverbird_orchestrator.events import AskEvent, CitationsEvent, DoneEvent, FurtherReadingEvent
from weaverbird_orchestrator.numeric_check import NumericCheck


def evidence_texts(passages: Sequence[Passage]) -> list[str]:
    """The passages as the numeric check reads them (title and heading hold figures' periods too)."""
    return [f"{p.title}\n{p.heading}\n{p.text}" for p in passages]


def counted_and_withheld(check: NumericCheck, policy: str) -> bool:
    """Counts the answer's check (ORCHESTRATOR_ANSWER_CHECKS) and says whether the numeric check policy
    withholds the answer ("replace" and a figure no passage supports)."""
    telemetry.ORCHESTRATOR_ANSWER_CHECKS.labels(result=check.result).inc()
    return check.result == "unsupported" and policy == "replace"


def closing_events(
    params: AskParams,
    retrieval: Retrieval,
    passages: list[Passage],
    cited: set[int],
    generation: GenerationDone,
    **done: Any,
) -> Iterator[AskEvent]:
    """Citations (of `passages`), further reading and the done event; `done` holds the rest of DoneEvent's
    fields (the answer's check, a replacement, the task's extras)."""
    yield CitationsEvent(passages, cited)
    yield FurtherReadingEvent(retrieval.further_reading())
    yield DoneEvent(
        generation=generation,
        decision=retrieval.decision,
        conversation_id=params.conversation_id,
        task=params.task,
        **done,
    )
