"""The web step of a question the KB does not answer well: search, fetch and score web pages, and queue
the relevant ones for ingestion so the KB knows them by the next question."""

from __future__ import annotations

import time

from weaverbird_orchestrator import notices
from weaverbird_orchestrator.clock import ms_since
from weaverbird_orchestrator.domain import AskParams, Notice, Passage, RouteDecision
from weaverbird_orchestrator.flow.ports import Peers, Publisher
from weaverbird_orchestrator.web import WebPath
from weaverbird_orchestrator.web_evidence import ingest_message, score_web_chunks


class WebStep:
    """Consults the web when the route is WEB, if a web path is configured and the request allows it."""

    def __init__(self, peers: Peers, web: WebPath | None, publisher: Publisher | None) -> None:
        self._peers = peers
        self._web = web
        self._publisher = publisher

    async def consult(
        self, params: AskParams, vector: list[float], decision: RouteDecision, told: list[Notice], new_company: str
    ) -> list[Passage]:
        """The web's passages for the question ([] when the web is off, skipped or failed), recording on
        `decision` and in `told` what happened."""
        if self._web is None:
            decision.web_status = "not_configured"
            told.append(notices.WEB_NOT_CONFIGURED)
            return []
        if params.filters and not params.filters_from_question:
            # Web pages cannot honour a caller's filter (a document, an origin, a company's filing).
            decision.web_status = "skipped: the request has a filter"
            told.append(notices.WEB_SKIPPED_FILTER)
            return []
        passages = await self._gather(self._web, params, vector, decision, new_company)
        if decision.web_status != "ok":
            told.append(notices.web_failed(decision.web_status))
        return passages

    async def _gather(
        self, web: WebPath, params: AskParams, vector: list[float], decision: RouteDecision, new_company: str
    ) -> list[Passage]:
        """Search, fetch and score web pages; queue the relevant ones for ingestion, filed under the
        question's company (a catalog one, or `new_company` the catalog lacks) when the page names it, so
        the catalog knows the company by the next question. Never raises."""
        gathering = await web.gather(params.question)
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
        decision.timings.web_embed_ms = ms_since(embed_start)
        if self._publisher is not None:
            for doc, best in evidence.worth_keeping:
                # publish() only enqueues: the answer never waits for Kafka.
                company = params.filters.get("company") if params.filters_from_question else None
                company = str(company) if company else new_company
                self._publisher.publish(ingest_message(doc, best, params.question, company or None))
                decision.documents_queued += 1
        return evidence.passages
