"""QuestionFlow: the steps of answering one question, in order. Read the request (flow/request.py),
embed, search locally relaxing weak filters (flow/relaxation.py), gate on coverage (flow/gate.py), rerank,
decide the route and consult the web when it is WEB (flow/web_step.py), rank, then answer: from
statement facts (fact_path.py), by a refusal (answer_ending.py) or a streamed lookup (flow/stream.py), or as a task
(tasks/runner.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

from weaverbird_common.glossary import concepts
from weaverbird_common.periods import prefer_period, within_period, years_named

from weaverbird_orchestrator import fact_path, notices, table_path
from weaverbird_orchestrator.answer_ending import refuse
from weaverbird_orchestrator.catalog import CatalogCache
from weaverbird_orchestrator.clock import ms_since
from weaverbird_orchestrator.domain import AskParams, Passage, Retrieval, Route, RouteDecision, Task
from weaverbird_orchestrator.events import AskEvent
from weaverbird_orchestrator.flow.gate import CoverageGap, CoverageGate
from weaverbird_orchestrator.flow.ports import Peers, Publisher
from weaverbird_orchestrator.flow.relaxation import LocalSearch
from weaverbird_orchestrator.flow.request import RequestReader
from weaverbird_orchestrator.flow.stream import AnswerStream
from weaverbird_orchestrator.flow.web_step import WebStep
from weaverbird_orchestrator.ranker import best_cosine, rank
from weaverbird_orchestrator.rerank import NoReranker, Reranker
from weaverbird_orchestrator.settings import OrchestratorSettings
from weaverbird_orchestrator.tasks.runner import TaskRunner
from weaverbird_orchestrator.web import WebPath

log = logging.getLogger(__name__)


class QuestionFlow:
    """Answers questions from the local knowledge base, and from the web when local evidence is weak."""

    def __init__(
        self,
        peers: Peers,
        settings: OrchestratorSettings,
        web: WebPath | None = None,
        publisher: Publisher | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self._peers = peers
        self._s = settings
        # Peers that can tell the KB's size let the catalog notice an ingest or delete within a poll.
        self._catalog = CatalogCache(
            peers.catalog, settings.catalog_refresh_s, points=getattr(peers, "collection_points", None)
        )
        self._request = RequestReader(peers, settings, self._catalog)
        self._local = LocalSearch(peers, settings, self._catalog, reranker or NoReranker())
        self._gate = CoverageGate(peers, settings, self._catalog)
        self._web = WebStep(peers, web, publisher)
        self._stream = AnswerStream(peers, settings)
        # Validates a request and fills in deployment defaults (flow/request.py). Raises InvalidArgument.
        self.params = self._request.params
        self.default_threshold = self._request.default_threshold
        self.answer = self._stream.answer  # tasks/runner.py ends with it too
        self._tasks = TaskRunner(
            peers, settings, answer=self.answer, retrieve=self.retrieve, sub_params=self._sub_params
        )

    async def aclose(self) -> None:
        """Stops the catalog's background refresh."""
        await self._catalog.aclose()

    @property
    def max_history_turns(self) -> int:
        return self._s.max_history_turns

    async def _sub_params(self, params: AskParams, question: str) -> AskParams:
        """A sub-question of an analysis, with its own filters when the parent's came from its wording."""
        return await self._request.sub_params(params, question)

    async def retrieve(self, params: AskParams) -> Retrieval:
        """Embeds the question, searches the KB and decides the route; no generation."""
        start = time.perf_counter()
        vector = await self._peers.embed_query(params.question)
        embed_ms = ms_since(start)

        search_start = time.perf_counter()
        local = await self._local.search(params, vector)
        told = local.told
        gap = CoverageGap()
        if local.uncovered:
            gap = CoverageGap(f"the knowledge base holds nothing about {local.uncovered}", "", "company")
        elif self._s.coverage_gate and params.filters_from_question:
            gap = await self._gate.gap(params, vector, local.hits)
        search_ms = ms_since(search_start)
        rerank_start = time.perf_counter()
        hits = await self._local.rerank(params.question, local.hits, params.top_k)
        rerank_ms = ms_since(rerank_start)

        best = best_cosine(hits)
        decision = RouteDecision(
            route=Route.LOCAL,
            best_local_score=best,
            threshold=params.threshold,
            top_k=params.top_k,
            top_j=params.top_j,
            web_status="not_needed",
            note="",
            filters=dict(local.filters),
            standalone_question=params.question if params.history else "",
            task=params.task,
            task_decided_by=params.task_decided_by,
        )
        decision.timings.embed_ms = embed_ms
        decision.timings.local_search_ms = search_ms
        decision.timings.rerank_ms = rerank_ms
        web_passages: list[Passage] = []
        if best < params.threshold or gap.reason:
            decision.route = Route.WEB
            decision.reason = (gap.gap or "company") if gap.reason else "low_score"
            decision.score_decided = not gap.reason
            if gap.reason:
                told.append(notices.coverage_gap(gap.reason, decision.reason))
            else:
                told.append(notices.low_score(best, params.threshold))
            web_passages = await self._web.consult(params, vector, decision, told, gap.filed_under)
        else:
            # Covered, and the score cleared c: the comparison is what kept it local.
            decision.score_decided = True
        decision.notices = told
        decision.note = notices.note_text(told)
        rank_start = time.perf_counter()
        # Passages of other companies or periods must not outrank the web pages about the one the KB lacks.
        # When only the question's words were missing, the local passages compete with the web's on score.
        local_passages = [] if gap.reason and gap.gap != "terms" and web_passages else hits
        ranked = rank(local_passages, web_passages)[: params.top_k]
        year = params.filters.get("year")
        if isinstance(year, int):
            # A passage about another fiscal year (an outlook, a comparative table) must not be [1].
            ranked = prefer_period(ranked, year, lambda p: p.text)
        named = years_named(params.question)
        if named and "§guidance" not in concepts(params.question):
            # A company's documents of a year before every year the question names cannot state its
            # figures; beside its later ones they are left out.
            ranked = within_period(ranked, min(named), lambda p: (p.company, p.year))
        decision.timings.rank_ms = ms_since(rank_start)
        decision.timings.total_ms = ms_since(start)
        retrieval = Retrieval(decision=decision, ranked=ranked)
        decision.verdict = notices.verdict(decision, retrieval.for_model(), self._s.refuse_without_evidence)
        return retrieval

    async def ask(self, params: AskParams) -> AsyncIterator[AskEvent]:
        """Runs the whole flow, yielding the route, answer tokens, citations, further reading, done.

        A lookup is answered in one generation; other tasks go through tasks/runner.py (their stages
        arrive as Stage events before the answer)."""
        start = time.perf_counter()
        retrieval = await self.retrieve(params)
        facts = await self._fact_reply(params)
        if facts is not None:
            fact_path.take_local(retrieval)
        else:
            facts = self._table_reply(params, retrieval)
        yield retrieval.decision
        if facts is not None:
            events = fact_path.reply_events(
                facts, retrieval, params.conversation_id, params.task, lambda: ms_since(start)
            )
        elif retrieval.decision.verdict == "refused":
            # The gate found the local passages weak and the web added none (off, failed or skipped):
            # decided with what the user is told (notices.verdict).
            events = refuse(params, retrieval, start)
        elif params.task is Task.LOOKUP:
            events = self.answer(params, retrieval, start)
        else:
            events = self._tasks.run(params, retrieval, start)
        async for event in events:
            yield event

    async def _fact_reply(self, params: AskParams) -> fact_path.FactReply | None:
        """A figure or metric answered from statement facts (fact_path), or None for the passage path.
        Lookups and calculations only; a fact store that fails never fails the question."""
        lookup = getattr(self._peers, "lookup_facts", None)
        if not params.facts or lookup is None or params.task not in (Task.LOOKUP, Task.CALCULATION):
            return None
        company = params.filters.get("company")
        try:
            return await fact_path.answer_from_kb(params.question, str(company or ""), params.language, lookup)
        except Exception as exc:  # the passage path still answers
            log.warning("fact lookup failed, answering from passages: %s: %s", type(exc).__name__, exc)
            return None

    @staticmethod
    def _table_reply(params: AskParams, retrieval: Retrieval) -> fact_path.FactReply | None:
        """A calculation answered in code from the rows of a top KB passage's table (table_path), or None.
        A lookup too, where its words ask for a combination outright ("the ratio of A to B"). Only when the
        KB covers the question (a route to the web or a refusal keeps its own path) and its search was
        narrowed to the company the question names: without one, the top passages hold other reports' rows
        of the same names (over TAT-QA's 1,644 chunks the reader then answered 115 of 200 questions, 71 of
        them wrong, docs/experiments.md)."""
        decision = retrieval.decision
        if not params.facts or params.task not in (Task.LOOKUP, Task.CALCULATION):
            return None
        if decision.route is not Route.LOCAL or decision.verdict == "refused" or not decision.filters.get("company"):
            return None
        lookup = params.task is Task.LOOKUP
        return table_path.answer_from_tables(params.question, retrieval.ranked, params.language, lookup)
