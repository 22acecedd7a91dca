"""The knowledge base's catalog: what its documents are about, counted per value with Qdrant facets."""

from __future__ import annotations

from weaverbird.v1 import retriever_pb2

from weaverbird_retriever.stores import VectorStore

# Aliases of one company rarely pass a handful; the cap keeps a polluted alias field bounded.
_ALIASES_PER_COMPANY = 50


def read_catalog(store: VectorStore, limit: int) -> retriever_pb2.CatalogResponse:
    """Companies (with their aliases and years), years, quarters, document types, languages, origins.

    One facet call per field plus two per company: a KB of filings names tens to hundreds of companies,
    and callers cache the result, so this stays cheap next to a re-read per question.
    """
    response = retriever_pb2.CatalogResponse(points=store.stats().points)
    for company, chunks in store.facet("company", limit):
        if not company:
            continue
        scope = {"company": str(company)}
        aliases = sorted(str(a) for a, _ in store.facet("aliases", _ALIASES_PER_COMPANY, scope) if a)
        years = sorted(int(y) for y, _ in store.facet("year", limit, scope) if int(y))  # type: ignore[call-overload]
        response.companies.append(
            retriever_pb2.CatalogCompany(company=str(company), chunks=chunks, aliases=aliases, years=years)
        )
    for field, target in (
        ("year", response.years),
        ("quarter", response.quarters),
        ("doc_type", response.doc_types),
        ("language", response.languages),
        ("origin", response.origins),
    ):
        for value, chunks in store.facet(field, limit):
            if value not in ("", 0):
                target.append(retriever_pb2.FacetCount(value=str(value), chunks=chunks))
    return response
