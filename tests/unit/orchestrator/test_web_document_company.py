"""Web documents are filed under the question's company only when the page names that company."""

from __future__ import annotations

from weaverbird_common.docs.documents import Document, Page
from weaverbird_orchestrator.web_evidence import ingest_message


def _page(title: str, text: str) -> Document:
    return Document("d1", title, "https://example.com/p", [Page(None, text)], "en", "", None, None, "")


def test_a_page_naming_the_company_is_filed_under_it() -> None:
    page = _page("FY2025 results", "Johnson & Johnson reported sales of $88.8 billion.")
    assert ingest_message(page, 0.5, "What were JNJ's sales?", "JOHNSON_JOHNSON").company == "JOHNSON_JOHNSON"


def test_a_page_about_someone_else_is_not_filed_under_the_question_company() -> None:
    page = _page("Pfizer annual report", "Pfizer reported revenue of $58.5 billion.")
    assert ingest_message(page, 0.5, "What were JNJ's sales?", "JOHNSON_JOHNSON").company is None
    assert ingest_message(page, 0.5, "What was revenue?").company is None


def test_a_company_name_inside_another_word_does_not_count() -> None:
    page = _page("Fiscal 2023 Management report", "Our intelligence unit grew; see Management's discussion.")
    assert ingest_message(page, 0.5, "What was 3M's revenue?", "3M").company is None
    assert ingest_message(page, 0.5, "What was Intel's revenue?", "INTEL").company is None
    assert ingest_message(_page("3M 2023 10-K", "Sales were $32.7B."), 0.5, "q", "3M").company == "3M"
