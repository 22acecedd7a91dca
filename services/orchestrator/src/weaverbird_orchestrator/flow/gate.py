"""The coverage gate: whether the knowledge base covers what the question asks about at all, read from
its catalog and a few lexical look-ups, whatever the passages' scores (weaverbird_common.coverage)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from weaverbird_common.coverage import KnownNames, assess, names_to_look_up, period_covered, unknown_companies
from weaverbird_common.dates import latest_date
from weaverbird_common.doc_kinds import asked_kinds
from weaverbird_common.zh_names import LOOKUP_HITS, chinese_names, holds_name

from weaverbird_orchestrator.catalog import Catalog, CatalogCache
from weaverbird_orchestrator.domain import AskParams, Passage
from weaverbird_orchestrator.flow.ports import Peers
from weaverbird_orchestrator.settings import OrchestratorSettings


@dataclass(frozen=True)
class CoverageGap:
    """Why the KB does not cover the question ("" when it does); the company its web pages are filed
    under; and the kind of gap (Coverage.gap: "period", "terms" ...)."""

    reason: str = ""
    filed_under: str = ""
    gap: str = ""


def _best_term_coverage(passages: Sequence[Passage]) -> float | None:
    """The largest share of the question's terms one passage holds (the first K of the question's own
    search, as `weaverbird eval route` measures it); None when no passage was measured (a retriever older
    than the field), so the gate does not read "nothing covered" into a missing number."""
    shares = [p.term_coverage for p in passages if p.term_coverage is not None]
    return max(shares) if shares else None


def _texts(passages: Sequence[Passage]) -> list[str]:
    return [f"{p.title}\n{p.text}" for p in passages]


class CoverageGate:
    """Finds what the KB lacks for a question: a period, a company, a name, or the question's words."""

    def __init__(self, peers: Peers, settings: OrchestratorSettings, catalog: CatalogCache) -> None:
        self._peers = peers
        self._s = settings
        self._catalog = catalog
        self._known_for: Catalog | None = None  # the catalog _known_keys were built from
        self._known_keys = (KnownNames(()), KnownNames(()))
        self._deployment_names = KnownNames(settings.known_companies)  # ORCHESTRATOR_KNOWN_COMPANIES

    async def gap(self, params: AskParams, vector: list[float], found: Sequence[Passage] = ()) -> CoverageGap:
        """Why the KB does not cover the question, from its catalog: a fiscal year or quarter of a KB
        company it has no document for, a company the catalog does not know, a name that no chunk mentions,
        or (no KB company named) passages that hold too few of its words; the company its web pages are
        filed under: the unknown company, or the deployment's known company an unknown name stands for."""
        catalog = await self._catalog.get()
        unknown: list[str] = []
        if "company" not in params.filters and params.language == "en":
            with_deployment, in_catalog = self._known_names(catalog)
            missing = unknown_companies(params.question, with_deployment)
            if missing:
                gap = assess(params.filters, catalog.years, [], missing_companies=missing)
                return CoverageGap(gap.reason, missing[0], gap.gap)
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
            asked_kinds=asked_kinds(params.question),
            company_kinds=catalog.kinds,
        )
        if verdict.gap == "period" and await self._comparative_mention(params.filters, catalog, vector):
            return CoverageGap()
        if verdict.gap in ("period", "quarter") and await self._undated_mention(params.filters, catalog, vector):
            return CoverageGap()
        # Pages fetched for a name the deployment knows ("MGM" of MGMRESORTS) are filed under that company,
        # never under a second spelling of it.
        filed_under = next((c for c in map(self._deployment_names.match, unknown) if c), "")
        return CoverageGap(verdict.reason, filed_under, verdict.gap)

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
