"""What a question is about: its language, and company / year / quarter filters (English or Chinese)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from weaverbird_common.periods import asked_periods, report_year, with_year_digits

# CJK ideographs (basic + extension A + compatibility). Kana/Hangul are left out on purpose:
# the system only answers in English or Chinese, and Japanese kana should not count as Chinese.
CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
CJK_RE = re.compile(f"[{CJK_CLASS}]")
CJK_RUN_RE = re.compile(f"[{CJK_CLASS}]+")
_LATIN_WORD_RE = re.compile(r"[A-Za-z]+")

# About two Chinese characters carry what one English word does, so CJK characters are halved
# before comparing; otherwise "What is 腾讯控股's revenue?" would count as Chinese.
CJK_CHARS_PER_WORD = 2.0
_ZH_SHARE = 0.5


def detect_language(text: str) -> str:
    """Return "zh" when Chinese makes up most of the (word-equivalent) text, else "en"."""
    # Digits and punctuation are ignored: financial text is full of them in both languages.
    sample = text[:20000]  # a long document is decided by its start; keeps this O(1) per doc
    cjk = len(CJK_RE.findall(sample)) / CJK_CHARS_PER_WORD
    latin = len(_LATIN_WORD_RE.findall(sample))
    if cjk == 0:
        return "en"
    return "zh" if cjk / (cjk + latin) >= _ZH_SHARE else "en"


# Words of a question's framing, not of what it asks: a request ("请问", "please") or a pointer to where
# the asker read something ("根据新闻资讯", "according to the news", "文中提到"). No passage needs to hold
# them to answer the question, so term coverage leaves them out, and none is a Chinese proper name. Only
# words that are never a line item or an event: "公告" stays a name filter only, "提供" (提供担保) and
# "reported" (reported revenue) are content.
FRAMING_WORDS_ZH = frozenset(
    {"请问", "请", "新闻资讯", "新闻", "资讯", "报道", "研报", "财联社", "资料"}
    | {"文中", "上文", "上述", "提到", "提及", "所述"}
)
FRAMING_WORDS_EN = frozenset({"according", "please", "kindly", "mentioned"})


# ---------------------------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------------------------

# Legal-form words dropped so "AES Corporation" is found as "AES" and "3M Company" as "3M".
_LEGAL_SUFFIXES = frozenset(
    {"CORPORATION", "CORP", "INCORPORATED", "INC", "COMPANY", "CO", "GROUP", "HOLDINGS", "HOLDING", "PLC",
     "LTD", "LIMITED", "LLC", "LP", "NV", "SA", "AG", "SE"}
)  # fmt: skip
_ZH_LEGAL_SUFFIX_RE = re.compile(r"(?:集团)?(?:股份有限公司|有限责任公司|有限公司|股份公司)$")
_MAX_SPAN_WORDS = 6  # longest company name in words ("American Water Works Company, Inc." + possessive)
# Ticker-shaped aliases (MMM, JPM, BRK.B) only count when the question writes them in upper case
# (or with capitals inside, "JnJ"), so the English word "all" or "All" never matches a ticker ALL;
# one-letter tickers never count.
_TICKER_RE = re.compile(r"[A-Z]{1,5}(?:[.\-][A-Z]{1,2})?")
_MIN_CODE_DIGITS = 5  # stock codes (600519, 00700) and not "2023"-like numbers
# How a matching key must be written in the question, most lenient first.
_ANY_CASE, _CAPITALISED, _UPPER_CASE = 0, 1, 2
_NO_ALIASES: Mapping[str, str] = MappingProxyType({})


def short_company_name(name: str) -> str:
    """The name people use: "The Coca-Cola Company" -> "Coca-Cola", "JPMorgan Chase & Co." ->
    "JPMorgan Chase", "贵州茅台酒股份有限公司" -> "贵州茅台酒"; words are kept as written."""
    name = " ".join(name.split()).strip(" ,.;:")
    cjk = _ZH_LEGAL_SUFFIX_RE.sub("", name)
    if cjk != name and len(cjk) >= 2:
        return cjk
    name = re.sub(r"^the\s+", "", name, flags=re.IGNORECASE)
    name = re.sub(r"\.com\b", "", name, flags=re.IGNORECASE)  # "Amazon.com, Inc." is "Amazon"
    words = re.findall(r"[^\s,_]+", name)
    # "&" goes with the suffix after it: "JPMorgan Chase & Co." -> "JPMorgan Chase".
    while len(words) > 1 and (words[-1].strip(".&").upper() in _LEGAL_SUFFIXES or words[-1] == "&"):
        words.pop()
    return " ".join(words).strip(" ,.") or name


def alias_map(catalog_companies: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Alias -> company from the KB's catalog ({company: [aliases its documents use]}).

    An alias claimed by two companies is left out: a filter on either would hide the other.
    """
    owners: dict[str, set[str]] = {}
    for company, aliases in catalog_companies.items():
        for alias in aliases:
            if alias.strip():
                owners.setdefault(alias.strip(), set()).add(company)
    return {alias: next(iter(cos)) for alias, cos in owners.items() if len(cos) == 1}


def normalize_company(name: str) -> str:
    """Matching key: letters/digits/CJK only, upper-case ("Best Buy" and "BESTBUY" -> "BESTBUY")."""
    return re.sub(rf"[^0-9A-Za-z{CJK_CLASS}]", "", name).upper()


