"""What a question is about: its language, and company / year / quarter filters (English or Chinese)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

# CJK ideographs (basic + extension A + compatibility). Kana/Hangul are left out on purpose:
# the system only answers in English or Chinese, and Japanese kana should not count as Chinese.
CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
CJK_RE = re.compile(f"[{CJK_CLASS}]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z]+")

# About two Chinese characters carry what one English word does, so CJK characters are halved
# before comparing; otherwise "What is 腾讯控股's revenue?" would count as Chinese.
_CJK_CHARS_PER_WORD = 2.0
_ZH_SHARE = 0.5


def detect_language(text: str) -> str:
    """Return "zh" when Chinese makes up most of the (word-equivalent) text, else "en"."""
    # Digits and punctuation are ignored: financial text is full of them in both languages.
    sample = text[:20000]  # a long document is decided by its start; keeps this O(1) per doc
    cjk = len(CJK_RE.findall(sample)) / _CJK_CHARS_PER_WORD
    latin = len(_LATIN_WORD_RE.findall(sample))
    if cjk == 0:
        return "en"
    return "zh" if cjk / (cjk + latin) >= _ZH_SHARE else "en"



# ---------------------------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------------------------

# Names people use that are not spelled like the stored company (tickers, short forms, Chinese
# names of the FinanceBench companies). Values are compared after normalisation, so "PG_E" and
# "PG&E" both hit "PGE"; an alias only fires when its target is among the known companies.
DEFAULT_ALIASES: Mapping[str, str] = {
    "JNJ": "JOHNSON_JOHNSON",
    "J&J": "JOHNSON_JOHNSON",
    "JPM": "JPMORGAN",
    "JP MORGAN": "JPMORGAN",
    "JPMORGAN CHASE": "JPMORGAN",
    "AMEX": "AMERICANEXPRESS",
    "PEPSI": "PEPSICO",
    "ACTIVISION": "ACTIVISIONBLIZZARD",
    "MGM": "MGMRESORTS",
    "CVS": "CVSHEALTH",
    "KRAFT": "KRAFTHEINZ",
    "LOCKHEED": "LOCKHEEDMARTIN",
    "ULTA": "ULTABEAUTY",
    "AMERICAN WATER": "AMERICANWATERWORKS",
    "PACIFIC GAS AND ELECTRIC": "PG_E",
    "苹果": "APPLE",
    "微软": "MICROSOFT",
    "亚马逊": "AMAZON",
    "奈飞": "NETFLIX",
    "网飞": "NETFLIX",
    "百事": "PEPSICO",
    "英特尔": "INTEL",
    "耐克": "NIKE",
    "甲骨文": "ORACLE",
    "波音": "BOEING",
    "可口可乐": "COCACOLA",
    "沃尔玛": "WALMART",
    "辉瑞": "PFIZER",
    "强生": "JOHNSON_JOHNSON",
    "摩根大通": "JPMORGAN",
    "美国运通": "AMERICANEXPRESS",
    "百思买": "BESTBUY",
    "联邦快递": "FEDEX",
    "麦当劳": "MCDONALDS",
    "好市多": "COSTCO",
    "开市客": "COSTCO",
    "威瑞森": "VERIZON",
    "奥多比": "ADOBE",
    "康宁": "CORNING",
    "安姆科": "AMCOR",
    "超威半导体": "AMD",
    "超微半导体": "AMD",
    "动视暴雪": "ACTIVISIONBLIZZARD",
    "易贝": "EBAY",
    "通用磨坊": "GENERALMILLS",
    "卡夫亨氏": "KRAFTHEINZ",
    "洛克希德马丁": "LOCKHEEDMARTIN",
    "洛克希德·马丁": "LOCKHEEDMARTIN",
    "美高梅": "MGMRESORTS",
    "赛富时": "SALESFORCE",
    "贝宝": "PAYPAL",
    "美国水务": "AMERICANWATERWORKS",
}

# Legal-form words dropped so "AES Corporation" is found as "AES" in a question.
_LEGAL_SUFFIXES = ("CORPORATION", "CORP", "INCORPORATED", "INC", "COMPANY", "CO", "GROUP", "HOLDINGS", "PLC")
_MAX_SPAN_WORDS = 5  # longest company name in words ("Pacific Gas and Electric" + possessive)


def normalize_company(name: str) -> str:
    """Matching key: letters/digits/CJK only, upper-case ("Best Buy" and "BESTBUY" -> "BESTBUY")."""
    return re.sub(rf"[^0-9A-Za-z{CJK_CLASS}]", "", name).upper()


def _company_keys(known: Iterable[str], aliases: Mapping[str, str]) -> dict[str, str]:
    """Map each matching key (normalised name, suffix-less name, alias) to the known spelling."""
    keys: dict[str, str] = {}
    for company in known:
        key = normalize_company(company)
        if not key:
            continue
        keys.setdefault(key, company)
        words = re.findall(r"[0-9A-Za-z]+", company.upper())
        while len(words) > 1 and words[-1] in _LEGAL_SUFFIXES:
            words.pop()
            keys.setdefault("".join(words), company)
    by_key = dict(keys)
    for alias, target in aliases.items():
        company = by_key.get(normalize_company(target))
        if company is not None:
            keys.setdefault(normalize_company(alias), company)
    return keys


def _find_companies(question: str, keys: Mapping[str, str]) -> list[str]:
    """Known companies named in the question, in order of first mention, without repeats."""
    found: list[tuple[int, str]] = []
    # Latin names: compare runs of 1..N consecutive words so "Best Buy's" and "PG&E" match while
    # "INTEL" inside "intelligence" or "AES" inside "sales" cannot (whole words only).
    words = [(m.start(), m.group().upper()) for m in re.finditer(r"[0-9A-Za-z]+", question)]
    consumed_until = -1
    for i in range(len(words)):
        if i <= consumed_until:
            continue
        for span in range(min(_MAX_SPAN_WORDS, len(words) - i), 0, -1):  # longest first
            key = "".join(w for _, w in words[i : i + span])
            if key in keys:
                found.append((words[i][0], keys[key]))
                consumed_until = i + span - 1
                break
    # Chinese names have no word boundaries: plain substring search.
    for key, company in keys.items():
        if CJK_RE.search(key):
            pos = question.upper().find(key)
            if pos >= 0:
                found.append((pos, company))
    ordered: list[str] = []
    for _, company in sorted(found):
        if company not in ordered:
            ordered.append(company)
    return ordered


_ZH_DIGITS = {"〇": "0", "零": "0", "一": "1", "二": "2", "三": "3", "四": "4", "五": "5",
              "六": "6", "七": "7", "八": "8", "九": "9"}  # fmt: skip
_YEAR_PATTERNS = (
    # FY2022, FY 2022, FY22, FY'22, fiscal 2022, fiscal year 2022
    re.compile(r"\b(?:FY|fiscal(?:\s+year)?)\s*'?(?P<y>(?:19|20)\d{2}|\d{2})(?!\d)", re.IGNORECASE),
    # 2022年, 2022财年, 2022年度. Two-digit "22年" is left out: "10年期国债" is a 10-year bond.
    re.compile(r"(?<![\d.,$])(?P<y>(?:19|20)\d{2})\s*(?:财年|财政年度|年)"),
    # A bare year; not money ($2022), not part of a longer number (2,022 / 2022.5 / 20225).
    re.compile(r"(?<![\d.,$])(?P<y>(?:19|20)\d{2})(?![\d,%]|\.\d)"),
)
_QUARTER_PATTERNS = (
    # Q2, Q2'23, Q2 2023, Q2FY24
    re.compile(r"(?<![A-Za-z])Q(?P<q>[1-4])(?:\s*(?:'|FY\s*)?(?P<y>\d{2})(?!\d))?(?![0-9])", re.IGNORECASE),
    # 2Q23, 2Q 2023, 3Q
    re.compile(r"(?<![\w.])(?P<q>[1-4])Q(?:\s*'?(?P<y>(?:19|20)\d{2}|\d{2}))?(?!\w)", re.IGNORECASE),
    re.compile(r"\b(?P<q>first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter", re.IGNORECASE),
    # 第二季度, 第2季度, 二季度, 第三财季
    re.compile(r"第?(?P<q>[一二三四1-4])(?:季度|财季|季)"),
)
_QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
                  "一": 1, "二": 2, "三": 3, "四": 4}  # fmt: skip
_MIN_YEAR, _MAX_YEAR = 1990, 2100


def _full_year(text: str) -> int | None:
    """'2022' -> 2022, '22' -> 2022 (two-digit years in filings are always this century)."""
    year = int(text) if len(text) == 4 else 2000 + int(text)
    return year if _MIN_YEAR <= year <= _MAX_YEAR else None


def filters_from_question(
    question: str,
    known_companies: Iterable[str],
    *,
    aliases: Mapping[str, str] = DEFAULT_ALIASES,
) -> dict[str, Any]:
    """Company / year / quarter a question is about, as payload-filter values; keys only when found.

    When several years are named ("between FY2021 and FY2022") the latest wins: a filing for
    year Y reports Y and its comparatives, so the latest report answers the question. The same
    holds for quarters. Several different companies give no company filter, since filtering on
    one of them would hide the others.
    """
    # Chinese numerals in years (二〇二二年) become digits so the same patterns apply.
    text = re.sub(
        "[〇零一二三四五六七八九]{4}(?=年)", lambda m: "".join(_ZH_DIGITS[c] for c in m.group()), question
    )
    result: dict[str, Any] = {}

    companies = _find_companies(text, _company_keys(known_companies, aliases))
    if len(companies) == 1:
        result["company"] = companies[0]

    years: list[int] = []
    quarters: list[int] = []
    spans: list[tuple[int, int]] = []  # text already read as a quarter, so "2Q23" is no year 23
    for pattern in _QUARTER_PATTERNS:
        for m in pattern.finditer(text):
            q = m.group("q").lower()
            quarters.append(_QUARTER_WORDS.get(q) or int(q))
            y = m.groupdict().get("y")
            if y and (full := _full_year(y)):
                years.append(full)
                spans.append(m.span())
    for pattern in _YEAR_PATTERNS:
        for m in pattern.finditer(text):
            if any(start <= m.start("y") < end for start, end in spans):
                continue
            if full := _full_year(m.group("y")):
                years.append(full)
                spans.append(m.span())
    if years:
        result["year"] = max(years)
    if quarters:
        result["quarter"] = max(quarters)
    return result

