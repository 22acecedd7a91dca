"""Fiscal years and quarters as questions and documents write them, read in one place.

Questions (questions.filters_from_question), follow-ups (the orchestrator's tasks/followup), document
covers (docs/entities), the coverage gate's name tokens (coverage) and passage ranking (prefer_period
below) all read years and quarters with the patterns and readers of this module.

Ranking: a figure for another period is not the answer. "For fiscal 2025 the company expects revenue of
..." shares every word but the year with a question about fiscal 2024 revenue, and a small model copies
whatever figure comes first. Passages that name only other years therefore go after the rest; passages
naming the asked year, or no year at all, keep their order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

MIN_YEAR, MAX_YEAR = 1990, 2100
# Four digits of a year of this or the last century (no lookarounds: callers add their own).
YEAR_DIGITS = r"(?:19|20)\d{2}"
# A bare year: not money ($2024), not part of a longer number (2,024 / 2024.5 / 20245 / 2024%); a comma
# after it is punctuation ("In 2023, what ...").
BARE_YEAR = rf"(?<![\d.,$])(?P<y>{YEAR_DIGITS})(?![\d%]|[.,]\d)"
# 2024, FY2024, FY 2024, FY24, FY'24 (a two-digit year only after FY): group "y" or "y2".
YEAR_RE = re.compile(rf"(?:\bFY\s*'?(?P<y2>\d{{2}})(?!\d))|{BARE_YEAR}", re.IGNORECASE)
# Four digits of a year that are not part of a longer number (a figure's decimals may follow: "2023.5").
YEAR_NUMBER_RE = re.compile(rf"(?<!\d){YEAR_DIGITS}(?!\d)")
# A year in a document's text: any four digits of a year not inside a longer number or a decimal.
DOCUMENT_YEAR_RE = re.compile(rf"(?<![\d.])(?P<y>{YEAR_DIGITS})(?![\d.])")

EN_QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
ZH_QUARTER_WORDS = {"一": 1, "二": 2, "三": 3, "四": 4}
ORDINAL_QUARTERS = ("first", "second", "third", "fourth")
# A quarter as an English question writes it, for finding and replacing it: Q2 ("q"), 2Q ("q2"),
# "second (fiscal) quarter" ("w").
QUARTER_RE = re.compile(
    r"\bQ(?P<q>[1-4])\b|\b(?P<q2>[1-4])Q\b|\b(?P<w>first|second|third|fourth)\s+(?:fiscal\s+)?quarter\b",
    re.IGNORECASE,
)
# One word that is a period, never a name: FY2023, Q3, H1, '23, 2023Q4 ("FY 2023" with a space too).
PERIOD_TOKEN_RE = re.compile(r"^(?:FY|Q[1-4]|H[12])?\s*'?\d{2,4}(?:Q[1-4])?$", re.IGNORECASE)

# The years and quarters a question asks about (asked_periods).
_ASKED_YEARS = (
    # FY2022, FY 2022, FY22, FY'22, fiscal 2022, fiscal year 2022
    re.compile(rf"\b(?:FY|fiscal(?:\s+year)?)\s*'?(?P<y>{YEAR_DIGITS}|\d{{2}})(?!\d)", re.IGNORECASE),
    # 2022年, 2022财年, 2022年度. Two-digit "22年" is left out: "10年期国债" is a 10-year bond.
    re.compile(rf"(?<![\d.,$])(?P<y>{YEAR_DIGITS})\s*(?:财年|财政年度|年)"),
    re.compile(BARE_YEAR),
)
_ASKED_QUARTERS = (
    # Q2, Q2'23, Q2'2023, Q2 2023, Q2FY24
    re.compile(
        rf"(?<![A-Za-z])Q(?P<q>[1-4])(?:\s*(?:'|FY\s*)?(?P<y>{YEAR_DIGITS}|\d{{2}})(?!\d))?(?![0-9])", re.IGNORECASE
    ),
    # 2Q23, 2Q 2023, 3Q
    re.compile(rf"(?<![\w.])(?P<q>[1-4])Q(?:\s*'?(?P<y>{YEAR_DIGITS}|\d{{2}}))?(?!\w)", re.IGNORECASE),
    re.compile(r"\b(?P<q>first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter", re.IGNORECASE),
    # 第二季度, 第2季度, 二季度, 第三财季
    re.compile(r"第?(?P<q>[一二三四1-4])(?:季度|财季|季)"),
)
_ZH_DIGITS = {"〇": "0", "零": "0", "一": "1", "二": "2", "三": "3", "四": "4", "五": "5",
              "六": "6", "七": "7", "八": "8", "九": "9"}  # fmt: skip


def full_year(digits: str) -> int | None:
    """'2022' -> 2022, '22' -> 2022 (two-digit years in filings are always this century); None outside
    MIN_YEAR..MAX_YEAR."""
    year = int(digits) if len(digits) == 4 else 2000 + int(digits)
    return year if MIN_YEAR <= year <= MAX_YEAR else None


def quarter_number(written: str) -> int:
    """1-4 from "2", "second", "2nd" or "二"."""
    word = written.lower()
    return EN_QUARTER_WORDS.get(word) or ZH_QUARTER_WORDS.get(word) or int(word)


def with_year_digits(text: str) -> str:
    """Chinese numerals in years (二〇二二年) as digits, so the year patterns apply."""
    return re.sub("[〇零一二三四五六七八九]{4}(?=年)", lambda m: "".join(_ZH_DIGITS[c] for c in m.group()), text)


def asked_periods(text: str) -> tuple[list[int], list[int]]:
    """(years, quarters) a question names, in English or Chinese, as written (callers pick the latest).
    A year written with a quarter ("2Q23", "Q2 FY24") is read once, so "2Q23" is no year 23."""
    years: list[int] = []
    quarters: list[int] = []
    spans: list[tuple[int, int]] = []  # text already read as a quarter's year
    for pattern in _ASKED_QUARTERS:
        for m in pattern.finditer(text):
            quarters.append(quarter_number(m.group("q")))
            y = m.groupdict().get("y")
            if y and (full := full_year(y)):
                years.append(full)
                spans.append(m.span())
    for pattern in _ASKED_YEARS:
        for m in pattern.finditer(text):
            if any(start <= m.start("y") < end for start, end in spans):
                continue
            if full := full_year(m.group("y")):
                years.append(full)
                spans.append(m.span())
    return years, quarters


# "As of FY 2021, how much did Verizon expect to pay in 2024?": the report is FY2021's; the later year is a
# horizon that report speaks of. Also "as at", "as of the end of FY2021", "as of May 26, 2023".
_AS_OF_YEAR = re.compile(
    rf"\bas (?:of|at)\s+(?:the end of\s+)?(?:[A-Z][a-z]+\.?\s+\d{{1,2}},?\s*)?"
    rf"(?:FY|fiscal(?:\s+year)?)?\s*'?(?P<y>{YEAR_DIGITS}|(?<=FY)\d{{2}}|(?<=FY )\d{{2}})(?!\d)",
    re.IGNORECASE,
)


def report_year(text: str, years: Sequence[int]) -> int | None:
    """The year of the report a question asks about among `years` (asked_periods): the "as of" year when
    the question names one and only later years beside it, else the latest (a filing for year Y reports
    Y and its comparatives, so the latest report answers)."""
    if not years:
        return None
    anchor = _AS_OF_YEAR.search(text)
    if anchor and (year := full_year(anchor.group("y"))) in years:
        return year
    return max(years)


def years_named(text: str) -> set[int]:
    """Fiscal years written in the text (two-digit FY24 read as 2024)."""
    out: set[int] = set()
    for match in YEAR_RE.finditer(text):
        if (year := full_year(match.group("y") or match.group("y2"))) is not None:
            out.add(year)
    return out


def prefer_period(items: Sequence[T], year: int, text_of: Callable[[T], str]) -> list[T]:
    """items with those whose text names other years but not `year` moved to the end, order kept."""
    about, elsewhere = [], []
    for item in items:
        named = years_named(text_of(item))
        (elsewhere if named and year not in named else about).append(item)
    return about + elsewhere


def within_period(items: Sequence[T], year: int, period_of: Callable[[T], tuple[str, int]]) -> list[T]:
    """items less those from a company's documents whose fiscal year ends before `year` when the items hold
    a document of the same company that reaches `year` (period_of: (company, fiscal year); "" or 0 unknown,
    kept). A filing cannot report a period after its own: beside the company's FY2022 report, its FY2018
    report only offers a small model the wrong year's figures. Without a later one of the same company the
    earlier documents stay: they are what the KB has. The caller leaves out questions about an outlook,
    which earlier documents do state."""
    reaching = {company for company, fiscal in map(period_of, items) if company and fiscal >= year}
    return [item for item in items if not _superseded(period_of(item), year, reaching)]


def _superseded(period: tuple[str, int], year: int, reaching: set[str]) -> bool:
    company, fiscal = period
    return company in reaching and 0 < fiscal < year
