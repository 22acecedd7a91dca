"""Citations re-pointed at the passage that holds a figure, instead of withholding a right figure."""

from __future__ import annotations

from weaverbird_orchestrator.numeric_check import check_answer, recite

PASSAGES = [
    "净息差（前三季度，年化）：1.87%，较上半年下降2个基点。",
    "不良贷款率：1.21%，较6月末下降0.02个百分点。",
    "管理层表示，净息差收窄主要受贷款市场报价利率下调影响。",
]


def test_the_right_figure_with_the_wrong_marker_cites_the_passage_that_holds_it() -> None:
    answer = "The net interest margin for the first three quarters of 2024 was 1.87% [2][3]."
    assert check_answer(answer, PASSAGES).result == "unsupported"
    fixed = recite(answer, PASSAGES)
    assert fixed == "The net interest margin for the first three quarters of 2024 was 1.87% [1]."
    assert check_answer(fixed, PASSAGES).result == "supported"


def test_each_run_is_judged_by_the_figures_before_it_and_right_runs_stay() -> None:
    fixed = recite("NIM was 1.87% [1] and the NPL ratio 1.21% [3].", PASSAGES)
    assert fixed == "NIM was 1.87% [1] and the NPL ratio 1.21% [2]."


def test_no_change_when_a_figure_is_in_no_passage_or_the_marker_was_already_shown() -> None:
    assert recite("NIM was 9.99% [2].", PASSAGES) is None  # invented: withheld, not re-pointed
    answer = "NIM was 1.87% [2]."
    assert recite(answer, PASSAGES, editable_from=len(answer)) is None  # the user saw "[2]" already
    assert recite("NIM was 1.87% [1].", PASSAGES) is None  # nothing to fix
