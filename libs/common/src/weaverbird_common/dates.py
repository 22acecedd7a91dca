"""Calendar dates written in text: "May 26, 2023", "26 May 2023", "2023-05-26", "2023年5月26日".

Two readers use them: ingest dates a document by the latest date its first pages state (a release's
dateline, a cover's "for the quarterly period ended ..."), and the coverage gate reads the date a
question asks about ("As of May 26, 2023, ..."), so a question about events after the newest document
of a company is not answered from older ones. Only full dates count: a bare year or month is a period,
which the year and quarter rules already read.
"""

from __future__ import annotations

import re
from datetime import date

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# Full names and the usual abbreviations ("Aug.", "Sept."); pypdf often drops the space before the day.
_MONTH = r"(?P<month>Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"  # noqa: E501
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_PATTERNS = (
    # May 26, 2023 / May26,2023 / Aug. 30 2023 / September 1st, 2023; no word boundary before the month,
    # since PDF text runs words together ("period endedJuly29,2023")
    re.compile(rf"{_MONTH}\.?\s*(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s*{_YEAR}(?!\d)", re.IGNORECASE),
    # 26 May 2023 / 1st September, 2023
    re.compile(rf"(?<!\d)(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+{_YEAR}(?!\d)", re.IGNORECASE),
    # 2023-05-26
    re.compile(rf"(?<![\d-]){_YEAR}-(?P<month>\d{{2}})-(?P<day>\d{{2}})(?![\d-])"),
    # 2023年5月26日 / 2023年05月26号
    re.compile(rf"{_YEAR}\s*年\s*(?P<month>\d{{1,2}})\s*月\s*(?P<day>\d{{1,2}})\s*[日号]"),
)


def _month_number(text: str) -> int:
    return int(text) if text.isdigit() else _MONTHS.index(text[:3].lower()) + 1


def dates_in(text: str) -> list[date]:
    """Every valid full date the text writes, in no particular order (an impossible one, Feb 30, is skipped)."""
    found: list[date] = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            try:
                found.append(date(int(m.group("year")), _month_number(m.group("month")), int(m.group("day"))))
            except ValueError:
                continue
    return found


def latest_date(text: str, not_after: date | None = None) -> date | None:
    """The latest full date the text writes (none later than `not_after` when given), or None."""
    return max((d for d in dates_in(text) if not_after is None or d <= not_after), default=None)


def parse_iso(value: str) -> date | None:
    """An ISO date (YYYY-MM-DD, as payloads store published_date), or None for anything else."""
    try:
        return date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None
