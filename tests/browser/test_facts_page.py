"""A document's facts and a computed answer on the web page, in headless Chromium (issue 32 item 4): the
knowledge-base tab's document view lists the figures read from its statements (page linked to the source,
table, line item as printed, concept, period, value with scale), in English and in the 中文 UI; a fact
answer shows its formula and each figure with the page it was read from, linked to the source.

The gateway is the real uvicorn process; behind it are scripted OrchestratorService and IngesterService
servers on 127.0.0.1 (real gRPC, fixed replies shaped as the fact path and the ingester send them)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from fixtures.gateway_server import GatewayServer
from fixtures.scripted_orchestrator import ScriptedOrchestrator, ScriptItem, answer_events
from weaverbird.v1 import common_pb2, ingester_pb2, ingester_pb2_grpc, orchestrator_pb2, retriever_pb2

try:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise  # in CI the browser test must run
    pytest.skip("selenium is not installed: pip install -r requirements/browser.txt", allow_module_level=True)

pytestmark = [pytest.mark.integration, pytest.mark.browser]
Accessible = Callable[[Any, str], None]

SOURCE = "https://filings.example.com/kestrel-loom-2025.pdf"
TITLE = "Kestrel Loom Annual Report 2025"
INCOME = "Consolidated Statements of Operations (in millions)"


def fact(label: str, concept: str, year: int, value: float, page: int, unit: str = "currency") -> retriever_pb2.Fact:
    return retriever_pb2.Fact(
        document_id="doc-kl", company="Kestrel Loom", page=page, table=INCOME, statement="income", label=label,
        concept=concept, fiscal_year=year, months=12, value=value, scale=1e6 if unit == "currency" else 1.0,
        unit=unit, currency="USD", scale_text="in millions, except per share", title=TITLE, source=SOURCE,
    )  # fmt: skip


FACTS = [
    fact("Net sales", "revenue", 2025, 1482.6, 40),
    fact("Net sales", "revenue", 2024, 1317.9, 40),
    fact("Gross profit", "gross_profit", 2025, 571.2, 40),
    fact("Diluted", "eps_diluted", 2025, 2.31, 41, unit="per_share"),
]


class ScriptedIngester(ingester_pb2_grpc.IngesterServiceServicer):
    """One document with facts in its statements."""

    def _summary(self) -> retriever_pb2.DocumentSummary:
        return retriever_pb2.DocumentSummary(
            document_id="doc-kl", title=TITLE, source=SOURCE, language="en", company="Kestrel Loom", chunks=12,
            year=2025, provenance=retriever_pb2.DocumentProvenance(origin=retriever_pb2.DOCUMENT_ORIGIN_LOCAL),
        )  # fmt: skip

    def ListDocuments(self, request: Any, context: grpc.ServicerContext) -> Any:
        return ingester_pb2.IngesterServiceListDocumentsResponse(documents=[self._summary()], total_size=1)

    def GetDocument(self, request: Any, context: grpc.ServicerContext) -> Any:
        return ingester_pb2.IngesterServiceGetDocumentResponse(
            document=self._summary(), preview="Kestrel Loom annual report.", facts=FACTS
        )


def script(request: orchestrator_pb2.AskRequest) -> list[ScriptItem]:
    """A gross margin computed from facts, as the orchestrator's fact path streams it."""
    text = (
        "Gross margin FY2025: 38.5 % [1].\nFormula: Gross margin = gross profit / revenue\n= 571.2 / 1,482.6\n"
        "Figures: Gross profit (FY2025) USD 571.2 million [1]; Net sales (FY2025) USD 1,482.6 million [1]"
    )
    citation = orchestrator_pb2.Citation(
        number=1, title=TITLE, source=SOURCE, page=40, origin=common_pb2.ORIGIN_LOCAL, score=1.0,
        document_id="doc-kl", text=f"{INCOME}\nGross profit (FY2025): 571.2 million USD", cited_in_answer=True,
    )  # fmt: skip
    figures = [
        orchestrator_pb2.Figure(label="Gross profit (FY2025)", value=571.2, unit="USD million",
                                text="USD 571.2 million", passage=1),
        orchestrator_pb2.Figure(label="Net sales (FY2025)", value=1482.6, unit="USD million",
                                text="USD 1,482.6 million", passage=1),
    ]  # fmt: skip
    done = orchestrator_pb2.AnswerDone(
        finish_reason="facts",
        model_id="facts",
        task=common_pb2.TASK_LOOKUP,
        calculation=orchestrator_pb2.Calculation(
            figures=figures, formula="Gross margin = gross profit / revenue; = 571.2 / 1,482.6", result=38.53,
            unit="%",
        ),
    )  # fmt: skip
    return list(answer_events(text, done=done, citations=[citation]))


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    ingester_pb2_grpc.add_IngesterServiceServicer_to_server(ScriptedIngester(), server)
    ingester_addr = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    server.start()
    log = tmp_path_factory.mktemp("facts-gateway") / "gateway.log"
    try:
        with ScriptedOrchestrator(script) as orchestrator, GatewayServer(orchestrator.addr, ingester_addr, log) as gw:
            yield gw.base_url
    finally:
        server.stop(grace=None)


