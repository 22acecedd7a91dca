"""Reading one printed figure: "$ 1,234", "(459 )" (negative), "—" (zero), "21.4 %", "1,044"."""

from __future__ import annotations

import re

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# A cell as statements print it. A dash alone is zero. A number may sit right after its label's last
# letter (pypdf drops the gap: "tax provision1,406"), so no look-behind on letters; the look-ahead keeps
# "31," of "December 31, 2017" and "2.5x" out.
CELL = re.compile(
    rf"(?<![\d.,/])(?:(?:US)?\$|RMB|¥|€|£)?\s*"
    rf"(?:\(\s*(?:\$\s*)?(?P<neg>{_NUMBER})\s*\)|(?P<minus>[-−])?(?P<num>{_NUMBER})|(?P<dash>—|(?<![A-Za-z])(?:–|-{{1,2}})))"
    rf"(?P<pct>\s*%)?(?:\s*\*+)?(?=\s|$|[A-Z$(—–]|[\u4e00-\u9fff])"
)
_YEAR = re.compile(r"(?:19[89]\d|20[0-4]\d)")


def cell_value(match: re.Match[str]) -> float:
    """The signed value of a CELL match: parentheses and a minus are negative, a dash is 0."""
    if match.group("dash"):
        return 0.0
    if match.group("neg"):
        return -float(match.group("neg").replace(",", ""))
    value = float(match.group("num").replace(",", ""))
    return -value if match.group("minus") else value


def is_year_cell(match: re.Match[str]) -> bool:
    """A bare four-digit year (a column header), not an amount like 2,019 or $ 2019."""
    text = match.group(0).strip()
    return bool(_YEAR.fullmatch(text))


def is_percent(match: re.Match[str]) -> bool:
    return bool(match.group("pct"))


def is_dash(match: re.Match[str]) -> bool:
    return bool(match.group("dash"))