def _alias_keys(alias: str) -> list[tuple[str, int]]:
    """Matching keys of one catalog alias with how each must be written in a question."""
    alias = alias.strip()
    if _TICKER_RE.fullmatch(alias):
        key = normalize_company(alias)
        return [(key, _UPPER_CASE)] if len(key) >= 2 else []
    out: list[tuple[str, int]] = []
    for name in {alias, short_company_name(alias)}:
        key = normalize_company(name)
        if not key or (key.isdigit() and len(key) < _MIN_CODE_DIGITS) or (CJK_RE.search(key) and len(key) < 2):
            continue
        # A one-word name ("Square", "Block") must be capitalised: "square feet" names no company.
        out.append((key, _CAPITALISED if re.fullmatch(r"[A-Za-z]+", name) else _ANY_CASE))
    return out


def _company_keys(known: Iterable[str], aliases: Mapping[str, str]) -> dict[str, tuple[str, int]]:
    """Map each matching key (normalised name, short name, alias) to (known spelling, case rule).

    Known names match in any case and win over aliases; an alias key shared by two companies is
    dropped, and an alias only fires when its company is among the known ones.
    """
    keys: dict[str, tuple[str, int]] = {}
    by_key: dict[str, str] = {}
    for company in known:
        for name in (company, short_company_name(company)):
            if key := normalize_company(name):
                keys.setdefault(key, (company, _ANY_CASE))
        by_key.setdefault(normalize_company(company), company)
    from_aliases: dict[str, tuple[str, int]] = {}
    clashes: set[str] = set()
    for alias, target in aliases.items():
        company = by_key.get(normalize_company(target))
        if company is None:
            continue
        for key, rule in _alias_keys(alias):
            if key in keys:
                continue
            seen = from_aliases.get(key)
            if seen is not None and seen[0] != company:
                clashes.add(key)
            elif seen is None or rule < seen[1]:  # the most lenient spelling rule of one company wins
                from_aliases[key] = (company, rule)
    keys.update({k: v for k, v in from_aliases.items() if k not in clashes})
    return keys


def _written_as(words: Sequence[str], rule: int) -> bool:
    if rule == _UPPER_CASE:  # "MMM", or capitals inside the word ("JnJ"): never a plain English word
        return all(w.isupper() or w.isdigit() or any(c.isupper() for c in w[1:]) for w in words)
    if rule == _CAPITALISED:
        return words[0][:1].isupper() or words[0][:1].isdigit()
    return True


def _find_companies(question: str, keys: Mapping[str, tuple[str, int]]) -> list[str]:
    """Known companies named in the question, in order of first mention, without repeats."""
    found: list[tuple[int, str]] = []
    # Latin names: compare runs of 1..N consecutive words so "Best Buy's" and "PG&E" match while
    # "INTEL" inside "intelligence" or "AES" inside "sales" cannot (whole words only).
    words = [(m.start(), m.group()) for m in re.finditer(r"[0-9A-Za-z]+", question)]
    consumed_until = -1
    for i in range(len(words)):
        if i <= consumed_until:
            continue
        for span in range(min(_MAX_SPAN_WORDS, len(words) - i), 0, -1):  # longest first
            raw = [w for _, w in words[i : i + span]]
            hit = keys.get("".join(raw).upper())
            if hit is not None and _written_as(raw, hit[1]):
                found.append((words[i][0], hit[0]))
                consumed_until = i + span - 1
                break
    # Chinese names have no word boundaries: plain substring search.
    for key, (company, _) in keys.items():
        if CJK_RE.search(key):
            pos = question.upper().find(key)
            if pos >= 0:
                found.append((pos, company))
    ordered: list[str] = []
    for _, company in sorted(found):
        if company not in ordered:
            ordered.append(company)
    return ordered


def filters_from_question(
    question: str,
    known_companies: Iterable[str],
    *,
    aliases: Mapping[str, str] = _NO_ALIASES,
) -> dict[str, Any]:
    """Company / year / quarter a question is about, as payload-filter values; keys only when found.

    `aliases` (alias -> company, see alias_map) are the other names the KB's documents use for
    its companies: registrant names, tickers, Chinese short names and stock codes.

    When several years are named ("between FY2021 and FY2022") the latest wins: a filing for
    year Y reports Y and its comparatives, so the latest report answers the question; a question
    "as of FY2021" about a later year's expectation asks FY2021's report (periods.report_year). The
    same holds for quarters. Several different companies give no company filter, since filtering on
    one of them would hide the others.
    """
    # Chinese numerals in years (二〇二二年) become digits so the same patterns apply.
    text = with_year_digits(question)
    result: dict[str, Any] = {}

    companies = _find_companies(text, _company_keys(known_companies, aliases))
    if len(companies) == 1:
        result["company"] = companies[0]

    years, quarters = asked_periods(text)
    if years:
        result["year"] = report_year(text, years)
    if quarters:
        result["quarter"] = max(quarters)
    return result


PERIOD_KEYS = ("year", "quarter")


def search_filters(found: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a question's filters (filters_from_question) that may narrow a search.

    A period names a document only together with its company: "2023年三季度全国铁路发送旅客人次" or
    "盛视科技 ... 2023年6月26日" with no KB company in it would otherwise search only the documents
    dated 2023 (another company's filings) and hide every undated one (news, web pages), which is
    what a mixed English/Chinese KB did. Without a company the period still ranks passages
    (weaverbird_common.periods) and the coverage gate still reads it.
    """
    if "company" in found:
        return dict(found)
    return {k: v for k, v in found.items() if k not in PERIOD_KEYS}
