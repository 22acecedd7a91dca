"""Scores one answer against a gold answer: strict (value with its scale, yes/no), and lenient beside it.

Strict: a figure of the answer must equal a figure of the gold answer *as a value*: "1,577 million"
and "1.58 billion" are the same answer (1 % relative; "1.6 billion" is not); "1,577" alone is not,
unless the question fixes the unit ("in USD millions"); 66 % equals 0.66. Numbers are read by the
served numeric check (numeric_check.answer_figures), so 万/亿, accounting negatives and full-width
digits count the same way here as in the product; a figure written like a name and named in the question
("3M") is no figure. A gold answer that opens with yes or no (是/否) is scored on that word instead.

Lenient (the figure reported before): any number of the answer equals a gold number up to a power of 1000
or a factor of 100, whatever units the answer wrote.
"""

from __future__ import annotations

import re

from weaverbird_common.wire_texts import says_insufficient
from weaverbird_orchestrator.numeric_check import Figure, answer_figures

TOLERANCE = 0.01
_QUESTION_UNIT = re.compile(r"(?i)\bin\s+(?:usd\s+|us\s+dollars?\s+|\$\s*)?(thousands|millions|billions)\b")
_UNIT_SCALE = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
_YES = re.compile(r"(?i)^\W*(?:yes\b|是的|是[，,。])")
_NO = re.compile(r"(?i)^\W*(?:no\b|不是|否[，,。]|没有)")


# A number with a scale letter glued to it, as in a name: "3M" is the company, not 3 million.
_NAME_LIKE = re.compile(r"^\d+[BMK]$")


def _names_in(question: str) -> frozenset[str]:
    """Figures of the question written like names ("3M"): an answer repeating one has not matched a gold
    figure (before 2026-11-28, "The debt securities ... under 3M's name ... are [2][3]." scored right)."""
    return frozenset(f.text for f in answer_figures(question) if _NAME_LIKE.match(f.text))


def _values(text: str, unit: float, names: frozenset[str] = frozenset()) -> list[tuple[float, bool, Figure]]:
    """(value, is_percent, figure) per figure of `text`; bare figures take the question's unit."""
    out = []
    for f in answer_figures(text):
        if f.text in names:
            continue
        scale = f.scale if (f.scale != 1.0 or f.percent) else unit
        out.append((abs(f.raw) * scale, f.percent, f))
    return out


def _same(answer: tuple[float, bool, Figure], gold: tuple[float, bool, Figure]) -> bool:
    a_value, a_percent, _ = answer
    g_value, g_percent, _ = gold
    # 66% and 0.66 are one value; 24.3% and a ratio of 24.3 are not.
    if a_percent and not g_percent:
        a_value /= 100
    elif g_percent and not a_percent:
        g_value /= 100
    if g_value == 0:
        return a_value == 0
    return abs(a_value - g_value) <= TOLERANCE * abs(g_value)


def polarity(text: str) -> str | None:
    """ "yes"/"no" when `text` opens with one (English or Chinese), else None."""
    if _YES.match(text):
        return "yes"
    if _NO.match(text):
        return "no"
    return None


def strict_correct(answer: str, gold: str, question: str = "") -> bool | None:
    """None when the gold answer holds neither a figure nor a yes/no (then it is not scored)."""
    gold_polarity = polarity(gold)
    if gold_polarity is not None:
        said = polarity(answer)
        if said is None:  # "The company did not ..." still says no; look for the word anywhere
            lowered = answer.lower()
            said = "yes" if re.search(r"\byes\b", lowered) else "no" if re.search(r"\bno\b|\bnot\b", lowered) else None
        return said == gold_polarity
    match = _QUESTION_UNIT.search(question)
    unit = _UNIT_SCALE[match.group(1).lower()] if match else 1.0
    names = _names_in(question)
    gold_values = _values(gold, unit, names)
    if not gold_values:
        return None
    answer_values = _values(answer, unit, names)
    return any(_same(a, g) for a in answer_values for g in gold_values)


def is_refusal(answer: str) -> bool:
    """The insufficient-information sentence of either language (the model's or the orchestrator's)."""
    return says_insufficient(answer)
