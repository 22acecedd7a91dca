"""English follow-ups made standalone by rules: the company, period and metric carried over from the
previous question, whatever the follow-up names itself replacing them ("and in 2023?", "what about
3M?", "its capex?")."""

from __future__ import annotations

import re

from weaverbird_common.periods import ORDINAL_QUARTERS, PERIOD_TOKEN_RE, QUARTER_RE, YEAR_RE

from weaverbird_orchestrator.tasks.followup.slots import Names, Span, as_question, known_company_span

_EN_CUE = re.compile(
    r"^\s*(?:(?:and|but|so|also|ok(?:ay)?|then|now)\b\s*,?\s*)*"
    r"(?:(?:what|how)\s+about|what\s+of|same\s+(?:question\s+)?for)?\b\s*,?\s*",
    re.IGNORECASE,
)
_EN_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|has|have|had|can|could|"
    r"will|would|should|may|might|please|give|list|show|tell|compare|explain|describe)\b",
    re.IGNORECASE,
)
# Words that stand for the company of an earlier turn; the possessive forms become "<company>'s".
_EN_POSSESSIVE = re.compile(r"\b(?:its|their)\b", re.IGNORECASE)
_EN_SUBJECT = re.compile(
    r"\b(?:it|they|them|(?:the|this|that|same)\s+(?:company|firm|business|group|issuer))\b(?!')", re.IGNORECASE
)
_EN_SAME_PERIOD = re.compile(
    r"(?:\b(?P<prep>in|for|during|of|as\s+of)\s+)?\b(?:that|the\s+same)\s+(?:fiscal\s+)?(?:year|quarter|period)\b",
    re.IGNORECASE,
)
EN_PRONOUN = re.compile(
    rf"{_EN_POSSESSIVE.pattern}|{_EN_SUBJECT.pattern}|{_EN_SAME_PERIOD.pattern}"
    r"|\b(?:the\s+same\s+(?:filing|report|10-?K|10-?Q)|that\s+(?:filing|report))\b",
    re.IGNORECASE,
)
# Words a slot-only follow-up ("and at the end of FY2021?") wraps around its company or period.
_EN_FILLER = frozenset(
    "in for at of the end during as year fiscal fy quarter s about and what how then same period data based on".split()
)
_EN_NOT_NAMES = frozenset(
    "what who how it that there here this which where when why let he she they we you".split()
)  # "What's" is no company


_EN_NAME = r"(?:[A-Z0-9][\w&.\-]*)(?:\s+(?:[A-Z0-9][\w&.\-]*|&))*"
_EN_POSSESSIVE_NAME = re.compile(rf"\b(?P<n>{_EN_NAME})['’]s?\b")
# "... for Acme?", "... at Acme in FY2023?"
_EN_TRAILING_NAME = re.compile(
    rf"\b(?:for|of|at|by)\s+(?P<n>{_EN_NAME})(?:\s+(?:in|for|during|as\s+of)\s+[^?]*)?\s*[?.!]?\s*$"
)


def en_company(text: str, names: Names) -> Span | None:
    """The company a question names: a known one, else a capitalised possessive ("Acme's") or a trailing
    "for Acme" that is not a period."""
    if span := known_company_span(text, names):
        return span
    for pattern in (_EN_POSSESSIVE_NAME, _EN_TRAILING_NAME):
        for m in pattern.finditer(text):
            name = m.group("n").strip()
            first = name.split()[0].lower()
            if first in _EN_NOT_NAMES or YEAR_RE.fullmatch(name) or QUARTER_RE.fullmatch(name):
                continue
            if PERIOD_TOKEN_RE.match(name):
                continue
            return Span(m.start("n"), m.start("n") + len(name), name)
    return None


def _en_years(text: str) -> list[tuple[Span, int]]:
    out = []
    for m in YEAR_RE.finditer(text):
        group = "y" if m.group("y") else "y2"
        digits = m.group(group)
        year = int(digits) if len(digits) == 4 else 2000 + int(digits)
        out.append((Span(m.start(group), m.end(group), digits), year))
    return out


