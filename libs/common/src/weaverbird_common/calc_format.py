"""The text format of a calculation's figures step: the generator's prompt asks the model for it and
the orchestrator reads it (checks each figure against its passage, then evaluates the formula).

    A: revenue 2024 = USD 1,284.6 million [1]
    B: revenue 2023 = USD 1,102.9 million [1]
    Formula: (A - B) / B * 100

or, when a figure is not in the passages, only `Missing: <what>`. The reader is lenient about what a
small model adds around the format (bullets, bold, full-width punctuation, a Chinese formula key).
"""

from __future__ import annotations

import re
from typing import NamedTuple

FORMULA_KEY = "Formula"
MISSING_KEY = "Missing"

FIGURE_LINE = re.compile(
    r"^\s*[-*]?\s*\**(?P<letter>[A-Z])\**\s*[:：.)]\s*(?P<label>.*?)\s*[=＝:：]\s*(?P<text>.+?)\s*"
    r"[\[【]\s*(?P<passage>\d+)\s*[\]】]\s*\.?\s*$"
)
FORMULA_LINE = re.compile(rf"^\s*\**(?:{FORMULA_KEY}|公式|算式|计算)\**\s*[:：=]\s*(?P<formula>.+?)\s*$", re.IGNORECASE)


class FigureLine(NamedTuple):
    """One figure as the model wrote it: its letter, what it is, the figure's text, the passage cited."""

    letter: str
    label: str
    text: str
    passage: int


def figure_line(letter: str, label: str, figure: str, passage: int | str) -> str:
    """A figure line as the model is asked to write it (`passage` may be a placeholder in a prompt)."""
    return f"{letter}: {label} = {figure} [{passage}]"


def formula_line(formula: str) -> str:
    return f"{FORMULA_KEY}: {formula}"


def missing_line(what: str) -> str:
    return f"{MISSING_KEY}: {what}"


def read_figure_line(line: str) -> FigureLine | None:
    """The figure a line holds, or None for any other line."""
    m = FIGURE_LINE.match(line)
    if m is None:
        return None
    return FigureLine(m.group("letter"), m.group("label"), m.group("text"), int(m.group("passage")))


def read_formula_line(line: str) -> str | None:
    """The formula a line states (backticks stripped), or None for any other line."""
    m = FORMULA_LINE.match(line)
    return m.group("formula").strip("` ") if m else None


def is_missing_line(line: str) -> bool:
    """Whether the line says a figure is not in the passages (the model's way of declining)."""
    return line.strip().lower().startswith(MISSING_KEY.lower())


def parse_figures(text: str) -> tuple[list[FigureLine], str]:
    """Every figure line (the first of each letter) and the last formula ("" when none); other prose
    is skipped."""
    figures: list[FigureLine] = []
    formula = ""
    for line in text.splitlines():
        if (stated := read_formula_line(line)) is not None:
            formula = stated
        elif (figure := read_figure_line(line)) is not None and figure.letter not in {f.letter for f in figures}:
            figures.append(figure)
    return figures, formula
