"""Facts end to end on the real stack: a project-written annual report (Markdown, a pipe-table income
statement with the years across its columns, "(USD million)") added through the ingester has its figures
stored in the retriever's facts collection; LookupFacts finds revenue for a year with its value, scale and
citation; `weaverbird kb facts` lists them; bad lookups are INVALID_ARGUMENT; deleting the document through
the ingester removes its facts. A PDF filing's facts cite the page their statement is on, and a web page
that arrives through the Kafka ingest topic has its table's facts stored the same way."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
import pytest
from fixtures.kafka_broker import KafkaBroker
from fixtures.pdf_files import make_pdf
from fixtures.web_servers import PageServer
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from weaverbird_cli import commands
from weaverbird_cli.stack import LocalStack
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.facts.proto import from_proto
from weaverbird_common.ingest_messages import IngestMessage
from weaverbird_common.ingest_publisher import IngestPublisher
from weaverbird_common.kafka_config import KafkaSettings

pytestmark = pytest.mark.integration

INGEST_TOPIC = "stack.ingest.v1"  # the session stack's topic (integration/conftest.py, STACK_TOPICS)

REPORT = """---
company: Brackenridge Tidal Works
year: 2025
---
# Brackenridge Tidal Works Annual Report 2025

Brackenridge Tidal Works builds and operates tidal stream turbines off the coast of Orkney. Output rose on
two new arrays commissioned in the spring.

## Consolidated statement of income

(USD million)

| | 2025 | 2024 |
|---|---:|---:|
| Revenue | 1,482.6 | 1,317.9 |
| Cost of sales | (911.4) | (842.0) |
| Gross profit | 571.2 | 475.9 |
| Operating income | 203.7 | 158.3 |
| Net income | 121.5 | (14.8) |
"""


def test_a_filings_facts_are_stored_found_listed_and_deleted_with_it(
    stack: LocalStack,
    retriever: retriever_pb2_grpc.RetrieverServiceStub,
    ingester: ingester_pb2_grpc.IngesterServiceStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    added = ingester.AddDocument(
        ingester_pb2.AddDocumentRequest(data=REPORT.encode(), filename="brackenridge-2025.md"), timeout=300
    )
    document_id = added.document_id
    shown = ingester.GetDocument(ingester_pb2.IngesterServiceGetDocumentRequest(document_id=document_id), timeout=30)
    company = shown.document.company
    assert company  # from the front matter

    found = retriever.LookupFacts(
        retriever_pb2.LookupFactsRequest(company=company, concepts=["revenue"], fiscal_years=[2025]), timeout=30
    )
    revenue = [from_proto(f) for f in found.facts]
    assert len(revenue) == 1
    fact = revenue[0]
    assert (fact.document_id, fact.label, fact.value, fact.scale, fact.currency) == (
        document_id,
        "Revenue",
        1482.6,
        1e6,
        "USD",
    )
    assert fact.amount == pytest.approx(1_482_600_000)
    assert fact.period.fiscal_year == 2025 and fact.period.months == 12
    # A Markdown file has no pages: the fact cites the document, page unset, as its passages do.
    assert fact.page is None and fact.title == shown.document.title
    # The loss year keeps its sign.
    loss = retriever.LookupFacts(
        retriever_pb2.LookupFactsRequest(document_id=document_id, concepts=["net_income"], fiscal_years=[2024]),
        timeout=30,
    )
    assert [f.value for f in loss.facts] == [-14.8]

    # The CLI lists the document's facts with their periods and units.
    assert commands.kb_facts(stack.config.addr("retriever"), document_id) == 0
    listing = capsys.readouterr()
    assert "FY2025" in listing.out and "Revenue [revenue]  1,482.6 USD million" in listing.out
    everything = retriever.LookupFacts(retriever_pb2.LookupFactsRequest(document_id=document_id), timeout=30)
    assert f"{len(everything.facts)} facts in document {document_id}" in listing.err
    assert len(everything.facts) >= 10  # five rows, two years

    # A bad lookup is refused with a message naming the field.
    with pytest.raises(grpc.RpcError) as refused:
        retriever.LookupFacts(retriever_pb2.LookupFactsRequest(company=company, limit=-1), timeout=30)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "limit must be between 0 and 10000" in (refused.value.details() or "")

    # Deleting the document (as `weaverbird kb delete` does) removes its facts with its chunks.
    ingester.DeleteDocument(ingester_pb2.IngesterServiceDeleteDocumentRequest(document_id=document_id), timeout=60)
    gone = retriever.LookupFacts(retriever_pb2.LookupFactsRequest(document_id=document_id), timeout=30)
    assert list(gone.facts) == []
    again = retriever.LookupFacts(retriever_pb2.LookupFactsRequest(company=company, concepts=["revenue"]), timeout=30)
    assert list(again.facts) == []


def test_a_pdf_filings_facts_cite_the_statements_page(
    retriever: retriever_pb2_grpc.RetrieverServiceStub, ingester: ingester_pb2_grpc.IngesterServiceStub
) -> None:
    pdf = make_pdf(
        [
            [
                "Saltmarsh Ferrous Annual Report 2025",
                "Saltmarsh Ferrous recycles steel scrap at two electric arc furnace mills.",
            ],
            [
                "Consolidated Statements of Income",
                "(in millions of U.S. dollars)",
                "Year ended December 31, 2025 2024",
                "Revenue 2,315.8 2,104.6",
                "Cost of sales (1,702.2) (1,611.9)",
                "Net income 143.0 97.4",
            ],
        ]
    )
    added = ingester.AddDocument(
        ingester_pb2.AddDocumentRequest(data=pdf, filename="saltmarsh-ferrous-2025.pdf"), timeout=300
    )
    found = retriever.LookupFacts(
        retriever_pb2.LookupFactsRequest(document_id=added.document_id, concepts=["revenue"], fiscal_years=[2024]),
        timeout=30,
    )
    assert [(f.label, f.value, f.scale, f.page, f.period_end) for f in found.facts] == [
        ("Revenue", 2104.6, 1e6, 2, "2024-12-31")
    ]
    ingester.DeleteDocument(
        ingester_pb2.IngesterServiceDeleteDocumentRequest(document_id=added.document_id), timeout=60
    )
    left = retriever.LookupFacts(retriever_pb2.LookupFactsRequest(document_id=added.document_id), timeout=30)
    assert list(left.facts) == []


WEB_RESULTS = """Corvid Lantern Shipping full-year results

