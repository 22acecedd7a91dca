"""The knowledge base's catalog: what its documents are about, counted per value with Qdrant facets."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence

from weaverbird.v1 import retriever_pb2
from weaverbird_common.dates import parse_iso

from weaverbird_retriever.stores import AsyncVectorStore, VectorStore

# Aliases of one company rarely pass a handful; the cap keeps a polluted alias field bounded.
_ALIASES_PER_COMPANY = 50
# Distinct document dates read per company: a filing KB has a few per company; a KB grown from the web
# one per page. Past this many the newest may be missed, so the company then gets no latest date.
_DATES_PER_COMPANY = 10_000
# Values of `quarter`: 0 (an annual or undated document) and 1-4; a facet must be allowed all of them.
_QUARTER_VALUES = 5
# Fields listed for the whole knowledge base, besides the companies.
_FIELDS = ("year", "quarter", "doc_type", "language", "origin")
# Facet requests in flight at once against a Qdrant server: enough to hide round trips, few enough
# that a catalog of hundreds of companies does not crowd out searches.
_CONCURRENT_FACETS = 8

Facet = list[tuple[object, int]]


def read_catalog(store: VectorStore, limit: int) -> retriever_pb2.CatalogResponse:
    """Companies (with their aliases, years and fiscal quarters), years, quarters, document types,
    languages, origins.

    One facet call per field plus five per company and one per quarter a company has documents for: a
    KB of filings names tens to hundreds of companies, and callers cache the result, so this stays cheap
    next to a re-read per question.
    """
    companies = _companies(store.facet("company", limit))
    per_company = {}
    for c, _ in companies:
        quarters = _quarters(store.facet("quarter", _QUARTER_VALUES, {"company": c}))
        years_of = {q: store.facet("year", limit, {"company": c, "quarter": q}) for q in quarters}
        per_company[c] = (
            store.facet("aliases", _ALIASES_PER_COMPANY, {"company": c}),
            store.facet("year", limit, {"company": c}),
            years_of,
            store.facet("published_date", _DATES_PER_COMPANY, {"company": c}),
            store.facet("doc_type", limit, {"company": c}),
        )
    fields = {f: store.facet(f, limit) for f in _FIELDS}
    return _build(store.stats().points, companies, per_company, fields)


async def fetch_catalog(store: AsyncVectorStore, limit: int) -> retriever_pb2.CatalogResponse:
    """read_catalog for the event loop, every company read, the facet calls run concurrently (a few at a
    time). The servicer keeps a CatalogReader instead, which bounds a read's facet calls."""
    return await CatalogReader(max_companies=sys.maxsize).fetch(store, limit)


# Companies whose facets one read re-reads at most: the rest keep what an earlier read found (a company
# not read yet is listed by name, covering every year, until a later read reaches it).
MAX_COMPANIES_PER_READ = 64
# A company's facets: aliases, years, years per quarter, document dates, document kinds.
CompanyFacets = tuple[Facet, Facet, dict[int, Facet], Facet, Facet]
_NOT_READ: CompanyFacets = ([], [], {}, [], [])


class CatalogReader:
    """fetch_catalog with a bounded number of facet calls whatever the number of companies: a company's
    facets are re-read only when its chunk count changed since the last read (an ingest or a delete of
    its documents), at most MAX_COMPANIES_PER_READ companies a read, so a refresh of an unchanged KB
    costs 1 + len(_FIELDS) facet calls and any refresh at most that plus 9 a company re-read."""

    def __init__(self, max_companies: int = MAX_COMPANIES_PER_READ) -> None:
        self._max_companies = max_companies
        self._known: dict[str, tuple[int, CompanyFacets]] = {}
        self.facet_calls = 0  # facet calls made so far (tests, logs)

    async def fetch(self, store: AsyncVectorStore, limit: int) -> retriever_pb2.CatalogResponse:
        slots = asyncio.Semaphore(_CONCURRENT_FACETS)

        async def facet(key: str, size: int, scope: Mapping[str, str | int] | None = None) -> Facet:
            async with slots:
                self.facet_calls += 1
                return await store.facet(key, size, dict(scope) if scope else None)

        companies = _companies(await facet("company", limit))
        stale = [(c, n) for c, n in companies if self._known.get(c, (None,))[0] != n][: self._max_companies]
        read = await asyncio.gather(*(_one_company(facet, c, limit) for c, _ in stale))
        present = {c for c, _ in companies}
        self._known = {c: v for c, v in self._known.items() if c in present}
        for (company, chunks), found in zip(stale, read, strict=True):
            self._known[company] = (chunks, found)
        per_company = {c: self._known[c][1] if c in self._known else _NOT_READ for c, _ in companies}
        fields = dict(zip(_FIELDS, await asyncio.gather(*(facet(f, limit) for f in _FIELDS)), strict=True))
        return _build((await store.stats()).points, companies, per_company, fields)


