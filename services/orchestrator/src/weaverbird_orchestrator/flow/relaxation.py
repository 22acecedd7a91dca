"""Local search with the question's filters, relaxed step by step when they leave only weak evidence,
and the reranker's order of what it found."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from weaverbird_common.questions import detect_language, search_filters

from weaverbird_orchestrator import notices
from weaverbird_orchestrator.catalog import CatalogCache
from weaverbird_orchestrator.domain import AskParams, Notice, Passage
from weaverbird_orchestrator.flow.ports import Peers
from weaverbird_orchestrator.ranker import best_cosine
from weaverbird_orchestrator.rerank import NoReranker, Reranker, rerank_passages
from weaverbird_orchestrator.settings import OrchestratorSettings


@dataclass
class LocalHits:
    """What the local search used and found: the filters kept, the hits, what the user is told about a
    relaxed filter, and a company read from the question that matches nothing ("" when none)."""

    filters: Mapping[str, str | int]
    hits: list[Passage]
    told: list[Notice] = field(default_factory=list)
    uncovered: str = ""


class LocalSearch:
    """Searches the KB for a question, never letting filters guessed from its wording hide the KB."""

    def __init__(self, peers: Peers, settings: OrchestratorSettings, catalog: CatalogCache, reranker: Reranker) -> None:
        self._peers = peers
        self._s = settings
        self._catalog = catalog
        self._reranker = reranker

    def _depth(self, params: AskParams) -> int:
        """Hits fetched per search: K, or the reranker's candidate pool when a reranker runs."""
        if isinstance(self._reranker, NoReranker):
            return params.top_k
        return min(max(params.top_k, self._s.rerank_candidates), self._s.max_top_k * 5)

    async def rerank(self, question: str, hits: list[Passage], top_k: int) -> list[Passage]:
        """The reranker's order of the candidates, cut to K; cosines stay as they were for the gate."""
        if isinstance(self._reranker, NoReranker):
            return hits[:top_k]
        reranked = await rerank_passages(self._reranker, question, hits, self._s.rerank_candidates)
        return [r.passage for r in reranked][:top_k]

    async def _with_own_language(
        self, question: str, vector: list[float], depth: int, hits: list[Passage]
    ) -> list[Passage]:
        """A company's documents all in the other language than the question ("亚马逊" asks about AMAZON's
        English 10-K): news in the question's language about the company carries no company tag, so the
        filter would hide it. Such passages from an unfiltered search join the hits, ahead of them where
        their cosine is higher."""
        language = detect_language(question)
        if not hits or any(detect_language(p.text) == language for p in hits):
            return hits
        seen = {p.id for p in hits}
        found = await self._peers.search(vector, depth, {}, question)
        own = [p for p in found if p.id not in seen and detect_language(p.text) == language]
        if not own:
            return hits
        best = best_cosine(hits)
        ahead = [p for p in own if p.score > best]
        behind = [p for p in own if p.score <= best]
        return [*ahead, *hits, *behind][: max(depth, len(ahead))]

    async def search(self, params: AskParams, vector: list[float]) -> LocalHits:
        """Local search with the question's filters.

        Filters read from the wording relax step by step when they leave only weak evidence: company +
        year (+ quarter), then the company alone (web pages carry no year), then no filter, keeping
        whichever found the better passage. A company read from the question that matches nothing at
        all is "uncovered": the coverage gate sends the question to the web whatever the scores. A
        period without a company does not narrow the search (questions.search_filters)."""
        filters = search_filters(params.filters) if params.filters_from_question else params.filters
        depth = self._depth(params)
        # The coverage gate reads how much of the question the passages hold when it names no KB company.
        terms = self._s.coverage_gate and params.filters_from_question and "company" not in params.filters
        hits = await self._peers.search(vector, depth, filters, params.question, term_coverage=terms)
        if filters.get("company") and params.filters_from_question:
            hits = await self._with_own_language(params.question, vector, depth, hits)
        if not (filters and params.filters_from_question) or best_cosine(hits) >= params.threshold:
            return LocalHits(filters, hits)
        names = (await self._catalog.get()).display
        told: list[Notice] = []
        company = filters.get("company")
        if company and set(filters) != {"company"}:
            company_hits = await self._peers.search(vector, depth, {"company": company}, params.question)
            if company_hits and best_cosine(company_hits) > best_cosine(hits):
                told = [notices.period_weak(filters, str(company), names)]
                filters, hits = {"company": company}, company_hits
        missing = company and not hits and self._s.web_when_company_missing
        uncovered = notices.shown_name(str(company), names) if missing else ""
        if best_cosine(hits) < params.threshold:
            # Filters guessed from the wording must never hide the knowledge base.
            unfiltered = await self._peers.search(vector, depth, {}, params.question)
            if unfiltered and best_cosine(unfiltered) > best_cosine(hits):
                told = [notices.filters_weak(filters, names)]
                filters, hits = {}, unfiltered
        return LocalHits(filters, hits, told, uncovered)
