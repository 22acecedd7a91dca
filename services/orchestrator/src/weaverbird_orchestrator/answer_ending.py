"""How every answer ends, whatever produced it (a lookup's stream, a calculation, an extraction, an
analysis): its figures checked against the passages, then citations, further reading and the done event;
and the refusal, the ending without an answer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from weaverbird_common.telemetry import orchestrator_metrics
from weaverbird_common.wire_texts import insufficient

from weaverbird_orchestrator.clock import ms_since
from weaverbird_orchestrator.domain import AskParams, GenerationDone, Passage, Retrieval
from weaverbird_orchestrator.events import AskEvent, CitationsEvent, DoneEvent, FurtherReadingEvent, TokenEvent
from weaverbird_orchestrator.numeric_check import NumericCheck


def evidence_texts(passages: Sequence[Passage]) -> list[str]:
    """The passages as the numeric check reads them (title and heading hold figures' periods too)."""
    return [f"{p.title}\n{p.heading}\n{p.text}" for p in passages]


def counted_and_withheld(check: NumericCheck, policy: str) -> bool:
    """Counts the answer's check (ORCHESTRATOR_ANSWER_CHECKS) and says whether the numeric check policy
    withholds the answer ("replace" and a figure no passage supports)."""
    orchestrator_metrics.ORCHESTRATOR_ANSWER_CHECKS.labels(result=check.result).inc()
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


async def refuse(params: AskParams, retrieval: Retrieval, start: float) -> AsyncIterator[AskEvent]:
    """A small model answers anyway, from the wrong company's or year's figures. Say so instead,
    without a model call, and offer every retrieved passage as further reading."""
    decision = retrieval.decision
    yield TokenEvent(insufficient(params.language))
    yield CitationsEvent([], set())
    yield FurtherReadingEvent(list(retrieval.ranked))
    decision.timings.total_ms = ms_since(start)
    orchestrator_metrics.ORCHESTRATOR_ANSWER_CHECKS.labels(result="refused").inc()
    yield DoneEvent(
        generation=GenerationDone("refused", 0, 0, ""),
        decision=decision,
        conversation_id=params.conversation_id,
        answer_check="refused",
        task=params.task,
    )
