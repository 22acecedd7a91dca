""" "Extract" names JSON extraction only when what is extracted is not simply the answer: "Compute or
extract the answer ... from the statement of cash flows" asks for a figure (a lookup)."""

from __future__ import annotations

import pytest
from weaverbird_orchestrator.domain import Task
from weaverbird_orchestrator.tasks.router import classify


@pytest.mark.parametrize(
    ("question", "task"),
    [
        (
            "How much (in USD billions) did Wren Textiles pay out in cash dividends for FY2020? Compute or extract "
            "the answer by primarily using the details outlined in the statement of cash flows.",
            Task.CALCULATION,  # "compute": a figure either way, which the fact path answers
        ),
        ("Extract the figure for total revenue in 2023 from the income statement.", Task.LOOKUP),
        ("Extract revenue, net income and EPS for 2023 from the report.", Task.EXTRACTION),
        ("Extract the segment revenues as JSON.", Task.EXTRACTION),
    ],
)
def test_extract_routes_by_what_is_extracted(question: str, task: Task) -> None:
    assert classify(question).task == task
