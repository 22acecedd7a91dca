"""Whether a value the model copied is grounded in the passages: every figure held by a passage (as
numeric_check reads figures), and stated for its own label rather than a neighbour's, in prose or in a
table. Shared by the JSON extraction (tasks/extraction.py) and the chart data (tasks/chart.py)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from weaverbird_common.periods import YEAR_DIGITS

from weaverbird_orchestrator.numeric_check import answer_figures, check_answer, mentions


def short(label: str, limit: int = 40) -> str:
    """A label as quoted in an error message: long ones cut, so a repair prompt stays short."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _fold(ch: str) -> str:
    lower = ch.lower()
    return lower if len(lower) == 1 else ch  # one character for one, so positions map back (_label_spans)


def _norm_text(text: str) -> str:
    """Letters and digits only, lower case."""
    return "".join(_fold(ch) for ch in text if ch.isalnum())


def number_text(value: float | int) -> str:
    """A JSON number as the figure it stands for, without exponent: 1.5e-05 -> "0.000015"."""
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    text = repr(value)
    return f"{value:.12f}".rstrip("0") if "e" in text else text


def figure_text(value: Any) -> str | None:
    """The text whose figures must be in the passages: a number or a string; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return number_text(value) if math.isfinite(value) else str(value)
    return value if isinstance(value, str) else None


def unsupported_figures(value: Any, passages: Sequence[str]) -> list[str]:
    """The figures of a scalar value that no passage holds (as numeric_check reads them).

    numeric_check takes a bare 1990-2100 for a year and skips it; in a JSON value it is as likely a figure
    ("2100" USD per tonne), so it is checked too, as "2100.0" (same value, never read as a year)."""
    text = figure_text(value)
    if text is None:
        return []
    if isinstance(value, float) and not math.isfinite(value):
        return [text]
    unsupported = list(check_answer(text, passages).unsupported)
    for mention in mentions(text):
        token = text[mention.start : mention.end]
        if not mention.figure and re.fullmatch(r"\d{4}", token) and check_answer(f"{token}.0", passages).unsupported:
            unsupported.append(token)
    return unsupported


# Sentences and clauses ("。", "；", ". "), and lines: where a label and its value sit together.
_SEGMENT_END = re.compile(r"\n|[。；;!?！？]|\.\s+")
_PERIOD_LABEL = re.compile(rf"(?i)^(?:fy\s?)?({YEAR_DIGITS})(?:年|年度)?$")


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.casefold()))


def names(label: str, text: str) -> bool:
    """Whether `text` names `label`: as written (ignoring case, spacing and punctuation), every word of a
    Latin label, or a year label's year as a number of its own ("2019年" in "2019 | 2018")."""
    period = _PERIOD_LABEL.match(label.strip())
    if period:
        return re.search(rf"(?<!\d){period.group(1)}(?!\d)", text) is not None
    norm = _norm_text(label)
    if not norm:
        return False
    if norm in _norm_text(text):
        return True
    words = _words(label)
    return bool(words) and label.isascii() and words <= _words(text)


def table_rows(text: str) -> list[list[str]]:
    """The cells of a passage's table lines ("a | b | c", with or without outer pipes)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if "|" not in line:
            continue
        if line.startswith("|") and line.endswith("|"):
            line = line[1:-1]
        rows.append([cell.strip() for cell in line.split("|")])
    return rows


def _has_figure(value: Any) -> bool:
    text = figure_text(value)
    return bool(text) and bool(mentions(text))


def _label_spans(label: str, text: str) -> list[tuple[int, int]]:
    """Where `text` names `label`, as (start, end) in `text`: case, spacing and punctuation ignored."""
    period = _PERIOD_LABEL.match(label.strip())
    if period:
        return [m.span() for m in re.finditer(rf"(?<!\d){period.group(1)}(?!\d)", text)]
    norm = _norm_text(label)
    kept = [i for i, ch in enumerate(text) if ch.isalnum()]
    flat = "".join(_fold(text[i]) for i in kept)
    spans, start = [], flat.find(norm) if norm else -1
    while start >= 0:
        spans.append((kept[start], kept[start + len(norm) - 1] + 1))
        start = flat.find(norm, start + 1)
    return spans


def _holds(value: Any, text: str) -> bool:
    """Whether `text` holds every figure of `value` (which has at least one)."""
    return not unsupported_figures(value, [text])


def _figures_in(piece: str) -> bool:
    """Whether a slice of a sentence holds a figure; the prefix keeps " 58." from reading as a list ordinal."""
    return bool(answer_figures("… " + piece))


def stated_with(label: str, value: Any, passages: Sequence[str], others: Sequence[str] = ()) -> bool | None:
    """True when a passage states `value` for `label`; False when passages name the label but never with this
    value; None when no passage names the label (a user's own wording, or a year implied by "2020 to 2022 ...
    respectively") or the value holds no figure: nothing to check.

    In prose, a sentence or clause names the label and the value sits between it and the neighbouring label
    (`others`: the other keys or entries), on the side the sentence puts its figures: "revenue of A and net
    income of B" (after), "A in 2021 and B in 2022" (before); when no figure stands next to the label
    ("X and Y were A and B respectively"), anywhere in the sentence. In a table, in the label's row or in
    the column it heads."""
    if not _has_figure(value):
        return None
    named = False
    for text in passages:
        for segment in _SEGMENT_END.split(text):
            spans = _label_spans(label, segment)
            if not spans:
                if names(label, segment):  # a Latin label with its words in another order: the whole clause
                    named = True
                    if _holds(value, segment):
                        return True
                continue
            named = True
            if _stated_in_clause(spans, value, segment, [o for o in others if o != label] + [label]):
                return True
        rows = table_rows(text)
        for row in rows:
            for column, cell in enumerate(row):
                if not names(label, cell):
                    continue
                named = True
                if any(_holds(value, other[column]) for other in rows if other is not row and column < len(other)):
                    return True
    return False if named else None


def _stated_in_clause(spans: list[tuple[int, int]], value: Any, segment: str, labels: Sequence[str]) -> bool:
    marks = sorted({span for label in labels for span in _label_spans(label, segment)})
    # Before the first label, only its own clause counts: a headline or lead-in with figures is not its value.
    clause = max(segment.rfind(",", 0, marks[0][0]), segment.rfind("，", 0, marks[0][0])) + 1
    after_style = _figures_in(segment[marks[-1][1] :])
    before_style = _figures_in(segment[clause : marks[0][0]])
    for start, end in spans:
        following = segment[end : next((s for s, _ in marks if s >= end), len(segment))]
        preceding = segment[max((e for _, e in marks if e <= start), default=clause) : start]
        own = following if after_style else preceding
        sides = [own] if after_style != before_style else [following, preceding]
        if any(_holds(value, side) for side in sides):
            return True
        # Names first, figures further on: "X and Y were A and B respectively", "X、Y分别为A、B".
        further = segment[end:] if after_style else segment[clause:start]
        if not _figures_in(own) and _holds(value, further):
            return True
    return False


def in_labelled_row(label: str, value: Any, passages: Sequence[str]) -> bool | None:
    """Whether `value` is in a table row whose first cell names `label`; None when no row does."""
    if not _has_figure(value):
        return None
    rows = [row for text in passages for row in table_rows(text) if row and row[0] and names(label, row[0])]
    if not rows:
        return None
    return any(not unsupported_figures(value, [" | ".join(row[1:])]) for row in rows)
