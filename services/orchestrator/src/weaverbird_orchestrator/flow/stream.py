"""The answer step of a lookup: one cited answer streamed from the generator and checked for figures no
passage supports."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

from weaverbird_common.wire_texts import insufficient

from weaverbird_orchestrator.answer_arithmetic import finish_arithmetic
from weaverbird_orchestrator.answer_ending import closing_events, counted_and_withheld, evidence_texts
from weaverbird_orchestrator.citations import cited_numbers
from weaverbird_orchestrator.clock import ms_since
from weaverbird_orchestrator.domain import AskParams, GenerationDone, PromptPrepared, Retrieval
from weaverbird_orchestrator.events import AskEvent, TaskExtras, TokenEvent
from weaverbird_orchestrator.figure_guard import FigureGuard
from weaverbird_orchestrator.flow.ports import Peers
from weaverbird_orchestrator.name_answer import echoes_name_question, lists_nothing
from weaverbird_orchestrator.numeric_check import check_answer, recite
from weaverbird_orchestrator.settings import OrchestratorSettings
from weaverbird_orchestrator.table_scale import with_table_scales

log = logging.getLogger(__name__)


class AnswerStream:
    """Streams the generator's answer over the top J passages, holding figures back under "replace"."""

    def __init__(self, peers: Peers, settings: OrchestratorSettings) -> None:
        self._peers = peers
        self._s = settings

    async def answer(
        self,
        params: AskParams,
        retrieval: Retrieval,
        start: float,
        *,
        extras: TaskExtras | None = None,
    ) -> AsyncIterator[AskEvent]:
        """One cited answer over the top J passages, streamed, checked for unsupported figures."""
        decision = retrieval.decision
        context = retrieval.for_model()
        refusal = insufficient(params.language)
        answer: list[str] = []
        # Under "replace" nothing from the first figure on is streamed before the check below passes it.
        guard = FigureGuard() if self._s.numeric_check_policy == "replace" else None
        gen_start = time.perf_counter()
        done: GenerationDone | None = None
        async for item in self._peers.generate(
            params.question, context, params.language, params.temperature, params.max_tokens
        ):
            if isinstance(item, GenerationDone):
                done = item
                continue
            if isinstance(item, PromptPrepared):
                yield item
                continue
            if not answer:
                decision.timings.first_token_ms = ms_since(gen_start)
            answer.append(item)
            shown = guard.feed(item) if guard else item
            if shown:
                yield TokenEvent(shown)
        decision.timings.generate_ms = ms_since(gen_start)
        decision.timings.total_ms = ms_since(start)

        text = "".join(answer)
        sources = evidence_texts(context)
        # Every figure must come from a passage the answer cites (all given passages if it cites none).
        check = check_answer(text, sources)
        if check.result == "unsupported" and guard is not None:
            # The right figure with the wrong [n]: point the citation at the passage holding it, if the
            # marker is still held back, rather than withhold a right figure or show a wrong source.
            fixed = recite(text, sources, editable_from=guard.released)
            if fixed is not None:
                log.info("citations re-pointed to the passages holding the figures: %r -> %r", text, fixed)
                text, check = fixed, check_answer(fixed, sources)
        cited = {n for n in cited_numbers(text) if 1 <= n <= len(context)}
        replace = counted_and_withheld(check, self._s.numeric_check_policy)
        reason = "unsupported_figures" if replace else ""
        if not replace and self._s.numeric_check_policy == "replace":
            if lists_nothing(text):
                # "The primary customers were the following: [1] [2] [3].": markers where items should be.
                log.info("answer announces a list and names none of its items: %r", text)
                replace, reason = True, "lists_nothing"
            elif echoes_name_question(text, params.question):
                # "Which ...?" answered "The largest X ... was $37,350 [3]": true figures, no answer.
                log.info("answer names nothing the question asks for: %r", text)
                replace, reason = True, "names_nothing"
        if not replace and guard is not None and (scaled := with_table_scales(text, sources, guard.released)):
            # "$1,824 [1]" copied from a cash flow statement "(in millions)": the table's scale, written out.
            log.info("table scales written out: %r -> %r", text, scaled)
            text = scaled
        if not replace and guard is not None and (done_sum := finish_arithmetic(text, guard.released)):
            # "by $4,200,000,000 - $3,800,000,000 [3]": both figures checked, the sum left undone; code does it.
            log.info("arithmetic the answer left undone, finished: %r -> %r", text, done_sum)
            text = done_sum
        if guard and (rest := guard.finish(supported=not replace, text=text)):
            yield TokenEvent(rest)
        for event in closing_events(
            params,
            retrieval,
            context,
            cited,
            done or GenerationDone("unknown", 0, 0, ""),
            answer_check=check.result,
            unsupported_numbers=check.unsupported,
            answer_cites_passages=check.cited,
            replacement=refusal if replace else "",
            replacement_reason=reason,
            extras=extras or TaskExtras(),
        ):
            yield event
