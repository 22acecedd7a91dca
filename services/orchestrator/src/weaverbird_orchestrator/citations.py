"""Finds which numbered passages an answer actually cites."""

from __future__ import annotations

import re

# [1], [2, 3], [1][2] and the full-width 【1】 a Chinese answer may use.
_CITE = re.compile(r"[\[【]\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*[\]】]")


def cited_numbers(answer: str) -> set[int]:
    """Returns the citation numbers that appear in `answer`."""
    numbers: set[int] = set()
    for match in _CITE.finditer(answer):
        numbers.update(int(n) for n in re.split(r"\s*[,，、]\s*", match.group(1)))
    return numbers


def without_citations(answer: str) -> str:
    """`answer` with its citation markers blanked out: what it says in its own words."""
    return _CITE.sub(" ", answer)
