"""What a document is about, read once at ingest: company and the other names it goes by, fiscal
year/quarter, document type, language and date.

Sources, strongest first: explicit metadata (Markdown front matter, request fields), the file name
(FinanceBench-style AMCOR_2023Q2_10Q, 贵州茅台_2023年年度报告), then the text's first ~3000
characters: an SEC cover page (registrant, trading symbols, period, form), an earnings release's
opening lines, a Chinese report's cover (证券简称 / 证券代码); over the whole text, a short name clipped
from the company's name that the document keeps using ("Amex"). Stored with every chunk, the result
is the KB's own catalog: questions are matched against the names its documents use, with no
hand-kept company list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta

from weaverbird_common.dates import latest_date
from weaverbird_common.docs.metadata import canonical_company, metadata_from_filename
from weaverbird_common.periods import DOCUMENT_YEAR_RE, EN_QUARTER_WORDS, YEAR_DIGITS, ZH_QUARTER_WORDS
from weaverbird_common.questions import CJK_CLASS, CJK_RE, detect_language, normalize_company, short_company_name

HEAD_CHARS = 3000  # about two pages: covers and release headlines sit there; keeps ingest O(1) per doc
_MAX_ALIASES = 12

# Known kinds; file-name words outside this list ("final", "v2") are not document types.
DOC_TYPES = frozenset(
    {"10K", "10Q", "8K", "20F", "6K", "40F", "S1", "DEF14A", "EARNINGS",
     "ANNUAL_REPORT", "INTERIM_REPORT", "QUARTERLY_REPORT"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class DocumentEntities:
    """Catalog fields of one document; empty/None where no source tells."""

    company: str = ""  # upper-case canonical name, as canonical_company makes it ("JOHNSON_JOHNSON")
    aliases: tuple[str, ...] = ()  # other names: registrant, short name, tickers, 简称, stock code
    year: int | None = None
    quarter: int | None = None
    doc_type: str = ""
    language: str = "en"
    # The latest full date its first pages state (ISO), "" when none: a release's dateline, a cover's
    # period end or report date. Stored as the document's date when nothing better gives one.
    dated: str = ""


@dataclass(slots=True)
class _TextFacts:
    names: list[str] = field(default_factory=list)  # company names as written, primary first
    tickers: list[str] = field(default_factory=list)
    year: int | None = None
    quarter: int | None = None
    doc_type: str = ""


def document_entities(text: str, filename: str = "", metadata: Mapping[str, object] | None = None) -> DocumentEntities:
    """Entities of a document from its metadata, file name, first pages and the names its whole text uses
    (see module doc)."""
    meta = metadata or {}
    head = _compact(text[: 4 * HEAD_CHARS])[:HEAD_CHARS]
    found = _from_text(head)
    name = metadata_from_filename(filename) if filename else None

    explicit = str(meta.get("company") or "").strip()
    if "company" in meta and not explicit:  # front matter leaving "company:" empty: about no company
        found.names, found.tickers = [], []
    company = (
        canonical_company(explicit)
        if explicit
        else (name.company if name else "") or (_canonical(found.names[0]) if found.names else "")
    )
    # Year and quarter travel together: a quarter is only taken from a source that agrees on the year.
    periods = [
        (_int(meta.get("year")), _int(meta.get("quarter"))),
        (name.year, name.quarter) if name else (None, None),
        (found.year, found.quarter),
    ]
    year = next((y for y, _ in periods if y), None)
    quarter = next((q for y, q in periods if q and y in (year, None)), None) if year else None
    doc_type = (
        _doc_type(str(meta.get("doc_type") or ""), strict=False)
        or (_doc_type(name.doc_type) if name else "")
        or _zh_doc_type(filename)
        or found.doc_type
    )
    written = [*_listed(meta.get("aliases")), *_listed(meta.get("tickers"))]
    for raw in found.names:
        written += [raw, short_company_name(raw)]
    written += _translations(head, [explicit, *found.names])
    written += clipped_names(text, [explicit, *found.names])
    written += found.tickers
    language = str(meta.get("language") or "") or detect_language(text)
    # A date after today is no document's date (a note's maturity, a meeting to come).
    dated = latest_date(head, not_after=date.today())
    return DocumentEntities(
        company, _dedupe(written, company), year, quarter, doc_type, language, dated.isoformat() if dated else ""
    )


# ---------------------------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------------------------

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_MONTH_NUMBER = {m.lower(): i + 1 for i, m in enumerate(_MONTHS.split("|"))}
_DATE = rf"(?P<month>{_MONTHS})\s*(?P<day>\d{{1,2}})\s*,?\s*(?P<year>{YEAR_DIGITS})"

# An SEC filing's cover: the Commission's name in capitals, its zip code, or the registrant line.
_COVER_RE = re.compile(r"SECURITIES AND EXCHANGE COMMISSION|\b20549\b|(?i:exact name of (?:the )?registrant)")
_FORM_RE = re.compile(r"\bFORM\s*(10-?K|10-?Q|8-?K|20-?F|6-?K|40-?F)(?!\d)", re.IGNORECASE)
# "For the quarterly period ended Commission file March 31, 2021": two-column covers interleave.
_PERIOD_RE = re.compile(rf"for the (?P<kind>fiscal year|year|quarterly period|quarter)\s+ended\D{{0,40}}?{_DATE}", re.I)
_REPORT_DATE_RE = re.compile(rf"date of report\s*\(date of earliest event reported\)\s*:?\s*{_DATE}", re.I)
_EXACT_NAME_RE = re.compile(r"\(?\s*exact name of (?:the )?regis", re.IGNORECASE)  # "Registran t" happens
_FILE_NUMBER_RE = re.compile(r"commission\s+file\s+(?:number|no\.?)", re.IGNORECASE)
_UPPER_NAME_RE = re.compile(r"[A-Z0-9][A-Z0-9&.,'’ -]{1,60}")
_LEGAL_WORD_RE = re.compile(r"\b(?:COMPANY|CORPORATION|CORP|INC|INCORPORATED|PLC|LTD|LIMITED|CO)\b\.?")
_NOT_A_NAME_RE = re.compile(r"commission|file number|identification|jurisdiction|\d{2,}-\d|^\(|^\d+$", re.I)
_EXCHANGE = r"(?i:(?:the\s+)?(?:new york stock exchange|nyse|nasdaq|chicago stock exchange))"
_TICKER = r"[A-Z]{1,5}(?:\.[A-Z])?"
# A ticker is a capitalised word right before an exchange in the "Trading Symbol(s)" table.
# Preferred-share lines ("JPM PR D") and NYSE Arca notes are not the company's ticker.
_TABLE_TICKER_RE = re.compile(rf"(?<![\w$.%/&'’-])(?<!\bPR )({_TICKER})(?=\s+{_EXCHANGE})(?!\s+NYSE Arca)")
_NOT_TICKERS = frozenset({"LLC", "INC", "THE", "SHARE", "STOCK", "VALUE", "NOTES", "DUE", "PAR", "NONE", "PER", "ACT"})
# "Johnson & Johnson (NYSE: JNJ)", "Amcor plc (NYSE: AMCR; ASX: AMC)".
_LISTING_RE = re.compile(rf"\((?:NYSE|NASDAQ|Nasdaq)[A-Za-z ]*:\s*({_TICKER})\b[^)]{{0,40}}\)")
_RELEASE_RE = re.compile(r"\b(?:reports?|reported|announces?|announced|posts?)\b[^.]{0,80}?\bresults\b", re.I)
_HEADLINE_RE = re.compile(r"^(?P<name>[A-Z][\w&.,'’ -]{1,60}?)\s+(?:reports|announces|posts)\b", re.I)
_Q = "|".join(EN_QUARTER_WORDS)
_RELEASE_PERIOD_RES = (
    re.compile(rf"(?P<y>{YEAR_DIGITS})\s+(?P<q>{_Q})[- ]quarter", re.I),  # "2022 Fourth-Quarter"
    # "First-Quarter 2023", "Fourth Quarter Fiscal 2022", "fourth quarter and full year 2022"
    re.compile(rf"(?P<q>{_Q})[- ]quarter(?:\s+(?:of\s+)?(?:fiscal\s+(?:year\s+)?)?(?P<y>{YEAR_DIGITS}))?", re.I),
    re.compile(rf"\bQ(?P<q>[1-4])\s*(?:FY\s*)?'?(?P<y>{YEAR_DIGITS})?\b"),
)
_FISCAL_YEAR_RE = re.compile(rf"\b(?:fiscal|full[- ]year)\s+(?:year\s+)?(?P<y>{YEAR_DIGITS})\b", re.I)
_YEAR_RE = DOCUMENT_YEAR_RE

_ZH_REPORT_RE = re.compile(
    rf"(?P<y>{YEAR_DIGITS})\s*年\s*(?:(?P<half>半年度|中期)|第?(?P<q>[一二三四1-4])季度|(?P<annual>年?度))报告"
)
_ZH_EARNINGS_RE = re.compile(r"业绩快报|业绩预告|业绩公告")
_ZH_SHORT_RE = re.compile(rf"(?:证券|股票|公司|A股|股份)简称\s*[:：]\s*(?P<n>[*A-Za-z0-9{CJK_CLASS}]{{2,12}})")
_ZH_CODE_RE = re.compile(r"(?:证券|股票|公司|A股|股份)代[码號号]\s*[:：]\s*(?P<c>\d{4,6})")
_ZH_FULL_RE = re.compile(rf"(?P<n>[{CJK_CLASS}（）()]{{2,30}}?(?:股份有限公司|有限责任公司|有限公司))")
_ZH_QUARTER = ZH_QUARTER_WORDS


def _compact(text: str) -> str:
    """One line per text line, inner whitespace collapsed, blank and rule-only lines dropped."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line.strip("_-—=* "))


