"""The WeaverBird question-answering flow: validate, embed, search, gate on c, rank, generate, cite."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Protocol

from weaverbird_common import telemetry
from weaverbird_common.coverage import KnownNames, assess, names_to_look_up, period_covered, unknown_companies
from weaverbird_common.dates import latest_date
from weaverbird_common.errors import InvalidArgument
from weaverbird_common.ingest_messages import IngestMessage
from weaverbird_common.periods import prefer_period
from weaverbird_common.questions import detect_language, filters_from_question, search_filters
from weaverbird_common.zh_names import LOOKUP_HITS, chinese_names, holds_name

from weaverbird_orchestrator import fact_path, notices
from weaverbird_orchestrator.catalog import Catalog, CatalogCache
from weaverbird_orchestrator.citations import cited_numbers
from weaverbird_orchestrator.cross_names import CrossLanguageNames
from weaverbird_orchestrator.domain import (
    AskParams,
    Example,
    GenerationDone,
    Notice,
    Passage,
    PromptPrepared,
    Retrieval,
    Route,
    RouteDecision,
    Task,
    Turn,
)
from weaverbird_orchestrator.events import (
    AskEvent,
    CitationsEvent,
    DoneEvent,
    FurtherReadingEvent,
    TaskExtras,
    TokenEvent,
)
from weaverbird_orchestrator.figure_guard import FigureGuard
from weaverbird_orchestrator.numeric_check import INSUFFICIENT, check_answer, recite
from weaverbird_orchestrator.ranker import best_cosine, rank
from weaverbird_orchestrator.rerank import NoReranker, Reranker, rerank_passages
from weaverbird_orchestrator.settings import OrchestratorSettings
from weaverbird_orchestrator.tasks.followup import standalone_question
from weaverbird_orchestrator.tasks.router import asks_for_chart, classify, llm_choice
from weaverbird_orchestrator.tasks.runner import TaskRunner, sub_question_params
from weaverbird_orchestrator.thresholds import threshold_for
from weaverbird_orchestrator.web import WebPath
from weaverbird_orchestrator.web_evidence import ingest_message, score_web_chunks


def _best_term_coverage(passages: Sequence[Passage]) -> float | None:
    """The largest share of the question's terms one passage holds (the first K of the question's own
    search, as `weaverbird eval route` measures it); None when no passage was measured (a retriever older
    than the field), so the gate does not read "nothing covered" into a missing number."""
    shares = [p.term_coverage for p in passages if p.term_coverage is not None]
    return max(shares) if shares else None


def _texts(passages: Sequence[Passage]) -> list[str]:
    return [f"{p.title}\n{p.text}" for p in passages]


class Peers(Protocol):
    """What the flow needs from the embedder, retriever and generator services."""

    async def embed_query(self, text: str) -> list[float]: ...

    async def embedder_model(self) -> str: ...

    async def search(
        self,
        vector: list[float],
        k: int,
        filters: Mapping[str, str | int],
        text: str = "",
        mode: str = "",
        *,
        term_coverage: bool = False,
    ) -> list[Passage]: ...

    async def catalog(self) -> Catalog: ...

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    def generate(
        self,
        question: str,
        passages: list[Passage],
        language: str,
        temperature: float,
        max_tokens: int,
        *,
        task: str = "",
        examples: Sequence[Example] = (),
        instruction: str = "",
        history: Sequence[Turn] = (),
    ) -> AsyncIterator[str | PromptPrepared | GenerationDone]: ...


log = logging.getLogger(__name__)


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


class Publisher(Protocol):
    """Hands web documents to the asynchronous ingestion path without waiting."""

    def publish(self, message: IngestMessage) -> None: ...


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
        self._web = web
        self._publisher = publisher
        self._default_threshold = settings.threshold
        # Peers that can tell the KB's size let the catalog notice an ingest or delete within a poll.
        self._catalog = CatalogCache(
            peers.catalog, settings.catalog_refresh_s, points=getattr(peers, "collection_points", None)
        )
        self._known_for: Catalog | None = None  # the catalog _known_keys were built from
        self._known_keys = (KnownNames(()), KnownNames(()))
        self._deployment_names = KnownNames(settings.known_companies)  # ORCHESTRATOR_KNOWN_COMPANIES
        self._reranker = reranker or NoReranker()
        self._cross_names = CrossLanguageNames(peers)
        self._tasks = TaskRunner(
            peers, settings, answer=self.answer, retrieve=self.retrieve, sub_params=self._sub_params
        )

    async def aclose(self) -> None:
        """Stops the catalog's background refresh."""
        await self._catalog.aclose()

    @property
    def max_history_turns(self) -> int:
        return self._s.max_history_turns

    async def default_threshold(self) -> float:
        """Deployment c: configured, or calibrated for the embedder's model (asked once)."""
        if self._default_threshold is None:
            self._default_threshold = threshold_for(await self._peers.embedder_model())
        return self._default_threshold

    async def params(
        self,
        question: str,
        *,
        top_k: int | None = None,
        top_j: int | None = None,
        threshold: float | None = None,
        filters: Mapping[str, str | int] | None = None,
        temperature: float = 0.0,
        max_tokens: int = 0,
        conversation_id: str = "",
        history: Sequence[Turn] = (),
        task: Task | None = None,
        json_keys: Sequence[str] = (),
        max_rounds: int | None = None,
        chart: bool | None = None,
        facts: bool | None = None,
    ) -> AskParams:
        """Validates a request and fills in deployment defaults. Raises InvalidArgument.

        A follow-up (history given) is rewritten into a standalone question first, and the task is
        decided from that question unless the request names one."""
        question = question.strip()
        if not question:
            raise InvalidArgument("question must not be empty")
        if len(question) > self._s.max_question_chars:
            raise InvalidArgument(f"question has {len(question)} characters; the limit is {self._s.max_question_chars}")
        k = top_k or self._s.top_k
        if not 1 <= k <= self._s.max_top_k:
            raise InvalidArgument(f"top_k must be between 1 and {self._s.max_top_k}, got {k}")
        j = top_j or min(self._s.top_j, k)
        if not 1 <= j <= k:
            raise InvalidArgument(f"top_j must be between 1 and top_k ({k}), got {j}")
        c = await self.default_threshold() if threshold is None else threshold
        if math.isnan(c) or not -1.0 <= c <= 1.0:
            raise InvalidArgument(f"threshold must be a cosine in [-1, 1], got {c}")
        if not 0.0 <= temperature <= 2.0:
            raise InvalidArgument(f"temperature must be in [0, 2], got {temperature}")
        if max_tokens < 0:
            raise InvalidArgument("max_tokens must not be negative")
        asked = question
        if history:
            question = await self._standalone(question, history)
        chosen_task, decided_by = (task, "request") if task is not None else await self._decide_task(question)
        extracted = not filters
        chosen = dict(filters) if filters else await self._filters_from_question(question)
        return AskParams(
            question=question,
            top_k=k,
            top_j=j,
            threshold=c,
            filters=chosen,
            filters_from_question=extracted,
            language=detect_language(question),
            temperature=temperature,
            max_tokens=min(max_tokens or self._s.max_answer_tokens, self._s.max_answer_tokens),
            conversation_id=conversation_id,
            history=tuple(history),
            asked=asked,
            task=chosen_task,
            task_decided_by=decided_by,
            json_keys=tuple(json_keys),
            max_rounds=self._s.peer_max_rounds if max_rounds is None else max_rounds,
            chart=asks_for_chart(question) if chart is None else chart,
            facts=self._s.facts_answers if facts is None else facts,
        )

    async def _sub_params(self, params: AskParams, question: str) -> AskParams:
        """A sub-question of an analysis, with its own filters when the parent's came from its wording."""
        filters = await self._filters_from_question(question) if params.filters_from_question else params.filters
        return sub_question_params(params, question, dict(filters))

    async def _standalone(self, question: str, history: Sequence[Turn]) -> str:
        """The follow-up as a question that stands alone (tasks/followup.py), for retrieval and the model."""
        catalog = await self._catalog.get()
        known = [*catalog.companies, *self._s.known_companies]
        return await standalone_question(
            question,
            history,
            mode=self._s.followup_rewrite,
            generator=self._peers,
            known_companies=known,
            aliases=catalog.aliases,
        )

    async def _decide_task(self, question: str) -> tuple[Task, str]:
        """The question's task and what decided it (tasks/router.py)."""
        if self._s.task_routing == "off":
            return Task.LOOKUP, "off"
        if self._s.task_routing == "llm":
            choice = await llm_choice(self._peers, question, detect_language(question))
            return choice.task, choice.decided_by
        return classify(question).task, "rules"

    async def _filters_from_question(self, question: str) -> dict[str, str | int]:
        """Company / year / quarter named in the question, companies matched against the KB's catalog
        (names and aliases its documents use) plus any the deployment lists."""
        catalog = await self._catalog.get()
        known = [*catalog.companies, *self._s.known_companies]
        found = filters_from_question(question, known, aliases=catalog.aliases)
        if "company" not in found and self._s.cross_language_names and catalog.companies:
            # "亚马逊" for AMAZON's 10-K: the company's name in the other language (cross_names.py).
            language = detect_language(question)
            if company := await self._cross_names.company(question, language, catalog.companies, catalog.aliases):
                found["company"] = company
        return found

    def _search_depth(self, params: AskParams) -> int:
        """Hits fetched per search: K, or the reranker's candidate pool when a reranker runs."""
        if isinstance(self._reranker, NoReranker):
            return params.top_k
        return min(max(params.top_k, self._s.rerank_candidates), self._s.max_top_k * 5)

    async def _rerank(self, question: str, hits: list[Passage], top_k: int) -> list[Passage]:
        """The reranker's order of the candidates, cut to K; cosines stay as they were for the gate."""
        if isinstance(self._reranker, NoReranker):
            return hits[:top_k]
        reranked = await rerank_passages(self._reranker, question, hits, self._s.rerank_candidates)
        return [r.passage for r in reranked][:top_k]

    async def _coverage_gap(
        self, params: AskParams, vector: list[float], found: Sequence[Passage] = ()
    ) -> tuple[str, str, str]:
        """Why the KB does not cover the question ("" when it does), from its catalog: a fiscal year or
        quarter of a KB company it has no document for, a company the catalog does not know, a name that no chunk
        mentions, or (no KB company named) passages that hold too few of its words (weaverbird_common.coverage);
        the company its web pages are filed under: the unknown company, or the deployment's known company
        an unknown name stands for; and the kind of gap (Coverage.gap: "period", "terms" ...)."""
        catalog = await self._catalog.get()
        unknown: list[str] = []
        if "company" not in params.filters and params.language == "en":
            with_deployment, in_catalog = self._known_names(catalog)
            missing = unknown_companies(params.question, with_deployment)
            if missing:
                gap = assess(params.filters, catalog.years, [], missing_companies=missing)
                return gap.reason, missing[0], gap.gap
            for name in names_to_look_up(params.question, in_catalog, self._s.coverage_max_names):
                # One lexical look-up per name: any chunk holding the word means the KB knows it.
                if not await self._peers.search(vector, 1, {}, name, "lexical"):
                    unknown.append(name)
        elif "company" not in params.filters and params.language == "zh":
            searched = _texts(found)
            for name in chinese_names(params.question)[: self._s.coverage_max_names]:
                # The passages the question's search found first, then the lexical index's best for the name.
                if not (holds_name(searched, name) or holds_name(await self._name_lookup(name, vector), name)):
                    unknown.append(name)
        verdict = assess(
            params.filters,
            catalog.years,
            unknown,
            company_quarters=catalog.quarters,
            term_coverage=_best_term_coverage(found[: params.top_k]),
            min_term_coverage=self._s.min_term_coverage,
            asked_date=latest_date(params.question),
            latest_dates=catalog.latest,
            names=catalog.display,
        )
        if verdict.gap == "period" and await self._comparative_mention(params.filters, catalog, vector):
            return "", "", ""
        if verdict.gap in ("period", "quarter") and await self._undated_mention(params.filters, catalog, vector):
            return "", "", ""
        # Pages fetched for a name the deployment knows ("MGM" of MGMRESORTS) are filed under that company,
        # never under a second spelling of it.
        filed_under = next((c for c in map(self._deployment_names.match, unknown) if c), "")
        return verdict.reason, filed_under, verdict.gap

    async def _name_lookup(self, name: str, vector: list[float]) -> list[str]:
        """Chunks that may hold a Chinese name: the lexical index's best LOOKUP_HITS for it."""
        return _texts(await self._peers.search(vector, LOOKUP_HITS, {}, name, "lexical"))

    def _known_names(self, catalog: Catalog) -> tuple[KnownNames, KnownNames]:
        """(the catalog's and the deployment's company names, the catalog's alone) as matching keys, built
        once per catalog read rather than per question: a catalog can hold thousands of names."""
        if self._known_for is not catalog:
            self._known_for = catalog
            self._known_keys = (KnownNames([*catalog.names, *self._s.known_companies]), KnownNames(catalog.names))
        return self._known_keys

    async def _comparative_mention(
        self, filters: Mapping[str, str | int], catalog: Catalog, vector: list[float]
    ) -> bool:
        """Whether the company's filing for the year after the question's mentions that year: an annual
        report carries the prior year's figures as its comparative column, so the KB holds the period even
        though no document is dated with it. Only the next year's filing counts (coverage.period_covered);
        the lexical look-up keeps a filing that never writes the year from counting."""
        company, year = str(filters.get("company", "")), filters.get("year")
        if not isinstance(year, int) or not period_covered(catalog.years.get(company, ()), year, next_year=True):
            return False
        found = await self._peers.search(vector, 1, {"company": company, "year": year + 1}, str(year), "lexical")
        return bool(found)

    async def _undated_mention(self, filters: Mapping[str, str | int], catalog: Catalog, vector: list[float]) -> bool:
        """Whether one of the company's documents that carry no year (web pages the KB grew by) mentions
        the question's year: such a page may well be that year's filing, so the period is not missing."""
        company, year = str(filters.get("company", "")), filters.get("year")
        if not catalog.undated.get(company) or not isinstance(year, int):
            return False
        return bool(await self._peers.search(vector, 1, {"company": company, "year": 0}, str(year), "lexical"))

    async def _search_local(
        self, params: AskParams, vector: list[float]
    ) -> tuple[Mapping[str, str | int], list[Passage], list[Notice], str]:
        """Local search with the question's filters: (filters used, hits, notices, uncovered company).

        Filters read from the wording relax step by step when they leave only weak evidence: company +
        year (+ quarter), then the company alone (web pages carry no year), then no filter, keeping
        whichever found the better passage. A company read from the question that matches nothing at
        all is "uncovered": the coverage gate sends the question to the web whatever the scores. A
        period without a company does not narrow the search (questions.search_filters)."""
        filters = search_filters(params.filters) if params.filters_from_question else params.filters
        depth = self._search_depth(params)
        # The coverage gate reads how much of the question the passages hold when it names no KB company.
        terms = self._s.coverage_gate and params.filters_from_question and "company" not in params.filters
        hits = await self._peers.search(vector, depth, filters, params.question, term_coverage=terms)
        if not (filters and params.filters_from_question) or best_cosine(hits) >= params.threshold:
            return filters, hits, [], ""
        names = (await self._catalog.get()).display
        note: list[Notice] = []
        company = filters.get("company")
        if company and set(filters) != {"company"}:
            company_hits = await self._peers.search(vector, depth, {"company": company}, params.question)
            if company_hits and best_cosine(company_hits) > best_cosine(hits):
                note = [notices.period_weak(filters, str(company), names)]
                filters, hits = {"company": company}, company_hits
        missing = company and not hits and self._s.web_when_company_missing
        uncovered = notices.shown_name(str(company), names) if missing else ""
        if best_cosine(hits) < params.threshold:
            # Filters guessed from the wording must never hide the knowledge base.
            unfiltered = await self._peers.search(vector, depth, {}, params.question)
            if unfiltered and best_cosine(unfiltered) > best_cosine(hits):
                note = [notices.filters_weak(filters, names)]
                filters, hits = {}, unfiltered
        return filters, hits, note, uncovered

    async def retrieve(self, params: AskParams) -> Retrieval:
        """Embeds the question, searches the KB and decides the route; no generation."""
        start = time.perf_counter()
        vector = await self._peers.embed_query(params.question)
        embed_ms = _ms_since(start)

        search_start = time.perf_counter()
        filters, hits, told, uncovered = await self._search_local(params, vector)
        new_company = ""  # a company the catalog does not know: the web pages that name it are filed under it
        gap = ""
        if uncovered:
            uncovered, gap = f"the knowledge base holds nothing about {uncovered}", "company"
        elif self._s.coverage_gate and params.filters_from_question:
            uncovered, new_company, gap = await self._coverage_gap(params, vector, hits)
        search_ms = _ms_since(search_start)
        rerank_start = time.perf_counter()
        hits = await self._rerank(params.question, hits, params.top_k)
        rerank_ms = _ms_since(rerank_start)

        best = best_cosine(hits)
        decision = RouteDecision(
            route=Route.LOCAL,
            best_local_score=best,
            threshold=params.threshold,
            top_k=params.top_k,
            top_j=params.top_j,
            web_status="not_needed",
            note="",
            filters=dict(filters),
            standalone_question=params.question if params.history else "",
            task=params.task,
            task_decided_by=params.task_decided_by,
        )
        decision.timings.embed_ms = embed_ms
        decision.timings.local_search_ms = search_ms
        decision.timings.rerank_ms = rerank_ms
        web_passages: list[Passage] = []
        if best < params.threshold or uncovered:
            decision.route = Route.WEB
            decision.reason = (gap or "company") if uncovered else "low_score"
            decision.score_decided = not uncovered
            if uncovered:
                told.append(notices.coverage_gap(uncovered, decision.reason))
            else:
                told.append(notices.low_score(best, params.threshold))
            if self._web is None:
                decision.web_status = "not_configured"
                told.append(notices.WEB_NOT_CONFIGURED)
            elif params.filters and not params.filters_from_question:
                # Web pages cannot honour a caller's filter (a document, an origin, a company's filing).
                decision.web_status = "skipped: the request has a filter"
                told.append(notices.WEB_SKIPPED_FILTER)
            else:
                web_passages = await self._consult_web(params, vector, decision, new_company)
                if decision.web_status != "ok":
                    told.append(notices.web_failed(decision.web_status))
        else:
            # Covered, and the score cleared c: the comparison is what kept it local.
            decision.score_decided = True
        decision.notices = told
        decision.note = notices.note_text(told)
        rank_start = time.perf_counter()
        # Passages of other companies or periods must not outrank the web pages about the one the KB lacks.
        # When only the question's words were missing, the local passages compete with the web's on score.
        local = [] if uncovered and gap != "terms" and web_passages else hits
        ranked = rank(local, web_passages)[: params.top_k]
        year = params.filters.get("year")
        if isinstance(year, int):
            # A passage about another fiscal year (an outlook, a comparative table) must not be [1].
            ranked = prefer_period(ranked, year, lambda p: p.text)
        decision.timings.rank_ms = _ms_since(rank_start)
        decision.timings.total_ms = _ms_since(start)
        retrieval = Retrieval(decision=decision, ranked=ranked)
        decision.verdict = notices.verdict(decision, retrieval.for_model(), self._s.refuse_without_evidence)
        return retrieval

    async def _consult_web(
        self, params: AskParams, vector: list[float], decision: RouteDecision, new_company: str = ""
    ) -> list[Passage]:
        """Search, fetch and score web pages; queue the relevant ones for ingestion, filed under the
        question's company (a catalog one, or `new_company` the catalog lacks) when the page names it, so
        the catalog knows the company by the next question. Never raises."""
        assert self._web is not None
        gathering = await self._web.gather(params.question)
        decision.web_status = gathering.status
        decision.timings.web_search_ms = gathering.search_ms
        decision.timings.web_fetch_ms = gathering.fetch_ms + gathering.extract_ms
        decision.pages_fetched = gathering.pages_fetched
        decision.pages_failed = gathering.pages_failed
        decision.pages_timed_out = gathering.pages_timed_out
        embed_start = time.perf_counter()
        evidence = await score_web_chunks(
            gathering, vector, self._peers.embed_passages, top_k=params.top_k, threshold=params.threshold
        )
        decision.timings.web_embed_ms = _ms_since(embed_start)
        if self._publisher is not None:
            for doc, best in evidence.worth_keeping:
                # publish() only enqueues: the answer never waits for Kafka.
                company = params.filters.get("company") if params.filters_from_question else None
                company = str(company) if company else new_company
                self._publisher.publish(ingest_message(doc, best, params.question, company or None))
                decision.documents_queued += 1
        return evidence.passages

    async def ask(self, params: AskParams) -> AsyncIterator[AskEvent]:
        """Runs the whole flow, yielding the route, answer tokens, citations, further reading, done.

        A lookup is answered in one generation; other tasks go through tasks/runner.py (their stages
        arrive as Stage events before the answer)."""
        start = time.perf_counter()
        retrieval = await self.retrieve(params)
        facts = await self._fact_reply(params)
        if facts is not None:
            fact_path.take_local(retrieval)
        yield retrieval.decision
        if facts is not None:
            events = fact_path.reply_events(
                facts, retrieval, params.conversation_id, params.task, lambda: _ms_since(start)
            )
        elif self._lacks_evidence(retrieval):
            events = self._refuse(params, retrieval, start)
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

    def _lacks_evidence(self, retrieval: Retrieval) -> bool:
        """The gate found the local passages weak and the web added none (off, failed or skipped):
        decided with what the user is told (notices.verdict)."""
        return retrieval.decision.verdict == "refused"

    async def _refuse(self, params: AskParams, retrieval: Retrieval, start: float) -> AsyncIterator[AskEvent]:
        """A small model answers anyway, from the wrong company's or year's figures. Say so instead,
        without a model call, and offer every retrieved passage as further reading."""
        decision = retrieval.decision
        yield TokenEvent(INSUFFICIENT.get(params.language, INSUFFICIENT["en"]))
        yield CitationsEvent([], set())
        yield FurtherReadingEvent(list(retrieval.ranked))
        decision.timings.total_ms = _ms_since(start)
        telemetry.ORCHESTRATOR_ANSWER_CHECKS.labels(result="refused").inc()
        yield DoneEvent(
            generation=GenerationDone("refused", 0, 0, ""),
            decision=decision,
            conversation_id=params.conversation_id,
            answer_check="refused",
            task=params.task,
        )

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
        insufficient = INSUFFICIENT.get(params.language, INSUFFICIENT["en"])
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
                decision.timings.first_token_ms = _ms_since(gen_start)
            answer.append(item)
            shown = guard.feed(item) if guard else item
            if shown:
                yield TokenEvent(shown)
        decision.timings.generate_ms = _ms_since(gen_start)
        decision.timings.total_ms = _ms_since(start)

        text = "".join(answer)
        sources = [f"{p.title}\n{p.heading}\n{p.text}" for p in context]
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
        telemetry.ORCHESTRATOR_ANSWER_CHECKS.labels(result=check.result).inc()
        replace = check.result == "unsupported" and self._s.numeric_check_policy == "replace"
        if guard and (rest := guard.finish(supported=not replace, text=text)):
            yield TokenEvent(rest)
        yield CitationsEvent(context, cited)
        yield FurtherReadingEvent(retrieval.further_reading())
        yield DoneEvent(
            generation=done or GenerationDone("unknown", 0, 0, ""),
            decision=decision,
            conversation_id=params.conversation_id,
            answer_check=check.result,
            unsupported_numbers=check.unsupported,
            answer_cites_passages=check.cited,
            replacement=insufficient if replace else "",
            task=params.task,
            extras=extras or TaskExtras(),
        )
