"""Which fiscal years a passage talks about, and ranking passages about the asked year first.

A figure for another period is not the answer: "For fiscal 2025 the company expects revenue of ..."
shares every word but the year with a question about fiscal 2024 revenue, and a small model copies
whatever figure comes first. Passages that name only other years therefore go after the rest; passages
naming the asked year, or no year at all, keep their order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

# 2024, FY2024, FY24, fiscal 2024, 2024年; not money ($2024), not part of a longer number (2,024 / 20245).
_YEAR = re.compile(r"(?<![\d.,$])(?:(?:19|20)\d{2})(?!\d|,\d|%|\.\d)|\bFY\s*'?\d{2}(?!\d)", re.IGNORECASE)


def years_named(text: str) -> set[int]:
    """Fiscal years written in the text (two-digit FY24 read as 2024)."""
    out: set[int] = set()
    for match in _YEAR.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        year = int(digits) if len(digits) == 4 else 2000 + int(digits[-2:])
        if 1990 <= year <= 2100:
            out.add(year)
    return out


def prefer_period(items: Sequence[T], year: int, text_of: Callable[[T], str]) -> list[T]:
    """items with those whose text names other years but not `year` moved to the end, order kept."""
    about, elsewhere = [], []
    for item in items:
        named = years_named(text_of(item))
        (elsewhere if named and year not in named else about).append(item)
    return about + elsewhere
