"""Finishes arithmetic the model wrote and left undone: "increased by $4,200,000,000 - $3,800,000,000 [3]".

Both figures were checked against the passages; the model chose them and the operation, which is what a
small model can be trusted with. Code then does the sum, in the open: "$4,200,000,000 - $3,800,000,000 =
$400,000,000". Only two figures of one kind (same currency, scale word, percent or not) joined by a spaced
plus or minus are read, and a minus only when the first is the larger, since "10 - 12" is as often a range;
a percentage difference is written in percentage points.
"""

from __future__ import annotations

import itertools
import re

from weaverbird_common.questions import CJK_RE

from weaverbird_orchestrator.numeric_check import Figure, placed_figures

_OPERATOR = re.compile(r"^\s+([-+−])\s+$")
# After the second figure, past its citation markers: an "=" (the model did the sum itself), or more of a
# formula, "(A - B) / C", whose part is not the answer. Before the first: an opening bracket or operator.
_NOT_ALONE_AFTER = re.compile(r"^(?:\s*\[\s*\d+\s*\])*\s*[=＝≈)）/*×÷]")
_NOT_ALONE_BEFORE = re.compile(r"[=＝(（/*×÷]\s*$")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _parts(figure: Figure) -> tuple[str, str]:
    """The text before and after the number: "$" and "" for "$4,200"; "" and " billion" for "4.2 billion"."""
    match = _NUMBER.search(figure.text)
    assert match is not None, "a figure holds a number"
    return figure.text[: match.start()], figure.text[match.end() :]


def _same_kind(a: Figure, b: Figure) -> bool:
    return a.scale == b.scale and a.percent == b.percent and a.raw > 0 and b.raw > 0 and _parts(a) == _parts(b)


def _written(value: float, a: Figure, b: Figure, chinese: bool) -> str:
    prefix, suffix = _parts(b)
    decimals = max(a.decimals, b.decimals)
    grouped = "," in a.text or "," in b.text
    number = f"{value:,.{decimals}f}" if grouped else f"{value:.{decimals}f}"
    if b.percent:
        suffix = "个百分点" if chinese else " percentage points"
    return f"{prefix}{number}{suffix}"


def finish_arithmetic(answer: str, editable_from: int = 0) -> str | None:
    """The answer with each undone "A - B" / "A + B" that stands alone (not part of a longer formula)
    followed by "= result"; None when there is none. Text before `editable_from` (already shown) is never
    changed: the result goes after the second figure, which must end at or after it."""
    placed = placed_figures(answer)
    chinese = bool(CJK_RE.search(answer))
    # The operator between each figure and the next; a chain of three or more is left as written.
    operators = [_OPERATOR.match(answer[a[2] : b[1]]) for a, b in itertools.pairwise(placed)]
    out, last = [], 0
    for i, operator in enumerate(operators):
        (a, a_start, _), (b, _, b_end) = placed[i], placed[i + 1]
        chained = (i > 0 and operators[i - 1]) or (i + 1 < len(operators) and operators[i + 1])
        if not operator or chained or b_end < editable_from or not _same_kind(a, b):
            continue
        if _NOT_ALONE_AFTER.match(answer[b_end:]) or _NOT_ALONE_BEFORE.search(answer[:a_start]):
            continue
        minus = operator.group(1) != "+"
        if minus and a.raw <= b.raw:  # "10 - 12" reads as a range; a difference puts the larger first
            continue
        value = a.raw - b.raw if minus else a.raw + b.raw
        out.append(answer[last:b_end] + " = " + _written(value, a, b, chinese))
        last = b_end
    if not out:
        return None
    return "".join(out) + answer[last:]
