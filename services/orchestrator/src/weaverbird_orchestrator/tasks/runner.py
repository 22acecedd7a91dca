"""Answers the tasks beyond one lookup: a calculation done in code, a JSON extraction, an analysis with
a chart (plan-execute-express-review). Each yields its stages, then the same tail as a lookup (answer
text, citations, further reading, done), so every client sees one response shape."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

from weaverbird_common.telemetry import orchestrator_metrics

from weaverbird_orchestrator.answer_ending import closing_events, counted_and_withheld, evidence_texts
from weaverbird_orchestrator.clock import ms_since
from weaverbird_orchestrator.domain import (
    AskParams,
    Example,
    GenerationDone,
    Passage,
    PromptPrepared,
    Retrieval,
    Stage,
    Task,
)
from weaverbird_orchestrator.events import AskEvent, CitationsEvent, DoneEvent, TaskExtras, TokenEvent
from weaverbird_orchestrator.numeric_check import INSUFFICIENT, check_answer
from weaverbird_orchestrator.settings import OrchestratorSettings
from weaverbird_orchestrator.tasks.calculation import (
    CalcFigure,
    CalculationOutcome,
    calculation_line,
    figure_line,
    figures_header,
    read_calculation,
)
from weaverbird_orchestrator.tasks.chart import ChartSpec, chart_spec
from weaverbird_orchestrator.tasks.examples import default_bank
from weaverbird_orchestrator.tasks.extraction import extract_json, keys_from_question
from weaverbird_orchestrator.tasks.llm import Generator
from weaverbird_orchestrator.tasks.peer import PeerBudget, PeerOutcome, run_peer
from weaverbird_orchestrator.tasks.router import asks_for_explanation

Answer = Callable[..., AsyncIterator[AskEvent]]
Retrieve = Callable[[AskParams], Awaitable[Retrieval]]
SubParams = Callable[[AskParams, str], Awaitable[AskParams]]


class MeteredGenerator:
    """Passes task steps' calls to the generator and adds up what they cost (for the done event)."""

    def __init__(self, generator: Generator) -> None:
        self._generator = generator
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.model_id = ""

    async def generate(self, *args: Any, **kwargs: Any) -> AsyncIterator[str | PromptPrepared | GenerationDone]:
        """tasks/llm.Generator.generate, passed through unchanged."""
        stream = self._generator.generate(*args, **kwargs)
        prepared = streamed = 0  # for a call its consumer stops early, which ends without its done event
        finished = False
        try:
            async with aclosing(stream):  # a consumer that stops early cancels the call
                async for item in stream:
                    if isinstance(item, GenerationDone):
                        finished = True
                        self.prompt_tokens += item.prompt_tokens
                        self.completion_tokens += item.completion_tokens
                        self.cached_tokens += item.cached_tokens
                        self.model_id = item.model_id or self.model_id
                    elif isinstance(item, PromptPrepared):
                        prepared = item.prompt_tokens
                    else:
                        streamed += 1  # the generator streams one piece per model token
                    yield item
        finally:
            if not finished:
                self.prompt_tokens += prepared
                self.completion_tokens += streamed

    def done(self, finish_reason: str = "stop") -> GenerationDone:
        return GenerationDone(
            finish_reason, self.prompt_tokens, self.completion_tokens, self.model_id, self.cached_tokens
        )

    def added_to(self, g: GenerationDone) -> GenerationDone:
        """A later call's done event with this step's calls counted in (its finish reason and model kept)."""
        return GenerationDone(
            g.finish_reason,
            g.prompt_tokens + self.prompt_tokens,
            g.completion_tokens + self.completion_tokens,
            g.model_id or self.model_id,
            g.cached_tokens + self.cached_tokens,
        )


# The compute step's detail when nothing was computed (model calculations off).
NOT_COMPUTED = "not computed: no statement facts or table rows matched; the passages' stated figures answer instead"


