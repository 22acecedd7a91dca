"""A figure copied bare from a table gets the scale its table states, only where that scale is certain."""

from __future__ import annotations

import pytest
from weaverbird_orchestrator.table_scale import with_table_scales

CASH_FLOWS = (
    "CONSOLIDATED STATEMENTS OF CASH FLOWS ($ in millions)\n"
    "Total cash provided by operating activities\n1,824\n3,252\n"
    "Total cash used in investing activities\n(962)\n(1,372)"
)
OPERATIONS = (
    "CONSOLIDATED STATEMENTS OF OPERATIONS (in thousands, except per share data)\nRevenues\n11,692,713\nEPS\n1.25"
)
STORES = "Store count\nDomestic stores\n969\n982\nOperating income (in millions)\n1,824\nStores at year end\n908"
PROSE = "Operating cash flow was $1,824 million, up from the year before."
NO_UNIT = "Selected data\nEmployees\n71,100\nRevenue\n1,824"


@pytest.mark.parametrize(
    ("answer", "scaled"),
    [
        (
            "Operating activities brought in $1,824 in cash flow [1].",
            "Operating activities brought in $1,824 million in cash flow [1].",
        ),
        (
            "Investing used $962 [1] and operations gave $1,824 [1].",
            "Investing used $962 million [1] and operations gave $1,824 million [1].",
        ),
        ("Revenues were $11,692,713 [2].", "Revenues were $11,692,713 thousand [2]."),
        ("It was $1,824 [1][4].", "It was $1,824 million [1][4]."),  # one scale in both passages
        ("It was $1,824 [3].", "It was $1,824 million [3]."),  # below the unit line of its page
    ],
)
def test_a_bare_table_figure_gets_its_table_s_scale(answer: str, scaled: str) -> None:
    assert with_table_scales(answer, [CASH_FLOWS, OPERATIONS, STORES, PROSE, NO_UNIT]) == scaled


@pytest.mark.parametrize(
    "answer",
    [
        "Revenues were $11,692,713 thousand [2].",  # a scale already written
        "Operating activities brought in $1,824 in cash flow.",  # cites nothing: no table to read
        "Best Buy had 969 stores [3].",  # the answer says what it counts
        "EPS was $1.25 [2].",  # cents: a per-share amount
        "It was $1,824 [1][5].",  # passage 5 states the digits with no unit: two scales, none written
        "It had $969 [3] at year end.",  # above the page's only unit line: not in millions
        "B (stores at year end) = 908 [3]",  # a count below an "in millions" line: only money is scaled
        "Margin was 12.5% [1].",
        "营业收入为1,824 [1]。",
    ],
)
def test_no_scale_is_written_where_it_is_not_certain(answer: str) -> None:
    passages = [CASH_FLOWS, OPERATIONS, STORES, PROSE, NO_UNIT]
    assert with_table_scales(answer, passages) is None


def test_nothing_already_shown_is_changed() -> None:
    answer = "It was $1,824 [1]."
    assert with_table_scales(answer, [CASH_FLOWS], editable_from=len("It was $1,824 [")) is None
    assert with_table_scales(answer, [CASH_FLOWS], editable_from=len("It was $")) == "It was $1,824 million [1]."
