"""Facts in the retriever: UpsertFacts replaces a document's facts, LookupFacts finds them by company,
concepts, fiscal years and document, DeleteDocument removes them with the chunks; bad requests are
INVALID_ARGUMENT. Run against real stores: Qdrant Edge, qdrant-client local mode (disk), and the
asynchronous server store over AsyncQdrantClient's local mode."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from qdrant_client import AsyncQdrantClient
from weaverbird.v1 import common_pb2, retriever_pb2
from weaverbird_common.errors import FailedPrecondition, InvalidArgument
from weaverbird_common.facts.model import Fact, Period
from weaverbird_common.facts.proto import from_proto, to_proto
from weaverbird_retriever.facts import facts_collection, facts_data_dir
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.stores import open_store
from weaverbird_retriever.stores.qdrant_server_store import AsyncQdrantStore

Request = retriever_pb2.LookupFactsRequest


def _fact(document_id: str, company: str, label: str, concept: str, year: int, value: float, **kw: object) -> Fact:
    return Fact(
        document_id=document_id,
        company=company,
        page=kw.pop("page", 4),  # type: ignore[arg-type]
        table="Consolidated statements of income",
        statement="income",
        label=label,
        concept=concept,
        period=Period(year, 12, 0, f"{year}-12-31"),
        value=value,
        scale=1e6,
        currency="USD",
        scale_text="(USD million)",
        title=f"{company} annual report",
        source=f"{document_id}.md",
        **kw,  # type: ignore[arg-type]
    )


# Two filings of one company (each with two years) and one of another.
KESTREL_2024 = [
    _fact("kestrel-2024", "Kestrel Foundry", "Revenue", "revenue", 2024, 1102.9),
    _fact("kestrel-2024", "Kestrel Foundry", "Revenue", "revenue", 2023, 987.4),
    _fact("kestrel-2024", "Kestrel Foundry", "Net income", "net_income", 2024, 88.1),
    _fact("kestrel-2024", "Kestrel Foundry", "Net income", "net_income", 2023, -12.5),
    _fact("kestrel-2024", "Kestrel Foundry", "Other items", "", 2024, 0.0, page=5),
]
KESTREL_2023 = [
    _fact("kestrel-2023", "Kestrel Foundry", "Revenue", "revenue", 2023, 987.4),
    _fact("kestrel-2023", "Kestrel Foundry", "Revenue", "revenue", 2022, 901.0),
]
QINGSONG = [_fact("qingsong-2024", "青松新能源", "营业收入", "revenue", 2024, 5321.7)]


@pytest.fixture(params=["edge", "local", "server-api"])
async def servicer(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RetrieverServicer]:
    if request.param == "server-api":
        store = AsyncQdrantStore(AsyncQdrantClient(location=":memory:"), "docs")
        facts = AsyncQdrantStore(AsyncQdrantClient(location=":memory:"), facts_collection("docs"))
    else:
        path = str(tmp_path)
        store = open_store(request.param, path=path, url=None, api_key=None, collection="docs")  # type: ignore[assignment]
        facts = open_store(  # type: ignore[assignment]
            request.param,
            path=facts_data_dir(request.param, path),
            url=None,
            api_key=None,
            collection=facts_collection("docs"),
        )
    svc = RetrieverServicer(store, max_k=10, max_upsert_batch=100, facts=facts)
    yield svc
    await svc._store.close()
    assert svc._facts is not None
    await svc._facts.close()


async def _upsert(svc: RetrieverServicer, document_id: str, facts: list[Fact]) -> int:
    request = retriever_pb2.UpsertFactsRequest(document_id=document_id, facts=[to_proto(f) for f in facts])
    return (await svc.UpsertFacts(request, None)).upserted  # type: ignore[arg-type]


async def _lookup(svc: RetrieverServicer, **fields: object) -> list[Fact]:
    response = await svc.LookupFacts(Request(**fields), None)  # type: ignore[arg-type]
    return [from_proto(f) for f in response.facts]


async def test_lookup_by_company_concept_year_and_document(servicer: RetrieverServicer) -> None:
    assert await _lookup(servicer, company="Kestrel Foundry") == []  # no facts collection yet
    assert await _upsert(servicer, "kestrel-2024", KESTREL_2024) == 5
    assert await _upsert(servicer, "kestrel-2023", KESTREL_2023) == 2
    assert await _upsert(servicer, "qingsong-2024", QINGSONG) == 1

    # Every field comes back as stored, the table order within a document kept.
    assert await _lookup(servicer, document_id="kestrel-2024") == KESTREL_2024
    revenue_2023 = await _lookup(servicer, company="Kestrel Foundry", concepts=["revenue"], fiscal_years=[2023])
    assert revenue_2023 == [KESTREL_2023[0], KESTREL_2024[1]]  # both filings state it
    assert revenue_2023[0].amount == pytest.approx(987.4e6)
    # Any of several concepts and years.
    both = await _lookup(servicer, company="Kestrel Foundry", concepts=["revenue", "net_income"], fiscal_years=[2024])
    assert [(f.label, f.value) for f in both] == [("Revenue", 1102.9), ("Net income", 88.1)]
    assert [f.value for f in await _lookup(servicer, concepts=["revenue"], fiscal_years=[2024])] == [1102.9, 5321.7]
    assert [f.label for f in await _lookup(servicer, company="青松新能源")] == ["营业收入"]
    # Company names are exact; the limit caps the answer.
    assert await _lookup(servicer, company="kestrel foundry") == []
    assert len(await _lookup(servicer, company="Kestrel Foundry", limit=3)) == 3


async def test_upsert_replaces_and_delete_removes_facts(servicer: RetrieverServicer) -> None:
    await _upsert(servicer, "kestrel-2024", KESTREL_2024)
    await _upsert(servicer, "kestrel-2023", KESTREL_2023)
    restated = [_fact("kestrel-2024", "Kestrel Foundry", "Revenue", "revenue", 2024, 1110.0)]
    assert await _upsert(servicer, "kestrel-2024", restated) == 1
    assert await _lookup(servicer, document_id="kestrel-2024") == restated  # the four older facts are gone

    # The document's chunks and facts go together; other documents keep theirs.
    chunk = retriever_pb2.Chunk(
        vector=[1.0, 0.0, 0.0], text="Kestrel revenue", payload=common_pb2.ChunkPayload(document_id="kestrel-2024")
    )
    await servicer.Upsert(retriever_pb2.UpsertRequest(chunks=[chunk]), None)  # type: ignore[arg-type]
    delete = retriever_pb2.DeleteDocumentRequest(document_id="kestrel-2024")
    response = await servicer.DeleteDocument(delete, None)  # type: ignore[arg-type]
    assert (response.deleted, response.facts_deleted) == (1, 1)
    assert await _lookup(servicer, document_id="kestrel-2024") == []
    assert await _lookup(servicer, company="Kestrel Foundry") == KESTREL_2023

    # Replacing with no facts empties the document's facts.
    assert await _upsert(servicer, "kestrel-2023", []) == 0
    assert await _lookup(servicer, company="Kestrel Foundry") == []


async def test_delete_without_chunks_still_removes_facts(servicer: RetrieverServicer) -> None:
    await _upsert(servicer, "qingsong-2024", QINGSONG)
    response = await servicer.DeleteDocument(retriever_pb2.DeleteDocumentRequest(document_id="qingsong-2024"), None)  # type: ignore[arg-type]
    assert (response.deleted, response.facts_deleted) == (0, 1)


def _bad_upsert(**changes: object) -> retriever_pb2.UpsertFactsRequest:
    fact = to_proto(QINGSONG[0])
    for name, value in changes.items():
        setattr(fact, name, value)
    return retriever_pb2.UpsertFactsRequest(document_id="qingsong-2024", facts=[fact])


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (retriever_pb2.UpsertFactsRequest(document_id=" "), "document_id must not be empty"),
        (_bad_upsert(document_id="other"), "facts[0].document_id is 'other', not the request's document_id"),
        (_bad_upsert(value=float("nan")), "facts[0].value must be a finite number"),
        (_bad_upsert(scale=0.0), "facts[0].scale must be a positive number"),
        (_bad_upsert(fiscal_year=-1), "facts[0].fiscal_year must be between 0 and 9999"),
        (_bad_upsert(months=13), "facts[0].months must be between 0 and 12"),
        (_bad_upsert(quarter=5), "facts[0].quarter must be between 0 and 4"),
        (_bad_upsert(concept="c" * 300), "facts[0].concept has 300 characters; the limit is 256"),
    ],
)
async def test_bad_upsert_is_invalid_argument(
    servicer: RetrieverServicer, request_: retriever_pb2.UpsertFactsRequest, message: str
) -> None:
    with pytest.raises(InvalidArgument, match=message.replace("[", r"\[").replace("]", r"\]")):
        await servicer.UpsertFacts(request_, None)  # type: ignore[arg-type]
    assert await _lookup(servicer, document_id="qingsong-2024") == []  # nothing was written


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"limit": -1}, "limit must be between 0 and 10000"),
        ({"limit": 10_001}, "limit must be between 0 and 10000"),
        ({"concepts": ["revenue", ""]}, r"concepts\[1\] must not be empty"),
        ({"fiscal_years": [0]}, r"fiscal_years\[0\] must be between 1 and 9999"),
        ({"concepts": [f"c{i}" for i in range(65)]}, "concepts has 65 entries; at most 64"),
        (
            {"concepts": [f"c{i}" for i in range(40)], "fiscal_years": list(range(2000, 2020))},
            "40 concepts times 20 fiscal years is 800 lookups; at most 512",
        ),
        ({"company": "x" * 1001}, "company has 1001 characters"),
    ],
)
async def test_bad_lookup_is_invalid_argument(
    servicer: RetrieverServicer, fields: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidArgument, match=message):
        await servicer.LookupFacts(Request(**fields), None)  # type: ignore[arg-type]


async def test_without_a_facts_store_the_fact_rpcs_say_so(tmp_path: Path) -> None:
    store = open_store("local", path=":memory:", url=None, api_key=None, collection="docs")
    svc = RetrieverServicer(store, max_k=10, max_upsert_batch=10)
    with pytest.raises(FailedPrecondition, match="started without a facts store"):
        await svc.LookupFacts(Request(company="Kestrel Foundry"), None)  # type: ignore[arg-type]
    response = await svc.DeleteDocument(retriever_pb2.DeleteDocumentRequest(document_id="x"), None)  # type: ignore[arg-type]
    assert response.facts_deleted == 0
    store.close()


def test_local_mode_facts_get_their_own_directory() -> None:
    # qdrant-client local mode locks its directory for one client.
    assert facts_data_dir("local", "/var/kb") == "/var/kb/facts"
    assert facts_data_dir("local", ":memory:") == ":memory:"
    assert facts_data_dir("edge", "/var/kb") == "/var/kb"