class TaskRunner:
    """The non-lookup tasks over the flow's own retrieval and answer step."""

    def __init__(
        self,
        generator: Generator,
        settings: OrchestratorSettings,
        *,
        answer: Answer,
        retrieve: Retrieve,
        sub_params: SubParams,
    ) -> None:
        self._generator = generator
        self._s = settings
        self._answer = answer
        self._retrieve = retrieve
        self._sub_params = sub_params

    def _examples(self, task: Task, params: AskParams) -> list[Example]:
        if not self._s.few_shot_examples:
            return []
        if self._s.few_shot_selection == "fixed":
            return default_bank().first(task, params.language, self._s.few_shot_examples)
        return default_bank().select(task, params.language, params.question, self._s.few_shot_examples)

    def run(self, params: AskParams, retrieval: Retrieval, start: float) -> AsyncIterator[AskEvent]:
        if params.task is Task.CALCULATION:
            if self._s.model_calculations:
                return self._calculation(params, retrieval, start)
            return self._stated_figures(params, retrieval, start)
        if params.task is Task.EXTRACTION:
            return self._extraction(params, retrieval, start)
        if params.task is Task.ANALYSIS:
            return self._analysis(params, retrieval, start)
        return self._answer(params, retrieval, start)

    async def _stated_figures(self, params: AskParams, retrieval: Retrieval, start: float) -> AsyncIterator[AskEvent]:
        """A calculation neither the statement facts nor a table's rows could compute, with the model's own
        calculations off: the compute step says so, and the passages' stated figures answer it as a lookup
        (each checked against its passage; a result the model works out itself is in no passage and is
        withheld), so no figure the model copied is ever combined into a result that looks computed."""
        yield Stage("compute", 1, 0.0, NOT_COMPUTED, passed=False)
        async for event in self._answer(params, retrieval, start):
            yield event

    async def _calculation(self, params: AskParams, retrieval: Retrieval, start: float) -> AsyncIterator[AskEvent]:
        """The model copies the figures (with their passages) and a formula; code computes the result. Each
        figure is shown as soon as it is found in its passage; the result follows the formula."""
        decision, context = retrieval.decision, retrieval.for_model()
        generator = MeteredGenerator(self._generator)
        step = time.perf_counter()
        shown: list[CalcFigure] = []
        outcome: CalculationOutcome | None = None
        async for item in read_calculation(
            generator, params.question, context, params.language, self._examples(Task.CALCULATION, params)
        ):
            if isinstance(item, CalculationOutcome):
                outcome = item
            else:
                if not shown:
                    decision.timings.first_token_ms = ms_since(step)
                yield TokenEvent(
                    ("" if shown else figures_header(params.language)) + figure_line(item, params.language) + "\n"
                )
                shown.append(item)
        assert outcome is not None, "read_calculation ends with its outcome"
        detail = outcome.error or f"{outcome.formula} = {outcome.result_text}"
        yield Stage("compute", 1, ms_since(step), detail, passed=not outcome.error)
        if outcome.error:
            # Nothing the code could verify and compute: answer directly, checked like any lookup, after
            # the figures already shown (each was found in the passage it cites).
            first_figure_ms = decision.timings.first_token_ms if shown else None
            answer = self._answer(params, retrieval, start)
            async for event in _after_figures(answer, shown, generator, params, step, first_figure_ms):
                yield event
            return
        if not shown:
            decision.timings.first_token_ms = ms_since(step)
        decision.timings.generate_ms = ms_since(step)
        decision.timings.total_ms = ms_since(start)
        late = [f for f in outcome.figures if f.letter not in {s.letter for s in shown}]
        lines = "".join(figure_line(f, params.language) + "\n" for f in late)
        computed = calculation_line(outcome.formula, outcome.result_text, params.language)
        yield TokenEvent(("" if shown else figures_header(params.language)) + lines + computed)
        if asks_for_explanation(params.question):
            # "... and what explains the change?": the calculation answers one part; a checked answer over
            # the same passages answers the rest, after it.
            figures = "".join(figure_line(f, params.language) + "\n" for f in [*shown, *late])
            prefix = figures_header(params.language) + figures + computed + "\n\n"
            yield TokenEvent("\n\n")
            answer = self._answer(params, retrieval, start, extras=TaskExtras(calculation=outcome))
            async for event in _after_calculation(answer, outcome, generator, prefix):
                yield event
            return
        # Each figure was found in the passage it cites; the result is computed from them.
        orchestrator_metrics.ORCHESTRATOR_ANSWER_CHECKS.labels(result="supported").inc()
        cited = {f.passage for f in [*shown, *outcome.figures]}
        for event in closing_events(
            params,
            retrieval,
            context,
            cited,
            generator.done(),
            answer_check="supported",
            answer_cites_passages=True,
            extras=TaskExtras(calculation=outcome),
        ):
            yield event

    async def _extraction(self, params: AskParams, retrieval: Retrieval, start: float) -> AsyncIterator[AskEvent]:
        """JSON with the requested keys, validated (and repaired once); an invalid result says so."""
        decision, context = retrieval.decision, retrieval.for_model()
        generator = MeteredGenerator(self._generator)
        keys = list(params.json_keys) or keys_from_question(params.question)
        step = time.perf_counter()
        outcome = await extract_json(
            generator, params.question, context, params.language, keys, self._examples(Task.EXTRACTION, params)
        )
        detail = "valid" if outcome.valid else "invalid: " + "; ".join(outcome.errors)
        if outcome.repaired:
            detail += " (after one repair)"
        yield Stage("extract", 1, ms_since(step), detail, passed=outcome.valid)
        decision.timings.generate_ms = ms_since(step)
        decision.timings.total_ms = ms_since(start)
        insufficient = INSUFFICIENT.get(params.language, INSUFFICIENT["en"])
        if outcome.valid and outcome.value is not None:
            text = json.dumps(outcome.value, ensure_ascii=False, indent=2)
        else:
            text = insufficient
        check = check_answer(text, evidence_texts(context))
        replace = counted_and_withheld(check, self._s.numeric_check_policy)
        yield TokenEvent(insufficient if replace else text)
        for event in closing_events(
            params,
            retrieval,
            context,
            set(),
            generator.done(),
            answer_check=check.result,
            unsupported_numbers=check.unsupported,
            extras=TaskExtras(structured=outcome),
        ):
            yield event

    async def _analysis(self, params: AskParams, retrieval: Retrieval, start: float) -> AsyncIterator[AskEvent]:
        """Plan, execute (each sub-question through the same gate), express, review; then a chart."""
        generator = MeteredGenerator(self._generator)
        if not params.max_rounds:
            # A single pass: the chart's data, then one answer over the same passages.
            chart = await self._chart_of(generator, params, retrieval.for_model())
            if chart[0]:
                yield chart[0]
            async for event in self._answer(params, retrieval, start, extras=TaskExtras(chart=chart[1])):
                yield event
            return

        async def retrieve(sub_question: str) -> Retrieval:
            return await self._retrieve(await self._sub_params(params, sub_question))

        budget = PeerBudget(
            max_seconds=self._s.peer_max_seconds, max_completion_tokens=self._s.peer_max_completion_tokens
        )
        outcome: PeerOutcome | None = None
        async for item in run_peer(
            params.question,
            params.language,
            retrieve=retrieve,
            generator=generator,
            max_rounds=params.max_rounds,
            budget=budget,
            retrieved=retrieval,
            max_sub_questions=self._s.peer_max_sub_questions,
            max_tokens=params.max_tokens,
        ):
            if isinstance(item, PeerOutcome):
                outcome = item
            else:
                yield item
        assert outcome is not None, "run_peer ends with its outcome"
        chart = await self._chart_of(generator, params, outcome.passages)
        if chart[0]:
            yield chart[0]
        decision = retrieval.decision
        decision.timings.generate_ms = ms_since(start) - decision.timings.total_ms
        decision.timings.total_ms = ms_since(start)
        check = check_answer(outcome.answer, evidence_texts(outcome.passages))
        replace = counted_and_withheld(check, self._s.numeric_check_policy)
        insufficient = INSUFFICIENT.get(params.language, INSUFFICIENT["en"])
        yield TokenEvent(insufficient if replace else outcome.answer)
        for event in closing_events(
            params,
            retrieval,
            outcome.passages,
            outcome.cited,
            generator.done(),
            answer_check=check.result,
            unsupported_numbers=check.unsupported,
            answer_cites_passages=check.cited,
            extras=TaskExtras(chart=chart[1]),
        ):
            yield event

    async def _chart_of(
        self, generator: Generator, params: AskParams, passages: list[Passage]
    ) -> tuple[Stage | None, ChartSpec | None]:
        """The chart's spec over the answer's passages, and its stage; neither, and no model call, when
        nobody asked for a chart (AskParams.chart)."""
        if not params.chart:
            return None, None
        step = time.perf_counter()
        outcome = await chart_spec(
            generator, params.question, passages, params.language, self._examples(Task.ANALYSIS, params)
        )
        detail = f"{outcome.spec.type} chart" if outcome.spec else "no chart: " + "; ".join(outcome.errors)
        return Stage("chart", 1, ms_since(step), detail, passed=outcome.spec is not None), outcome.spec


