"""Gives a figure copied from a table the scale its table states: "$1,824 [1]" from a cash flow statement
"(in millions)" becomes "$1,824 million [1]".

A small model copies a table cell exactly, as the prompt asks, and drops the table's unit line, which sits
far above the row; the numeric check passes the digits (they are in the passage, at its stated scale) and
the user reads a sum a million times too small. The scale is added only to an amount of money ("$1,824",
"USD 1,824") that is bare (no scale word, not a percentage, no per-share cents, no word of the answer's own
after it), and only when the passages it cites state those digits at one scale (a scale word beside them or
the unit line of the table above them). A bare count is never scaled: stores and headcounts sit in tables
on pages whose other tables are "in millions". English answers only: the model reads a Chinese table's
万元 into the figure itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from weaverbird_common.questions import CJK_RE

from weaverbird_orchestrator.citations import cited_numbers
from weaverbird_orchestrator.numeric_check import MARKER_RUN, placed_figures, stated_scales

_SCALE_NAMES = {1e3: "thousand", 1e6: "million", 1e9: "billion"}
# Words that may follow an amount without saying what it counts: "$1,824 in cash", "$962 for Best Buy".
_LINKING = frozenset(
    "in of for and or from to at during as compared versus vs on by while with was were is are which that "
    "than through".split()
)
_NEXT_WORD = re.compile(r"\s*([A-Za-z]+)")
# Only amounts of money: a bare count ("908" stores, "100" of VaR) may sit under a unit line of another table.
_CURRENCY = re.compile(r"(?:US|HK|NT|S|A|C)?\$|(?:USD|EUR|GBP)\b")
# Below this a bare number is as likely a count or a per-share amount as a table cell in millions.
_SMALLEST = 100


def with_table_scales(answer: str, passages: Sequence[str], editable_from: int = 0) -> str | None:
    """The answer with its table scales written out; None when no figure needs one. Text before
    `editable_from` (already shown to the user) never changes: a figure ending there is left as it is."""
    if CJK_RE.search(answer):
        return None
    out, last = [], 0
    for figure, _, end in placed_figures(answer):
        if figure.scale != 1.0 or figure.percent or abs(figure.raw) < _SMALLEST or figure.decimals >= 2:
            continue
        if not _CURRENCY.match(figure.text) or figure.text[-1:].isalpha():
            continue
        word = _NEXT_WORD.match(answer[end:])
        if word and word.group(1).lower() not in _LINKING:
            continue
        # The first run of citation markers after the figure, in the same line.
        markers = MARKER_RUN.search(answer, end)
        same_line = markers is not None and "\n" not in answer[end : markers.start()]
        cited = [n for n in cited_numbers(markers.group()) if 1 <= n <= len(passages)] if same_line else []
        if not cited:
            continue
        scales = set().union(*(stated_scales(figure, passages[n - 1]) for n in cited))
        if len(scales) != 1 or (scale := scales.pop()) not in _SCALE_NAMES:
            continue
        if end < editable_from:  # the scale word goes right after the figure, which the user has seen
            continue
        out.append(answer[last:end] + " " + _SCALE_NAMES[scale])
        last = end
    if not out:
        return None
    return "".join(out) + answer[last:]
