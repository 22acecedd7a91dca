"""The retriever's catalog reads a bounded number of facets whatever the number of companies: a company's
facets are re-read only when its chunk count changed, a bounded number of companies a read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from weaverbird_retriever.catalog import _FIELDS, CatalogReader
from weaverbird_retriever.stores import ChunkRecord, VectorStore, open_store, point_id
from weaverbird_retriever.stores.threaded import as_async

DIM = 8
COMPANIES = 12


def _record(doc: str, company: str, year: int) -> ChunkRecord:
    vector = np.random.default_rng(len(doc)).standard_normal(DIM).astype(np.float32)
    payload = {"document_id": doc, "company": company, "year": year, "aliases": [company.title()]}
    return ChunkRecord(point_id(doc, 0), vector, f"{company} annual report {year}", payload)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VectorStore]:
    s = open_store("edge", path=str(tmp_path), url=None, api_key=None, collection="kb")
    s.ensure_collection(DIM)
    s.upsert([_record(f"doc-{i}", f"COMPANY_{i:02d}", 2020 + i % 3) for i in range(COMPANIES)])
    yield s
    s.close()


async def test_an_unchanged_kb_costs_the_same_few_facets_however_many_companies(store: VectorStore) -> None:
    reader = CatalogReader(max_companies=5)
    first = await reader.fetch(as_async(store), 100)
    assert len(first.companies) == COMPANIES  # every company listed, read or not
    per_read = 1 + len(_FIELDS)  # the company facet and the KB-wide fields
    assert reader.facet_calls == per_read + 5 * 5  # five companies read, five facets each (no quarters)
    read = {c.company for c in first.companies if c.years}
    assert len(read) == 5
    unread = next(c for c in first.companies if c.company not in read)
    assert not unread.years and not unread.aliases  # listed by name: covers every year until read
    calls = reader.facet_calls
    await reader.fetch(as_async(store), 100)  # five more
    catalog = await reader.fetch(as_async(store), 100)  # the last two
    assert all(c.years for c in catalog.companies)
    assert reader.facet_calls - calls == 2 * per_read + 7 * 5
    calls = reader.facet_calls
    await reader.fetch(as_async(store), 100)
    assert reader.facet_calls - calls == per_read  # nothing changed: no company re-read
    # An ingest changes one company's chunk count: only that company is read again.
    store.upsert([_record("doc-new", "COMPANY_03", 2024)])
    calls = reader.facet_calls
    catalog = await reader.fetch(as_async(store), 100)
    assert reader.facet_calls - calls == per_read + 5
    assert 2024 in next(c for c in catalog.companies if c.company == "COMPANY_03").years