async def _after_calculation(
    events: AsyncIterator[AskEvent], outcome: CalculationOutcome, calculation_step: MeteredGenerator, prefix: str
) -> AsyncIterator[AskEvent]:
    """The explanation's answer after a verified calculation: its citations also mark the figures'
    passages, its done event counts both model calls and keeps the calculation, and a withheld
    explanation keeps the calculation above its replacement."""
    async for event in events:
        if isinstance(event, CitationsEvent):
            event = CitationsEvent(event.passages, event.cited | {f.passage for f in outcome.figures})
        elif isinstance(event, DoneEvent):
            generation = calculation_step.added_to(event.generation)
            replacement = prefix + event.replacement if event.replacement else ""
            event = dataclasses.replace(event, generation=generation, replacement=replacement, task=Task.CALCULATION)
        yield event


async def _after_figures(
    events: AsyncIterator[AskEvent],
    shown: list[CalcFigure],
    figures_step: MeteredGenerator,
    params: AskParams,
    step: float,
    first_figure_ms: float | None,
) -> AsyncIterator[AskEvent]:
    """A failed calculation's lookup answer after the figures already streamed: its citations also mark
    the figures' passages, a replacement keeps the figures, and the done event counts both model calls
    and times generation from the figures step (the first token being the first figure, if one was shown)."""
    answer_start_ms = ms_since(step)
    prefix = "".join(figure_line(f, params.language) + "\n" for f in shown)
    if prefix:
        prefix = figures_header(params.language) + prefix + "\n"
        yield TokenEvent("\n")
    async for event in events:
        if isinstance(event, CitationsEvent):
            event = CitationsEvent(event.passages, event.cited | {f.passage for f in shown})
        elif isinstance(event, DoneEvent):
            generation = figures_step.added_to(event.generation)
            timings = event.decision.timings
            timings.generate_ms += answer_start_ms
            timings.first_token_ms = (
                first_figure_ms if first_figure_ms is not None else answer_start_ms + timings.first_token_ms
            )
            replacement = prefix + event.replacement if event.replacement and prefix else event.replacement
            event = dataclasses.replace(event, generation=generation, replacement=replacement)
        yield event


def sub_question_params(params: AskParams, question: str, filters: dict[str, str | int]) -> AskParams:
    """A sub-question's parameters: the parent's K, J, c and settings, its own question and filters."""
    return dataclasses.replace(params, question=question, filters=filters, history=(), task=Task.LOOKUP)
