"""Figure questions answered from the KB's statement facts, in code, before any model call.

A question that names a line item or a metric of a company and period (facts.question) is looked up
through the retriever's LookupFacts; the answer is the fact or the metric computed from facts
(facts.answer): value with unit and scale, the formula, and a citation per page the figures come from.
A missing fact, two different values for one concept and period, or a question the rules cannot read
returns None and the passage path answers as before.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from weaverbird_common.facts.answer import FactAnswer, amount_text, answer_from_facts, concepts_for
from weaverbird_common.facts.model import Fact
from weaverbird_common.facts.question import FigureQuestion, read_question
from weaverbird_common.facts.units import multiplier_word

from weaverbird_orchestrator import notices
from weaverbird_orchestrator.domain import GenerationDone, Passage, Retrieval, Route
from weaverbird_orchestrator.events import (
    AskEvent,
    CitationsEvent,
    DoneEvent,
    FurtherReadingEvent,
    TaskExtras,
    TokenEvent,
)
from weaverbird_orchestrator.outcomes import CalcFigure, CalculationOutcome

log = logging.getLogger(__name__)

LookupFacts = Callable[[str, Sequence[str], Sequence[int]], Awaitable[list[Fact]]]


@dataclass(frozen=True)
class FactReply:
    """The answer text (citations [n] over `passages`), the passages cited, and what was computed."""

    text: str
    passages: list[Passage]
    answer: FactAnswer
    miss: str = ""
    numbers: tuple[int, ...] = ()  # the citation [n] of each of answer.used


def _concepts(question: FigureQuestion) -> list[str]:
    if question.metric is None:
        return list(concepts_for(question.concept))
    names = [i.concept for i in question.metric.inputs.values()]
    for _, inputs in question.metric.alternatives:
        names += [i.concept for i in inputs.values()]
    return list(dict.fromkeys(c for name in names for c in concepts_for(name)))


def _passage(fact: Fact) -> Passage:
    """What a figure cites: its document's page, shown as the statement row it was read from."""
    scale = multiplier_word(fact.scale) or (fact.scale_text or "")
    value = f"{fact.value:,.2f}".rstrip("0").rstrip(".")
    text = f"{fact.table}\n{fact.label} ({fact.period.label()}): {value} {scale} {fact.currency}".strip()
    return Passage(
        id=f"fact:{fact.document_id}:{fact.page or 0}",
        text=text,
        score=1.0,
        document_id=fact.document_id,
        title=fact.title or fact.company,
        source=fact.source,
        page=fact.page or 0,
        origin="local",
        heading=fact.table,
    )


class _Citations:
    """[n] per document page, numbered as the answer first cites them."""

    def __init__(self) -> None:
        self.passages: list[Passage] = []
        self._index: dict[tuple[str, int], int] = {}

    def __call__(self, fact: Fact) -> int:
        key = (fact.document_id, fact.page or 0)
        if key not in self._index:
            self.passages.append(_passage(fact))
            self._index[key] = len(self.passages)
        return self._index[key]


async def answer_from_kb(question: str, company: str, language: str, lookup: LookupFacts) -> FactReply | None:
    """The fact answer to `question` about `company` (a catalog key), or None for the passage path."""
    if not company:
        return None
    read = read_question(question)
    if read is None:
        return None
    years = sorted({y for year in read.years for y in (year, year - 1)})
    facts = await lookup(company, _concepts(read), years)
    if not facts:
        return None
    cites = _Citations()
    result = answer_from_facts(read, facts, cites, language)
    if not isinstance(result, FactAnswer):
        log.info("facts could not answer %r: %s %s", question, result.reason, result.detail)
        return None
    return FactReply(result.text, cites.passages, result, numbers=tuple(cites(f) for f in result.used))


def calculation(reply: FactReply) -> CalculationOutcome:
    """What the page and CLI show under a computed answer: the formula and each figure cited to its page."""
    answer = reply.answer
    figures = tuple(
        CalcFigure(
            letter="",
            label=f"{fact.label} ({fact.period.label()})",
            text=amount_text(fact.amount, fact),
            passage=number,
            value=fact.value,
            scale=fact.scale if fact.unit == "currency" and fact.scale > 0 else 1.0,
            percent=fact.unit == "percent",
        )
        for fact, number in zip(answer.used, reply.numbers, strict=True)
    )
    formula = "; ".join(p for p in (answer.formula if answer.steps else "", *answer.steps) if p)
    result, unit = answer.value, ""
    if answer.unit in ("percent", "percentage points"):
        result = answer.value * 100 if answer.metric else answer.value
        unit = "%" if answer.unit == "percent" else answer.unit
    elif answer.unit in ("days", "times"):
        unit = answer.unit
    elif answer.unit in ("currency", "per_share", "shares") and figures:
        result, unit = answer.value / figures[0].scale, figures[0].unit
    return CalculationOutcome(figures=figures, formula=formula, result=result, unit=unit, answer=reply.text)


def take_local(retrieval: Retrieval) -> None:
    """The KB's own facts answer: the route is local whatever the passages scored."""
    decision = retrieval.decision
    decision.route = Route.LOCAL
    decision.verdict = "local"
    decision.reason = "facts"
    decision.score_decided = False
    # What the gate said about passages does not apply to an answer read from statements.
    decision.notices = [notices.FACTS_ANSWER]
    decision.note = notices.note_text(decision.notices)


async def reply_events(
    reply: FactReply, retrieval: Retrieval, conversation_id: str, task: object, elapsed_ms: Callable[[], float]
) -> AsyncIterator[AskEvent]:
    """The events of a fact answer, in the passage path's order: tokens, citations, reading, done."""
    decision = retrieval.decision
    decision.timings.first_token_ms = elapsed_ms()
    yield TokenEvent(reply.text)
    yield CitationsEvent(reply.passages, set(range(1, len(reply.passages) + 1)))
    yield FurtherReadingEvent(list(retrieval.ranked))
    decision.timings.total_ms = elapsed_ms()
    yield DoneEvent(
        generation=GenerationDone("facts", 0, 0, "facts"),
        decision=decision,
        conversation_id=conversation_id,
        answer_check="supported",
        answer_cites_passages=True,
        task=task,  # type: ignore[arg-type]
        extras=TaskExtras(calculation=calculation(reply)),
    )