def _from_text(head: str) -> _TextFacts:
    facts = _TextFacts()
    lines = head.split("\n")
    flat = " ".join(lines)
    if _COVER_RE.search(flat):
        _read_sec_cover(lines, flat, facts)
    else:
        _read_release(lines, flat, facts)
    _read_chinese(flat, facts)
    return facts


def _read_sec_cover(lines: list[str], flat: str, facts: _TextFacts) -> None:
    if form := _FORM_RE.search(flat):
        facts.doc_type = form.group(1).replace("-", "").upper()
    if period := _PERIOD_RE.search(flat):
        end = _period_end(period)
        facts.year = end.year
        if "quarter" in period.group("kind").lower():
            facts.quarter = (end.month - 1) // 3 + 1  # calendar quarter; fiscal quarters need the file name
    elif report := _REPORT_DATE_RE.search(flat):
        facts.year = int(report.group("year"))
    for m in _EXACT_NAME_RE.finditer(flat):
        # The name runs back to the previous field: a file number, a date, ")" or a rule.
        before = re.split(rf"{_DATE}|\d+-\d+|\)|_{{3,}}|:", flat[max(0, m.start() - 200) : m.start()], flags=re.I)[-1]
        candidate = _join_split_capitals(re.sub(r"^[\s_.,-]+|[\s_,-]+$", "", re.sub(r"\s+\.", ".", before)))
        if _is_name(candidate) and candidate not in facts.names:
            facts.names.append(candidate)
    if not facts.names:  # covers without the "(Exact name ...)" caption, e.g. 3M's
        for i, line in enumerate(lines):
            if _FILE_NUMBER_RE.search(line):
                after = [x for x in lines[i + 1 : i + 4] if not re.fullmatch(r"[\d\s-]+", x)][:1]
                if after and _UPPER_NAME_RE.fullmatch(after[0]) and _LEGAL_WORD_RE.search(after[0]):
                    facts.names.append(after[0].strip(" ,"))
                break
    if table := re.search(r"trading\s*symbols?", flat, re.IGNORECASE):
        start = re.search(r"section\s*12\s*\(\s*b\s*\)", flat, re.IGNORECASE)
        begin = start.start() if start and start.start() < table.start() else max(0, table.start() - 400)
        stop = re.compile(r"section\s*12\s*\(\s*g\s*\)|indicate by check mark", re.IGNORECASE).search(flat, table.end())
        region = flat[begin : stop.start() if stop else table.end() + 800]
        facts.tickers += [t for t in _TABLE_TICKER_RE.findall(region) if t not in _NOT_TICKERS]
    facts.tickers += _LISTING_RE.findall(flat)