def open_document(browser: Any, gateway: str) -> Any:
    browser.get(gateway + "/")
    browser.find_element(By.ID, "tab-kb").click()
    row_css = '#kb-list li[data-document-id="doc-kl"]'
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, row_css))
    browser.find_element(By.CSS_SELECTOR, f"{row_css} button.kb-details-button").send_keys(Keys.ENTER)
    box = browser.find_element(By.ID, "kb-facts")
    WebDriverWait(browser, 30).until(lambda d: box.is_displayed())
    return box


def test_the_document_view_lists_its_facts_with_page_links(
    browser: Any, gateway: str, assert_accessible: Accessible
) -> None:
    box = open_document(browser, gateway)
    rows = box.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == len(FACTS)
    cells = [c.text for c in rows[0].find_elements(By.CSS_SELECTOR, "td")]
    assert cells == ["p. 40", INCOME, "Net sales", "revenue", "FY2025", "1,482.6 million USD"]
    link = rows[0].find_element(By.CSS_SELECTOR, "td.fact-page a")
    assert link.get_attribute("href") == f"{SOURCE}#page=40"
    assert link.get_attribute("target") == "_blank"
    assert rows[3].find_element(By.CSS_SELECTOR, ".fact-value").text == "2.31 USD per share"
    assert "4 figures read" in browser.find_element(By.ID, "kb-facts-count").text
    assert_accessible(browser, "document view with facts")

    # The 中文 UI relabels the table (the line items stay as printed).
    browser.find_element(By.ID, "lang-zh").click()
    headers = [h.text for h in box.find_elements(By.CSS_SELECTOR, "thead th")]
    assert headers == ["页码", "表格", "项目", "概念", "期间", "数值"]
    first = box.find_elements(By.CSS_SELECTOR, "tbody tr")[0]
    assert first.find_element(By.CSS_SELECTOR, ".fact-page a").text == "第 40 页"
    assert first.find_element(By.CSS_SELECTOR, ".fact-value").text == "1,482.6 百万 USD"
    assert first.find_element(By.CSS_SELECTOR, ".fact-label").text == "Net sales"
    browser.find_element(By.ID, "lang-en").click()


def test_a_computed_answer_shows_the_formula_and_each_figures_page(
    browser: Any, gateway: str, assert_accessible: Accessible
) -> None:
    browser.get(gateway + "/")
    browser.find_element(By.ID, "question").send_keys("What was Kestrel Loom's gross margin in FY2025?" + Keys.ENTER)
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, '#turn-1[data-finished="true"]'))
    turn = browser.find_element(By.ID, "turn-1")
    calc = turn.find_element(By.CSS_SELECTOR, ".calculation")
    assert calc.is_displayed()
    assert calc.find_element(By.CSS_SELECTOR, ".formula code").text.startswith("Gross margin = gross profit / revenue")
    figures = calc.find_elements(By.CSS_SELECTOR, ".figures li")
    assert len(figures) == 2
    assert figures[0].find_element(By.CSS_SELECTOR, "a.cite").get_attribute("href").endswith("#turn-1-src-1")
    page = figures[0].find_element(By.CSS_SELECTOR, "a.page-link")
    assert page.text == f"{TITLE}, page 40"
    assert page.get_attribute("href") == f"{SOURCE}#page=40"
    assert "38.53%" in calc.find_element(By.CSS_SELECTOR, ".result").text
    assert "Formula: Gross margin" in turn.find_element(By.CSS_SELECTOR, ".answer").text
    assert_accessible(browser, "a computed answer")

    browser.find_element(By.ID, "lang-zh").click()
    assert page.text == f"{TITLE}，第 40 页"
    browser.find_element(By.ID, "lang-en").click()
