"""Arithmetic the model wrote and left undone is finished by code; ranges, chains and done sums are left."""

from __future__ import annotations

import pytest
from weaverbird_orchestrator.answer_arithmetic import finish_arithmetic


@pytest.mark.parametrize(
    ("answer", "finished"),
    [
        (
            "It increased the agreement by $4,200,000,000 - $3,800,000,000 [3].",
            "It increased the agreement by $4,200,000,000 - $3,800,000,000 = $400,000,000 [3].",
        ),
        ("It rose by $4.2 billion - $3.8 billion.", "It rose by $4.2 billion - $3.8 billion = $0.4 billion."),
        ("Together USD 1,250 + USD 980.5 [1][2].", "Together USD 1,250 + USD 980.5 = USD 2,230.5 [1][2]."),
        ("The margin moved 14.0% - 13.8% [1].", "The margin moved 14.0% - 13.8% = 0.2 percentage points [1]."),
        ("毛利率提高了 25.6% - 23.1% [1]。", "毛利率提高了 25.6% - 23.1% = 2.5个百分点 [1]。"),
    ],
)
def test_an_undone_sum_of_two_checked_figures_is_finished(answer: str, finished: str) -> None:
    assert finish_arithmetic(answer) == finished


@pytest.mark.parametrize(
    "answer",
    [
        "Guidance is 10 - 12% growth [1].",  # a range: the smaller first, and one percent sign
        "Guidance is $3.8 - $4.2 billion [1].",  # a range written with one scale word
        "The difference is $4.2 billion - $3.8 million [1].",  # not one kind: no sum of them is shown
        "It fell by 5% - $3 [1].",
        "ROA = 505 - 300 = 205 [1].",  # done already
        "It is 1,000 - 300 [1] = 700.",
        "Sum: 100 + 200 + 300 [1].",  # a chain of three is left as written
        "Revenue was $5.1 billion in 2023 - 2024 [1].",  # years are no figures
        "Revenue was $5,100 [1].",
        "Margin = (62,286 - 59,237) / 62,286 [1].",  # part of a longer formula
        "Turnover is 194,579 / (183,910 + 183,913) [1].",
    ],
)
def test_ranges_chains_mixed_kinds_and_done_sums_are_left(answer: str) -> None:
    assert finish_arithmetic(answer) is None


def test_nothing_already_shown_is_changed() -> None:
    answer = "It rose by $4.2 billion - $3.8 billion."
    assert finish_arithmetic(answer, editable_from=len(answer)) is None  # all shown: nothing to add to
    # The stream may already have shown the words and the first "$": the result still goes after "billion".
    finished = finish_arithmetic(answer, editable_from=len("It rose by $"))
    assert finished == "It rose by $4.2 billion - $3.8 billion = $0.4 billion."