def _read_release(lines: list[str], flat: str, facts: _TextFacts) -> None:
    """Earnings releases: "<Company> (NYSE: TICK) today reported ... results", a headline naming it."""
    opening = flat[:1500]
    listing = _LISTING_RE.search(opening)
    if listing:
        facts.tickers.append(listing.group(1))
        if name := _name_before(opening[: listing.start()]):
            facts.names.append(name)
    for i, line in enumerate(lines[:6]):
        m = _HEADLINE_RE.match(line)
        # A headline names the company and the results ("PepsiCo Reports First-Quarter 2023 Results"),
        # possibly over two lines; "A hypothetical manufacturer reports the following" is no headline.
        if m and _RELEASE_RE.search(" ".join(lines[i : i + 2])) and not re.match(r"an?\s", m.group("name"), re.I):
            name = m.group("name").strip(" ,")
            if _is_title(name) and not (_YEAR_RE.search(name) or re.search(rf"\b(?:{_Q})\b", name, re.I)):
                if normalize_company(name) not in {normalize_company(n) for n in facts.names}:
                    facts.names.append(name)
            break
    if not (facts.names and _RELEASE_RE.search(opening)):
        return
    facts.doc_type = "EARNINGS"
    head = opening[:800]
    hits = [m for pattern in _RELEASE_PERIOD_RES if (m := pattern.search(head))]
    if hits:
        first = min(hits, key=lambda m: m.start())
        q = first.group("q").lower()
        facts.quarter = EN_QUARTER_WORDS.get(q) or int(q)
        facts.year = int(first.group("y")) if first.group("y") else None
    if facts.year is None and (m := _FISCAL_YEAR_RE.search(head) or _YEAR_RE.search(head[:400])):
        facts.year = int(m.group("y"))


