"""Extraction budgets: oversized or pathological documents are refused or stopped, never parsed forever.

The parses run in real worker processes (docs.workers); "stopped" is checked on the processes
themselves: after a timeout no worker of ours is left running.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from fixtures.processes import is_alive, live_children
from test_loaders import make_pdf  # same folder: pytest puts it on sys.path
from weaverbird_common.docs.budgets import ExtractionBudget
from weaverbird_common.docs.loaders import (
    DocumentTooLarge,
    ExtractionTimedOut,
    MarkupTooComplex,
    OverBudget,
    UnreadableDocument,
    load_bytes,
)
from weaverbird_common.docs.workers import WorkerCrashed, WorkerPool

DIVS = 2_000_000
ARTICLE = (
    b"<html><head><title>Northwind results</title></head><body><article><h1>Results</h1>"
    b"<p>Northwind Robotics reported revenue of $1,284.6 million for fiscal 2024, up 12%.</p>"
    b"<table><tr><th>Metric</th><th>2024</th></tr><tr><td>Revenue</td><td>1,284.6</td></tr></table>"
    b"</article></body></html>"
)


def _div_page(count: int) -> bytes:
    return b"<html><body>" + b"<div>a</div>\n" * count + b"</body></html>"


def _our_workers(parent: int | None = None) -> dict[int, str]:
    """Live extraction workers started by `parent` (default: this process): pid -> scheduler state."""
    children = live_children(parent or os.getpid())
    return {child.pid: child.state for child in children if child.mentions(b"weaverbird_common.docs.workers")}


def test_the_two_million_div_page_is_refused_before_parsing() -> None:
    page = _div_page(DIVS)
    with pytest.raises(OverBudget) as refused:
        load_bytes(page, "divs.html")
    assert isinstance(refused.value, UnreadableDocument)  # callers that only know the base still refuse it
    assert "limit" in refused.value.reason


def test_tag_count_alone_refuses_the_page_when_its_size_is_allowed() -> None:
    budget = ExtractionBudget(max_html_mb=64)
    with pytest.raises(MarkupTooComplex, match="more than 250,000 tags"):
        load_bytes(_div_page(DIVS), "divs.html", budget=budget)


def test_a_parse_past_its_time_budget_is_killed_and_leaves_no_busy_worker() -> None:
    # Pre-checks lifted so the parse really starts; 200,000 divs take trafilatura far longer than 1 s.
    budget = ExtractionBudget(max_html_mb=64, max_html_tags=10_000_000, timeout_s=1)
    with pytest.raises(ExtractionTimedOut, match="longer than 1s") as stopped:
        load_bytes(_div_page(200_000), "divs.html", budget=budget)
    assert stopped.value.limit == 1
    assert all(state != "R" for state in _our_workers().values()), _our_workers()
    # The pool replaces the killed worker: the next document parses normally (with time to spare for
    # the new worker's start-up on a busy machine: this checks recovery, not speed).
    assert "1,284.6" in load_bytes(ARTICLE, "after.html", budget=ExtractionBudget(timeout_s=120)).text


@pytest.mark.parametrize(
    ("data", "filename", "budget"),
    [
        (make_pdf([["Revenue 1,284.6"]]), "big.pdf", ExtractionBudget(max_pdf_mb=0.0001)),
        (ARTICLE, "big.html", ExtractionBudget(max_html_mb=0.0001)),
        (b"# Notes\n\n" + b"revenue grew. " * 100, "big.md", ExtractionBudget(max_text_mb=0.0001)),
        (b"revenue grew. " * 100, "big.txt", ExtractionBudget(max_text_mb=0.0001)),
    ],
)
def test_each_format_has_its_own_size_limit(data: bytes, filename: str, budget: ExtractionBudget) -> None:
    with pytest.raises(DocumentTooLarge, match=r"the limit is 0\.0 MiB"):
        load_bytes(data, filename, budget=budget)


def test_size_limits_are_per_format() -> None:
    # A PDF-sized allowance does not let a large HTML page through, and the reverse.
    budget = ExtractionBudget(max_pdf_mb=64, max_html_mb=0.0001)
    assert load_bytes(make_pdf([["Revenue 1,284.6"]]), "ok.pdf", budget=budget).page_count == 1
    with pytest.raises(DocumentTooLarge):
        load_bytes(ARTICLE, "page.html", budget=budget)


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCS_MAX_HTML_TAGS", "5")
    monkeypatch.setenv("DOCS_TIMEOUT_S", "7.5")
    budget = ExtractionBudget()
    assert (budget.max_html_tags, budget.timeout_s) == (5, 7.5)
    with pytest.raises(MarkupTooComplex):
        load_bytes(ARTICLE, "page.html", budget=budget)


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (ARTICLE, "article.html"),
        (make_pdf([["Northwind Robotics annual report 2024"], ["Revenue 1,284.6 million"]]), "northwind-2024.pdf"),
        (b"---\ntitle: Notes\ncompany: Northwind\n---\n# Notes\n\nRevenue was 1,284.6.", "notes.md"),
    ],
)
def test_a_worker_parse_equals_the_in_process_parse(data: bytes, filename: str) -> None:
    in_worker = load_bytes(data, filename, budget=ExtractionBudget(timeout_s=30))
    in_process = load_bytes(data, filename, budget=ExtractionBudget(timeout_s=0))
    assert in_worker == in_process
    assert "1,284.6" in in_worker.text


def test_errors_raised_in_the_worker_keep_their_type_and_message() -> None:
    with pytest.raises(UnreadableDocument, match="corrupt PDF"):
        load_bytes(b"%PDF-1.4\nnot really a pdf", "broken.pdf", budget=ExtractionBudget(timeout_s=30))


def test_a_worker_that_dies_mid_call_is_reported_and_replaced() -> None:
    pool = WorkerPool(1)
    try:
        with pytest.raises(WorkerCrashed):
            pool.run(os._exit, 3, timeout_s=30)
        assert pool.run(len, "abc", timeout_s=30) == 3
    finally:
        pool.close()


# A parse that runs for minutes (1,000,000 divs), far longer than the test waits for it to end.
_SLOW_PARSE = """
from weaverbird_common.docs.budgets import ExtractionBudget
from weaverbird_common.docs.loaders import load_bytes
page = b"<html><body>" + b"<div>a</div>" * 1_000_000 + b"</body></html>"
load_bytes(page, "slow.html", budget=ExtractionBudget(max_html_mb=64, max_html_tags=10**8, timeout_s=600))
"""


def test_a_worker_stops_mid_parse_when_its_service_is_killed() -> None:
    service = subprocess.Popen([sys.executable, "-c", _SLOW_PARSE], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (workers := _our_workers(service.pid)) or "R" not in workers.values():
            assert time.monotonic() < deadline and service.poll() is None, "the parse never started"
            time.sleep(0.1)
        (worker,) = workers
        service.kill()
        service.wait()
        # The worker notices within about a second; its parse alone would run for minutes.
        deadline = time.monotonic() + 20
        while is_alive(worker):
            assert time.monotonic() < deadline, "the orphaned worker kept parsing"
            time.sleep(0.1)
    finally:
        service.kill()
        service.wait()
