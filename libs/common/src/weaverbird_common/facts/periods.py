"""Statement column headers read as periods: "Year Ended December 31, 2015 2016 2017", "Three Months Ended
September 30, 2024 2023", "January 28, 2017", "Fiscal 2023", 2023年度, 2023年12月31日, 2024年1-9月."""

from __future__ import annotations

import re

from weaverbird_common.facts.model import Period

_MONTHS = {
    m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
}
_DURATION = re.compile(
    r"(?P<n>three|six|nine|twelve|3|6|9|12|thirteen|twenty-six|thirty-nine|fifty-two|13|26|39|52)[- ]"
    r"(?P<what>months?|weeks?)|(?P<year>years?|fiscal|annual|quarters?)",
    re.IGNORECASE,
)
_WORD_MONTHS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
_WEEKS = {"thirteen": 3, "13": 3, "twenty-six": 6, "26": 6, "thirty-nine": 9, "39": 9, "fifty-two": 12, "52": 12}
_MONTH_DAY = re.compile(
    r"\b(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*(?P<day>\d{1,2})?\b", re.IGNORECASE
)
# What may sit between the years of one header: month-day text, duration words, "and", "as restated".
HEADER_GLUE = re.compile(
    r"^(?:[\s,;:|()]|and\b|as\b|restated\b|fiscal\b|years?\b|ended\b|ending\b|months?\b|weeks?\b|quarters?\b|"
    r"three\b|six\b|nine\b|twelve\b|thirteen\b|twenty-six\b|thirty-nine\b|fifty-two\b|\d{1,2}\b|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?|q[1-4]\b|fy\b|to\b|through\b|"
    r"period\b|of\b|at\b|the\b)*$",
    re.IGNORECASE,
)


def months_from(context: str) -> int | None:
    """The duration the last duration phrase of context names (None when it names none)."""
    found = list(_DURATION.finditer(context))
    if not found:
        return None
    last = found[-1]
    if last.group("year"):
        word = last.group("year").lower()
        return 3 if word.startswith("quarter") else 12
    n = last.group("n").lower()
    if last.group("what").lower().startswith("week"):
        return _WEEKS.get(n)
    return _WORD_MONTHS.get(n)


def durations_in(context: str) -> list[int]:
    """Months named by each duration phrase of context, in order ("Three Months Ended ..., Nine Months
    Ended ..." -> [3, 9])."""
    out = []
    for found in _DURATION.finditer(context):
        months = months_from(found.group(0))
        if months is not None:
            out.append(months)
    return out


def month_day(context: str) -> tuple[int, int] | None:
    found = list(_MONTH_DAY.finditer(context))
    if not found:
        return None
    last = found[-1]
    return _MONTHS[last.group("mon")[:3].lower()], int(last.group("day") or 0)


def period_for(year: int, context: str, statement: str) -> Period:
    """The period a header year names, read with the header text before it (its duration and date)."""
    months = months_from(context)
    if statement == "balance":
        months = 0
    elif months is None:
        months = 12
    md = month_day(context)
    end = f"{year:04d}-{md[0]:02d}-{md[1]:02d}" if md and md[1] else ""
    quarter = 0
    if months == 3 and md:
        quarter = (md[0] - 1) // 3 + 1
    return Period(fiscal_year=year, months=months, quarter=quarter, end=end)


# Chinese column headers: 2023年度 / 2023年 / 2023年12月31日 / 2024年1-9月 / 2024年第三季度.
ZH_PERIOD = re.compile(
    r"(?P<year>(?:19|20)\d{2})\s*年\s*(?:(?P<from>\d{1,2})\s*[-–至]\s*(?P<to>\d{1,2})\s*月|"
    r"(?P<mon>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*日|第?(?P<q>[一二三四1-4])季度|(?P<du>度))?"
)
_ZH_Q = {"一": 1, "二": 2, "三": 3, "四": 4}


def zh_period(match: re.Match[str], statement: str) -> Period:
    year = int(match.group("year"))
    if match.group("mon"):
        end = f"{year:04d}-{int(match.group('mon')):02d}-{int(match.group('day')):02d}"
        months = 0 if statement == "balance" else 12
        return Period(fiscal_year=year, months=months, end=end)
    if match.group("to"):
        months = int(match.group("to")) - int(match.group("from") or 1) + 1
        quarter = int(match.group("to")) // 3 if months == 3 else 0
        return Period(fiscal_year=year, months=months, quarter=quarter)
    if match.group("q"):
        q = match.group("q")
        return Period(fiscal_year=year, months=3, quarter=_ZH_Q.get(q, int(q) if q.isdigit() else 0))
    return Period(fiscal_year=year, months=0 if statement == "balance" else 12)