def _read_chinese(flat: str, facts: _TextFacts) -> None:
    """Chinese report covers: "贵州茅台酒股份有限公司 2023年年度报告", "证券简称：贵州茅台 证券代码：600519"."""
    short = _ZH_SHORT_RE.search(flat)
    full = _ZH_FULL_RE.search(flat[:1000])
    if short:
        facts.names.insert(0, short.group("n"))  # the short name is how people write the company
    if full and full.group("n") not in facts.names:
        facts.names.append(full.group("n"))
    if code := _ZH_CODE_RE.search(flat):
        facts.tickers.append(code.group("c"))
    if report := _ZH_REPORT_RE.search(flat[:1000]):
        facts.doc_type = facts.doc_type or _zh_doc_type(report.group())
        facts.year = facts.year or int(report.group("y"))
        if q := report.group("q"):
            facts.quarter = facts.quarter or _ZH_QUARTER.get(q) or int(q)
    elif _ZH_EARNINGS_RE.search(flat[:500]):
        facts.doc_type = facts.doc_type or "EARNINGS"


# A clipped name is used throughout a document, not in passing: "Amex" 79 times in American Express's 10-K.
_CLIPPED_MIN_USES = 5
_CAPITALISED_WORD = re.compile(r"\b[A-Z][a-zA-Z]{2,9}\b")


def clipped_names(text: str, names: list[str]) -> list[str]:
    """Short names clipped from a company name's first two words that the document itself uses often:
    "Amex" (AMerican EXpress), "FedEx" (FEDeral EXpress). A question may name the company so; the cover
    never does. On the 84 FinanceBench filings this finds "Amex" for American Express and nothing else."""
    pairs = []
    for name in names:
        words = re.findall(r"[A-Za-z]+", short_company_name(name)) if name else []
        if len(words) >= 2:
            pairs.append((words[0].lower(), words[1].lower()))
    if not pairs:
        return []
    uses: dict[str, int] = {}
    for word in _CAPITALISED_WORD.findall(text):
        uses[word] = uses.get(word, 0) + 1
    return [w for w, n in uses.items() if n >= _CLIPPED_MIN_USES and any(_clipped(w.lower(), p) for p in pairs)]


def _clipped(word: str, pair: tuple[str, str]) -> bool:
    """`word` is a prefix of the first name word (two letters or more) followed by a shorter prefix of the
    second (two letters or more): the way clipped compounds form, never either word whole."""
    first, second = pair
    if word in (first, second):
        return False
    for cut in range(2, len(first) + 1):
        if not word.startswith(first[:cut]):
            break
        rest = word[cut:]
        if 2 <= len(rest) < len(second) and second.startswith(rest):
            return True
    return False