async def _one_company(facet: Callable[..., Awaitable[Facet]], company: str, limit: int) -> CompanyFacets:
    aliases, years, quarter_facet, dates, kinds = await asyncio.gather(
        facet("aliases", _ALIASES_PER_COMPANY, {"company": company}),
        facet("year", limit, {"company": company}),
        facet("quarter", _QUARTER_VALUES, {"company": company}),
        facet("published_date", _DATES_PER_COMPANY, {"company": company}),
        facet("doc_type", limit, {"company": company}),
    )
    quarters = _quarters(quarter_facet)
    years_of = await asyncio.gather(*(facet("year", limit, {"company": company, "quarter": q}) for q in quarters))
    return aliases, years, dict(zip(quarters, years_of, strict=True)), dates, kinds


def _companies(facet: Facet) -> list[tuple[str, int]]:
    return [(str(company), chunks) for company, chunks in facet if company]


def _quarters(facet: Facet) -> list[int]:
    """The quarters (1-4) a facet over `quarter` found; 0 is an annual or undated document."""
    return sorted(int(q) for q, _ in facet if 1 <= int(q) <= 4)  # type: ignore[call-overload]


def _latest_date(dates: Facet, chunks: int) -> str:
    """The newest ISO date of a company's chunks, when every one of its `chunks` carries one (an undated
    page may be about anything later), else ""."""
    parsed = [(d, n) for value, n in dates if (d := parse_iso(str(value))) is not None]
    if not parsed or sum(n for _, n in parsed) < chunks:
        return ""
    return max(d for d, _ in parsed).isoformat()


def _build(
    points: int,
    companies: Sequence[tuple[str, int]],
    per_company: Mapping[str, CompanyFacets],
    fields: Mapping[str, Facet],
) -> retriever_pb2.CatalogResponse:
    response = retriever_pb2.CatalogResponse(points=points)
    for company, chunks in companies:
        alias_facet, year_facet, years_of_quarter, date_facet, kind_facet = per_company[company]
        aliases = sorted(str(a) for a, _ in alias_facet if a)
        years = sorted(int(y) for y, _ in year_facet if int(y))  # type: ignore[call-overload]
        undated = sum(n for y, n in year_facet if not int(y))  # type: ignore[call-overload]
        quarters = sorted(
            (int(y), q)  # type: ignore[call-overload]
            for q, year_facet_q in years_of_quarter.items()
            for y, _ in year_facet_q
            if int(y)  # type: ignore[call-overload]
        )
        response.companies.append(
            retriever_pb2.CatalogCompany(
                company=company,
                chunks=chunks,
                aliases=aliases,
                years=years,
                quarters=[retriever_pb2.FiscalQuarter(year=y, quarter=q) for y, q in quarters],
                undated_chunks=undated,
                latest_date=_latest_date(date_facet, chunks),
                doc_types=[retriever_pb2.FacetCount(value=str(k), chunks=n) for k, n in kind_facet if k],
            )
        )
    targets = {
        "year": response.years,
        "quarter": response.quarters,
        "doc_type": response.doc_types,
        "language": response.languages,
        "origin": response.origins,
    }
    for field in _FIELDS:
        for value, chunks in fields[field]:
            if value not in ("", 0):
                targets[field].append(retriever_pb2.FacetCount(value=str(value), chunks=chunks))
    return response
