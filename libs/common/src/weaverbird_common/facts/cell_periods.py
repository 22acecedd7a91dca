"""A period named in one table cell: "FY2024", "Q3 2024", "2024", "Fiscal 2023", "9M 2024", 第三季度,
全年, 2024年度 (the year defaults to the document's when the cell names none)."""

from __future__ import annotations

import re

from weaverbird_common.facts import periods
from weaverbird_common.facts.model import Period

_Q = re.compile(r"\b(?:Q([1-4])\s*(?:FY\s*)?((?:19|20)\d{2})|((?:19|20)\d{2})\s*Q([1-4]))\b", re.IGNORECASE)
_HALF = re.compile(r"\b(?:(9M|6M|H1|1H|YTD|nine months|six months)\s*((?:19|20)\d{2}))\b", re.IGNORECASE)
_YEAR = re.compile(r"(?:\bFY\s*|\bfiscal\s+(?:year\s+)?|\b)((?:19|20)\d{2})\b", re.IGNORECASE)
_ZH_QUARTER = re.compile(r"第?([一二三四1-4])季度")
_ZH_FULL = re.compile(r"全年|年度合计|全年合计")
_ZH_Q = {"一": 1, "二": 2, "三": 3, "四": 4}
# A column that compares periods ("% Change 2018 to 2019", "2019 vs 2018", 同比增减) holds no period's value.
_COMPARISON = re.compile(
    r"\bchange\b|\bvariation\b|\bvs\.?(?=\s|$)|\bversus\b|\bcompared (?:to|with)\b|增减|变动|同比", re.IGNORECASE
)


def period_in_cell(text: str, statement: str, default_year: int | None) -> Period | None:
    """The period a header or row cell names, or None (a "Change" or "Share of total" column)."""
    if _COMPARISON.search(text):
        return None
    zh = periods.ZH_PERIOD.search(text)
    if zh:
        return periods.zh_period(zh, statement)
    m = _Q.search(text)
    if m:
        q = int(m.group(1) or m.group(4))
        return Period(fiscal_year=int(m.group(2) or m.group(3)), months=3, quarter=q)
    m = _HALF.search(text)
    if m:
        months = 9 if m.group(1).lower() in ("9m", "nine months") else 6
        return Period(fiscal_year=int(m.group(2)), months=months)
    m = _YEAR.search(text)
    if m:
        return periods.period_for(int(m.group(1)), text, statement)
    if default_year:
        zq = _ZH_QUARTER.search(text)
        if zq:
            q = zq.group(1)
            return Period(fiscal_year=default_year, months=3, quarter=_ZH_Q.get(q) or int(q))
        if _ZH_FULL.search(text):
            return Period(fiscal_year=default_year, months=0 if statement == "balance" else 12)
    return None


def strip_period(text: str) -> str:
    """The cell's words without its period and unit ("FY2024 revenue (USD million)" -> "revenue")."""
    out = periods.ZH_PERIOD.sub(" ", text)
    out = _Q.sub(" ", out)
    out = _HALF.sub(" ", out)
    out = _YEAR.sub(" ", out)
    out = re.sub(r"[（(][^)）]*[)）]", " ", out)
    return " ".join(out.split())