def _en_period(text: str) -> str:
    """The latest period as written ("FY2018", "Q2 of FY2024"), or ""."""
    years = _en_years(text)
    if not years:
        return ""
    span, _ = max(years, key=lambda item: (item[1], item[0].start))
    start = span.start
    before = text[:start]
    if fy := re.search(r"(?:\bFY\s*'?|\bfiscal\s+(?:year\s+)?)$", before, re.IGNORECASE):
        start = fy.start()
    if q := re.search(
        rf"(?:{QUARTER_RE.pattern})\s*(?:of\s+)?$", text[:start], re.IGNORECASE
    ):  # "Q2 of FY2024" keeps its quarter
        start = q.start()
    return text[start : span.end]


def _shift_years(text: str, new_year: int) -> str:
    """Every year in `text` moved by the same amount so that its latest becomes `new_year` ("between
    FY2021 and FY2022" asked again "in 2023" is "between FY2022 and FY2023"), each kept in its form."""
    years = _en_years(text)
    if not years:
        return text
    delta = new_year - max(y for _, y in years)
    out, last = [], 0
    for span, year in years:
        moved = year + delta
        out += [text[last : span.start], str(moved) if len(span.text) == 4 else f"{moved % 100:02d}"]
        last = span.end
    return "".join([*out, text[last:]])


def _set_quarter(text: str, quarter: int) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group("q"):
            return f"Q{quarter}"
        if m.group("q2"):
            return f"{quarter}Q"
        return m.group().replace(m.group("w"), ORDINAL_QUARTERS[quarter - 1])

    return QUARTER_RE.sub(sub, text, count=1)


def _add_en_slots(text: str, company: str, period: str) -> str:
    """Puts the company where a pronoun stands for it (else "for <company>"), and the period where "that
    year" stands for it (else "in <period>"), into a question that names neither."""
    if company:
        replaced = _EN_POSSESSIVE.sub(f"{company}'s", text)
        replaced = _EN_SUBJECT.sub(company, replaced)
        text = replaced if replaced != text else f"{text.rstrip('?.! ')} for {company}"
    if period:

        def same_period(m: re.Match[str]) -> str:
            prep = m.group("prep")
            return f"{prep} {period}" if prep else f"in {period}"

        replaced = _EN_SAME_PERIOD.sub(same_period, text)
        text = replaced if replaced != text else f"{text.rstrip('?.! ')} in {period}"
    return text


def en_resolve(question: str, previous: str, names: Names) -> str:
    """The English follow-up as a standalone question, `previous` being the last user question made
    standalone."""
    prev_company = en_company(previous, names)
    prev_period = _en_period(previous)
    body = _EN_CUE.sub("", question, count=1).strip().rstrip("?.! ")
    if not body:
        return previous
    if _EN_QUESTION_START.match(body):  # a whole question: fill in what it leaves out
        own_company = en_company(body, names)
        own_period = _en_years(body) or QUARTER_RE.search(body)
        return as_question(
            _add_en_slots(
                body,
                "" if own_company or not prev_company else prev_company.text,
                "" if own_period else prev_period,
            ),
            "en",
        )
    # A slot or a phrase ("at the end of FY2021", "3M", "its capex"): the previous question with it.
    company = en_company(body, names)
    years = _en_years(body)
    quarter = QUARTER_RE.search(body)
    rest = body
    for span in [company, *(s for s, _ in years)]:
        if span is not None:
            rest = rest.replace(span.text, " ")
    rest = QUARTER_RE.sub(" ", rest)
    leftover = [w for w in re.findall(r"[A-Za-z0-9&]+", rest) if w.lower() not in _EN_FILLER]
    if not leftover and (company or years or quarter):
        out = previous
        if company:
            if prev_company:
                out = out[: prev_company.start] + company.text + out[prev_company.end :]
            else:
                out = f"{out.rstrip('?.! ')} for {company.text}"
        if years:
            new_year = max(y for _, y in years)
            out = _shift_years(out, new_year) if _en_years(out) else f"{out.rstrip('?.! ')} in {new_year}"
        if quarter:
            q = quarter.group("q") or quarter.group("q2") or ORDINAL_QUARTERS.index(quarter.group("w").lower()) + 1
            out = _set_quarter(out, int(q)) if QUARTER_RE.search(out) else out
        return as_question(out, "en")
    # A metric or other phrase: ask for it about the earlier company and period.
    phrase = _add_en_slots(
        body,
        "" if company or not prev_company else prev_company.text,
        "" if years or quarter else prev_period,
    )
    return as_question(f"What about {phrase}", "en")