Corvid Lantern Shipping carried record volumes on its Baltic routes in 2025.

Consolidated income statement (EUR million)

| | 2025 | 2024 |
|---|---:|---:|
| Revenue | 644.2 | 598.0 |
| Net income | 51.9 | 40.3 |
"""


@pytest.fixture(scope="module")
def publisher(kafka_broker: KafkaBroker) -> Iterator[IngestPublisher]:
    """The orchestrator's publisher class, on the stack's ingest topic."""
    pub = IngestPublisher(KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers, ingest_topic=INGEST_TOPIC))
    yield pub
    pub.close(5.0)


def test_a_web_page_from_the_ingest_topic_has_its_facts_stored(
    retriever: retriever_pb2_grpc.RetrieverServiceStub, publisher: IngestPublisher, web_page_server: PageServer
) -> None:
    url = web_page_server.url("/facts/corvid-lantern-fy2025.html")
    message = IngestMessage(url=url, title="Corvid Lantern Shipping FY2025", text=WEB_RESULTS, question="Corvid?")
    assert publisher.publish(message)
    request = retriever_pb2.LookupFactsRequest(document_id=document_id_for(url), concepts=["revenue"])
    deadline = time.monotonic() + 120
    while not (found := retriever.LookupFacts(request, timeout=30).facts) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert sorted((f.fiscal_year, f.value, f.scale, f.currency) for f in found) == [
        (2024, 598.0, 1e6, "EUR"),
        (2025, 644.2, 1e6, "EUR"),
    ]