def _translations(head: str, names: list[str]) -> list[str]:
    """English names given beside Chinese ones: "青松新能源（Qingsong New Energy）"."""
    out: list[str] = []
    for name in (n for n in names if CJK_RE.search(n)):
        pattern = rf"{re.escape(name)}\s*[（(]\s*([A-Z][A-Za-z0-9 .,&'’-]{{1,60}}?)\s*[)）]"
        out += [m.group(1) for m in re.finditer(pattern, head)][:1]
    return out


def _zh_doc_type(text: str) -> str:
    if "半年度报告" in text or "中期报告" in text:
        return "INTERIM_REPORT"
    if "季度报告" in text:
        return "QUARTERLY_REPORT"
    if "年度报告" in text or "年报" in text:
        return "ANNUAL_REPORT"
    return ""


def _period_end(m: re.Match[str]) -> date:
    """Period end, moved back a week so a 52/53-week year ending "January 1, 2023" counts as 2022."""
    day = min(int(m.group("day")), 28)  # the day only matters near month ends; no invalid dates
    return date(int(m.group("year")), _MONTH_NUMBER[m.group("month").lower()], day) - timedelta(days=7)


def _name_before(text: str) -> str:
    """The capitalised words just before "(NYSE: X)": "... 2023 – Johnson & Johnson" -> "Johnson & Johnson"."""
    words: list[str] = []
    for word in reversed(text.split()[-8:]):
        if not re.fullmatch(r"[A-Z0-9][\w.&'’,-]*|&|and|of", word) or "--" in word:
            break
        words.insert(0, word)
    while words and words[0] in ("&", "and", "of"):
        words.pop(0)
    name = " ".join(words[-6:]).strip(" ,")
    return name if _is_name(name) else ""


def _join_split_capitals(name: str) -> str:
    """Undo small-caps extraction: "MGM R ESORTS I NTERNATIONAL" -> "MGM RESORTS INTERNATIONAL"."""
    words = name.split()
    out: list[str] = []
    for word in words:
        if (
            out
            and len(out[-1]) == 1
            and out[-1].isupper()
            and word.isupper()
            and len(word) >= 2
            and (len(out) == 1 or len(out[-2]) >= 2)
        ):
            out[-1] += word
        else:
            out.append(word)
    return " ".join(out)


def _is_title(name: str) -> bool:
    """Capitalised words, as a company is named ("Ulta Beauty"), not prose ("Companies file")."""
    return all(re.match(r"[A-Z0-9&]", w) or w in ("and", "of", "de") for w in name.split())


def _is_name(text: str) -> bool:
    return 2 <= len(text) <= 80 and bool(re.search(r"[A-Za-z]{2}", text)) and not _NOT_A_NAME_RE.search(text)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _canonical(name: str) -> str:
    """Payload spelling of a name read from text: "The Coca-Cola Company" -> "COCA_COLA"."""
    cleaned = re.sub(rf"[^0-9A-Za-z{CJK_CLASS}]+", " ", short_company_name(name))
    return canonical_company(cleaned)


def _doc_type(raw: str, strict: bool = True) -> str:
    """Type key: "10-K" -> "10K", "annual report" -> "ANNUAL_REPORT"; unknown kinds only when given explicitly."""
    value = re.sub(r"[^0-9A-Z]+", "_", re.sub(r"(?<=\d)-(?=[A-Za-z])", "", raw.strip()).upper()).strip("_")
    return value if value in DOC_TYPES or (value and not strict) else ""


def _int(value: object) -> int | None:
    try:
        return int(value) if value not in (None, "") else None  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def _listed(value: object) -> list[str]:
    """Front-matter aliases: a YAML list or one comma-separated string."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return []


def _dedupe(names: list[str], company: str) -> tuple[str, ...]:
    """Distinct aliases by matching key, the company's own key left out, first spelling kept."""
    seen = {normalize_company(company)}
    out: list[str] = []
    for name in names:
        name = " ".join(name.split()).strip(" ,")
        key = normalize_company(name)
        if key and key not in seen:
            seen.add(key)
            out.append(name)
    return tuple(out[:_MAX_ALIASES])
