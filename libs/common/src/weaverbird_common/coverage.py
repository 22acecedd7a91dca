"""Does the knowledge base cover what a question is about? Signals the route gate uses beside the cosine.

A cosine cannot tell "a similar filing" from "the right filing": a question about 3M's 2018 revenue
scores as high on Amazon's revenue page as on 3M's. What can tell is the catalog: which companies and
fiscal years the KB's documents are about. Two checks come from it:

- period: the question names a KB company and a fiscal year, and the KB does not hold that year: no
  document of that company is for that year, and its filing for the next year (whose comparative column
  reports the year: period_covered(next_year=True)) does not mention it either. The caller asks the
  lexical index whether the next year's filing writes the year. (A blanket "next year counts" sent fewer
  leave-one-filing-out FinanceBench questions away, 0.43 against 0.67, but those questions are answerable
  from the next filing's comparatives: `weaverbird eval route` now reports them as answerable cases of
  their own, "year Y from the Y+1 filing".) Documents of the company that carry no year (most web
  pages) may be about any year: the caller asks the lexical index whether one of them mentions the
  question's year before it trusts a "period" gap.
- quarter: the question names a KB company, a fiscal year and a quarter ("Q2 of FY2023"), and no
  document of that company is for that quarter (a 10-Q, an earnings release); the year's annual report
  counts for Q4 only when asked (`weaverbird eval route` measures both).
- date: the question names a KB company and a calendar date ("As of May 26, 2023", "from August 30,
  2023 onward") later than the newest document of that company (CatalogCompany.latest_date, known only
  when every one of its documents is dated): the KB cannot know what happened then.
- kind: the question names a KB company and a kind of document ("this 10-K report", "年度报告") and the
  company has no document of that kind (doc_kinds): a 10-Q does not answer what a 10-K reports.
- unknown company: the question writes a name as a company's ("Kraft Heinz's inventory", "AES
  Corporation") and the catalog, which knows the KB's companies, knows no such company. That a chunk
  mentions the name proves little: a filing names its suppliers, peers and customers.
- unknown name: the question names something proper-noun-like (a capitalised word that does not start
  the sentence, an acronym or ticker, "3M") that matches no catalog company and occurs in no chunk at
  all. Whether a name occurs anywhere in the KB is asked of the lexical index by the caller. Chinese
  questions have no capitals: their names come from jieba's part-of-speech tags (zh_names).
- terms: the question names no KB company, and none of the passages its search found holds most of
  the words it asks with (SearchHit.term_coverage: the share of its distinct content terms, stemmed,
  Chinese segmented, English and Chinese stop words dropped). A question's own table or news item holds
  nearly all of them; another report's similar table holds the generic ones ("revenue", "2019") but not
  the rest. Measured with `weaverbird eval route` (docs/results/route.md): it tells the two apart
  better than the cosine does.
  Questions that name a KB company are left to the catalog: a filing's long instructions ("Answer in USD
  millions") and its line-item wording make the share low even on the right page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from weaverbird_common.dates import parse_iso
from weaverbird_common.doc_kinds import AskedKinds, missing_kind
from weaverbird_common.periods import PERIOD_TOKEN_RE
from weaverbird_common.questions import normalize_company, short_company_name

# Capitalised words that are not names: question words and the finance vocabulary of titles and
# acronyms. A name that slips through only costs a lexical look-up, since any word the KB contains
# is not unknown; this list just keeps the look-ups few.
_NOT_NAMES = frozenset(
    """
    a an and are as at based be between by can compared could did do does during each for from give had
    has have how if in is it its of on or per please provide should than that the their this to using
    was were what when where which who why will with would according assuming calculate describe explain
    list show state summarize tell here there let
    usd eur gbp jpy cny rmb hkd fy q1 q2 q3 q4 h1 h2 ytd yoy qoq ttm ltm eps gaap ifrs ebit ebitda ebitda
    roe roa roic roce npl pe pb ps p/e cfo ceo cfo coo sec nyse nasdaq ipo esg r&d sg&a cogs capex opex
    dpo dso dio ccc fcf nii nim ir agm kpi kpis us u.s uk eu ai it mm bn k 10-k 10-q 8-k 10k 10q 8k
    january february march april may june july august september october november december
    annual quarterly fiscal year quarter non adjusted net total gross operating free cash flow revenue
    revenues income sales margin profit assets liabilities equity ratio balance sheet statement
    management shareholders stockholders shareholder stockholder
    """.split()
)
# Places written like a company in a question ("China's share of revenue"): never a KB company.
_PLACES = frozenset(
    """
    america americas north south latin central europe european asia pacific china greater india japan
    germany britain france canada mexico brazil emea apac africa middle east korea australia taiwan
    singapore hong kong world
    """.split()
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&.'\-]*")
# Amounts: 5bn, 10m, 12.5%, 3x; but "3M" written in capitals and not after a currency sign is a name.
_AMOUNT = re.compile(r"^\d+(?:[.,]\d+)*(?:[a-z%]+)?$")
_SENTENCE_END = re.compile(r"[.?!:;\n]\s*$")


def name_candidates(question: str) -> list[str]:
    """Proper-noun-like tokens of an English question, in order, without repeats.

    A token counts when it is capitalised but does not start a sentence, or has a capital after its
    first letter (acronyms, tickers, "PepsiCo"), or mixes digits and capitals ("3M"). Possessives
    are dropped ("3M's" -> "3M")."""
    out: list[str] = []
    for match in _WORD.finditer(question):
        token = re.sub(r"(?:'s|’s|')$", "", match.group()).strip(".-'")
        if len(token) < 2 or token.lower() in _NOT_NAMES or PERIOD_TOKEN_RE.match(token) or _AMOUNT.match(token):
            continue
        if token[0].isdigit() and re.search(r"[$€£¥]\s*$", question[: match.start()]):
            continue  # $3M is money
        starts_sentence = not question[: match.start()].strip() or bool(_SENTENCE_END.search(question[: match.start()]))
        inner_capital = any(c.isupper() for c in token[1:])
        digit_and_capital = any(c.isdigit() for c in token) and any(c.isupper() for c in token)
        if (token[0].isupper() and not starts_sentence) or inner_capital or digit_and_capital:
            if token not in out:
                out.append(token)
    return out


# A name this short that starts a company's key is too likely another company's ("AM" of AMAZON).
_MIN_PREFIX = 3


class KnownNames:
    """Matching keys of the known companies and aliases. `match` is called for every name a question
    writes and a catalog can hold thousands of names, so callers build this once per catalog read."""

    def __init__(self, known_names: Iterable[str]) -> None:
        names = list(known_names)
        keys = {normalize_company(n): n for n in names} | {normalize_company(short_company_name(n)): n for n in names}
        keys.pop("", None)
        self._keys = keys

    def __bool__(self) -> bool:
        return bool(self._keys)

    def match(self, name: str) -> str:
        """The known company (or alias) a name the question writes stands for: the same key, the key with
        a plural/possessive "S" ("McDonald" for MCDONALDS), or the start of one when the name is written
        as an abbreviation, in capitals, three characters or more ("MGM" for MGMRESORTS: a file-name key
        cannot be split into words, and "Meta" must not become METALSCORP). "" when none matches; the
        shortest match when several do."""
        key = normalize_company(name)
        if not key:
            return ""
        for candidate in (key, key + "S"):
            if candidate in self._keys:
                return self._keys[candidate]
        if len(key) < _MIN_PREFIX or not name.strip().isupper():
            return ""
        starts = sorted((k for k in self._keys if k.startswith(key)), key=len)
        return self._keys[starts[0]] if starts else ""


def known_as(name: str, known_names: Iterable[str]) -> str:
    """KnownNames(known_names).match(name), for a single name."""
    return KnownNames(known_names).match(name)


def _known(names: KnownNames | Iterable[str]) -> KnownNames:
    return names if isinstance(names, KnownNames) else KnownNames(names)


def names_to_look_up(question: str, known_names: KnownNames | Iterable[str], limit: int) -> list[str]:
    """At most `limit` name candidates of the question that are not a catalog company or alias (KnownNames):
    the ones whose presence in the KB the caller asks of the lexical index."""
    known = _known(known_names)
    return [n for n in name_candidates(question) if not known.match(n)][:limit]


# Words after a name that make it a company's ("AES Corporation", "3M Company"), and the possessive.
_LEGAL_FORMS = frozenset(
    "corporation corp inc incorporated company ltd limited plc holdings llc group".split()
)  # fmt: skip
_POSSESSIVE = re.compile(r"(?:'s|’s|(?<=s)'|(?<=s)’)$")
_NAME_WORDS = 5  # longest company name in words that a question writes before "'s"


def _capitalised(token: str) -> bool:
    return (token[0].isupper() or token[0].isdigit()) and any(c.isupper() for c in token)


def company_names(question: str) -> list[str]:
    """Names an English question writes as a company's: before a possessive ("Kraft Heinz's") or a legal
    form ("AES Corporation"), the run of capitalised words that ends there, legal form dropped. Question
    words and finance terms end the run ("Are JPM's margins" gives "JPM"); "the" before it without a
    legal form makes it a region or segment ("the Americas' revenue")."""
    tokens = list(_WORD.finditer(question))
    out: list[str] = []
    for i, match in enumerate(tokens):
        word = match.group()
        base = _POSSESSIVE.sub("", word)
        following = _POSSESSIVE.sub("", tokens[i + 1].group()).strip(".").lower() if i + 1 < len(tokens) else ""
        adjacent = i + 1 < len(tokens) and not question[match.end() : tokens[i + 1].start()].strip()
        if base == word and not (adjacent and following in _LEGAL_FORMS):
            continue
        run: list[str] = []
        j, start = i, match.start()
        while j >= 0 and len(run) < _NAME_WORDS:
            token = _POSSESSIVE.sub("", tokens[j].group()).strip(".-'")
            if not token or not _capitalised(token) or token.lower() in _NOT_NAMES or PERIOD_TOKEN_RE.match(token):
                break
            run.insert(0, token)
            start = tokens[j].start()
            if j == 0 or question[tokens[j - 1].end() : tokens[j].start()].strip():
                break  # punctuation between two words: the name does not go on
            j -= 1
        legal = (adjacent and following in _LEGAL_FORMS) or base.lower() in _LEGAL_FORMS
        if run and not legal and re.search(r"\bthe\s*$", question[:start], re.IGNORECASE):
            continue  # "the Americas' revenue": a region or segment, not a company
        if all(word.lower() in _PLACES for word in run):
            continue
        name = short_company_name(" ".join(run)) if run else ""
        if name and name.lower() not in _LEGAL_FORMS and name not in out:
            out.append(name)
    return out


def unknown_companies(question: str, known_names: KnownNames | Iterable[str]) -> list[str]:
    """The question's company names (company_names) that no catalog company, its short name ("AES" for
    AES_CORPORATION) or alias matches (KnownNames), also after dropping leading words ("Among Adobe" is
    Adobe). Empty when the catalog knows no company at all: it then cannot tell a missing company from
    a KB filed without company names."""
    known = _known(known_names)
    if not known:
        return []
    out = []
    for name in company_names(question):
        words = name.split()
        if not any(known.match(" ".join(words[k:])) for k in range(len(words))):
            out.append(name)
    return out


def period_covered(company_years: Sequence[int], year: int, next_year: bool = False) -> bool:
    """Whether the KB has a document of the company for `year`, or (next_year) for the year after, whose
    filing reports `year` as its comparative.

    A company whose documents carry no year is taken as covering every year: nothing says it does not."""
    known = [y for y in company_years if y]
    return not known or year in known or (next_year and year + 1 in known)


def quarter_covered(
    company_quarters: Sequence[tuple[int, int]],
    company_years: Sequence[int],
    year: int,
    quarter: int,
    annual_q4: bool = False,
) -> bool:
    """Whether the KB has a document of the company for fiscal `quarter` of `year` (company_quarters:
    the (year, quarter) of its quarterly documents), or, with annual_q4, any document for `year` when
    the question asks about Q4 (the annual report closes the fourth quarter).

    A company whose documents carry no year is taken as covering every quarter, as in period_covered."""
    if not [y for y in company_years if y]:
        return True
    if (year, quarter) in {(int(y), int(q)) for y, q in company_quarters}:
        return True
    return annual_q4 and quarter == 4 and year in company_years


# The served minimum share of a question's terms one passage must hold (questions naming no KB company):
# the largest 0.05 step that kept >= 90 % of answerable questions local on the tuning half of every
# dataset (`weaverbird eval route --datasets financebench,tatqa,fineva` prints the choice).
MIN_TERM_COVERAGE = 0.60


# Every kind of gap assess() reports (Coverage.gap), in the order it checks them; the orchestrator also
# counts questions by them (weaverbird_orchestrator_route_reasons_total).
GAP_KINDS = ("period", "quarter", "date", "kind", "company", "name", "terms")


@dataclass(frozen=True)
class Coverage:
    """What the catalog says about a question: the gate sends it to the web when `covered` is False."""

    covered: bool
    reason: str = ""
    # What was not covered: one of GAP_KINDS; "" when covered.
    gap: str = ""


def assess(
    filters: Mapping[str, str | int],
    company_years: Mapping[str, Sequence[int]],
    unknown_names: Iterable[str],
    next_year: bool = False,
    missing_companies: Iterable[str] = (),
    company_quarters: Mapping[str, Sequence[tuple[int, int]]] | None = None,
    annual_q4: bool = False,
    term_coverage: float | None = None,
    min_term_coverage: float = 0.0,
    asked_date: date | None = None,
    latest_dates: Mapping[str, str] | None = None,
    names: Mapping[str, str] | None = None,
    asked_kinds: AskedKinds = (),
    company_kinds: Mapping[str, Sequence[str]] | None = None,
) -> Coverage:
    """The coverage verdict from the question's filters (company / year read against the catalog),
    the catalog's years per company, the names no KB chunk contains (looked up by the caller) and the
    companies the question names that the catalog does not know (unknown_companies). With
    company_quarters (the catalog's (year, quarter) per company) a question's quarter must be covered too
    (quarter_covered); without it only the year is checked. `term_coverage` is the best share of the
    question's terms one of its searched passages holds (None: not known); below `min_term_coverage`
    a question that names no KB company is not covered. `asked_date` is the latest calendar date the
    question names (dates.latest_date); with `latest_dates` (the catalog's newest document date per
    company) a later one is not covered. `names` maps a catalog key to the name the reason shows
    ("Northwind Robotics" for NORTHWIND_ROBOTICS); without it the key is shown. `asked_kinds` are the
    kinds of document the question names (doc_kinds.asked_kinds); with `company_kinds` (the catalog's
    document kinds per company, listed only where every document's kind is known) a kind the company
    has no document of is not covered."""
    company = filters.get("company")
    shown_company = (names or {}).get(str(company), str(company))
    year = filters.get("year")
    if company:
        years = company_years.get(str(company))
        if years is not None and isinstance(year, int) and not period_covered(years, year, next_year):
            shown = ", ".join(str(y) for y in sorted(set(years)) if y)
            gap = f"the knowledge base holds no {year} document of {shown_company} (it has {shown})"
            return Coverage(False, gap, "period")
        quarter = filters.get("quarter")
        if company_quarters is not None and years is not None and isinstance(year, int) and isinstance(quarter, int):
            quarters = company_quarters.get(str(company), ())
            if not quarter_covered(quarters, years, year, quarter, annual_q4):
                shown = ", ".join(f"{y} Q{q}" for y, q in sorted(set(quarters))) or "no quarterly documents"
                gap = f"the knowledge base holds no {year} Q{quarter} document of {shown_company} (it has {shown})"
                return Coverage(False, gap, "quarter")
        newest = parse_iso((latest_dates or {}).get(str(company), ""))
        if asked_date and newest and asked_date > newest:
            gap = f"the newest document of {shown_company} in the knowledge base is dated {newest}, before {asked_date}"
            return Coverage(False, gap, "date")
        held = (company_kinds or {}).get(str(company), ())
        if kind := missing_kind(asked_kinds, held):
            shown = ", ".join(sorted(held))
            return Coverage(False, f"the knowledge base holds no {kind} of {shown_company} (it has {shown})", "kind")
        return Coverage(True)
    missing = list(missing_companies)
    if missing:
        return Coverage(False, f"the knowledge base holds no document of {', '.join(missing)}", "company")
    unknown = list(unknown_names)
    if unknown:
        return Coverage(False, f"the knowledge base never mentions {', '.join(unknown)}", "name")
    if term_coverage is not None and term_coverage < min_term_coverage:
        # Rounded down, so a share just under the minimum never reads as equal to it.
        gap = (
            f"no passage holds most of the question's words (at best {math.floor(term_coverage * 100)}%, "
            f"needs {min_term_coverage:.0%})"
        )
        return Coverage(False, gap, "terms")
    return Coverage(True)
