"""The stream's figure guard: words before the first figure flow at once, figures wait for the check."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from weaverbird_orchestrator.figure_guard import FigureGuard


def _stream(pieces: Sequence[str], supported: bool = True) -> tuple[list[str], str]:
    guard = FigureGuard()
    shown = [guard.feed(piece) for piece in pieces]
    return shown, guard.finish(supported)


def test_words_before_the_first_figure_are_shown_and_the_figure_waits() -> None:
    shown, rest = _stream(["Revenue", " was", " USD", " 1", ",284", ".6", " million", " [1", "]."])
    assert "".join(shown) == "Revenue was USD"
    assert rest == " 1,284.6 million [1]."


def test_an_unsupported_answer_never_shows_its_figures() -> None:
    shown, rest = _stream(["Revenue was ", "USD 5.1", " billion [1]", " and headcount 4,512 [1]."], supported=False)
    assert "".join(shown) == "Revenue was " and rest == ""


@pytest.mark.parametrize(
    ("pieces", "shown_before_end"),
    [
        # A year is no figure: it flows once what follows settles it (年 cannot start a unit).
        (["2023", "年", "营业", "收入", "为", "7,115", "万元", "[1]", "。"], "2023年营业收入为"),
        (
            ["In fiscal ", "2023", ", revenue", " grew across", " all segments", " [1]."],
            "In fiscal 2023, revenue grew across all segments [1].",
        ),
        # "10-K" is a name, not the figure 10; citation markers are not figures.
        (
            ["See the ", "10", "-K", " filing", " for the", " details", " [2]."],
            "See the 10-K filing for the details [2].",
        ),
        (
            ["The provided information is insufficient to answer this question."],
            "The provided information is insufficient to answer this question.",
        ),
    ],
)
def test_years_names_and_markers_pass_before_the_end(pieces: list[str], shown_before_end: str) -> None:
    shown, rest = _stream(pieces)
    assert "".join(shown) == shown_before_end
    assert "".join(shown) + rest == "".join(pieces)


def test_a_number_that_may_still_grow_is_held_until_it_is_settled() -> None:
    guard = FigureGuard()
    assert guard.feed("Margin was 12") == "Margin was "  # "12" may become "12.5%" or "12 million"
    assert not guard.holding
    assert guard.feed(".5% [1].") == ""
    assert guard.holding
    assert guard.finish(supported=True) == "12.5% [1]."


def test_a_guard_finishes_with_re_pointed_citations_but_never_changes_what_was_shown() -> None:
    guard = FigureGuard()
    shown = guard.feed("NIM was 1.87% [2][3].")
    assert shown == "NIM was "
    assert guard.finish(True, text="NIM was 1.87% [1].") == "1.87% [1]."
    other = FigureGuard()
    other.feed("NIM was 1.87% [2].")
    with pytest.raises(ValueError, match="held part"):
        other.finish(True, text="Margin was 1.87% [1].")
