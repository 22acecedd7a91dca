"""What a figure question asks, read by rules: the metric or line item, and the period(s).

"What is Amazon's FY2017 days payable outstanding?" -> metric dpo, years [2017]. "FY2015 - FY2017 3
year average net profit margin" -> metric net_margin, years 2015..2017, averaged. "FY2019 - FY2020
revenue growth" -> revenue_growth for 2020. "year end FY2020 net AR" -> concept accounts_receivable, as
of FY2020. A definition written in the question ("ROA is defined as ...") overrides the library's.
Nothing here writes a figure: the answer's figures come from facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from weaverbird_common.finance.concepts import concepts_in_text
from weaverbird_common.finance.metrics import Metric, definition_in_question, metrics_in_text, share_in_question

_YEAR = re.compile(r"(?:\bFY\s*'?|\bfiscal(?: year)?\s*|(?<!\d))((?:19|20)\d{2}|(?<=FY)\d{2})(?!\d)", re.IGNORECASE)
_ZH_YEAR = re.compile(r"((?:19|20)\d{2})\s*(?:财年|年)")
_RANGE = re.compile(
    r"(?:FY\s*)?((?:19|20)\d{2})\s*(?:-|–|to|through|and|至|到)\s*(?:FY\s*)?((?:19|20)\d{2})", re.IGNORECASE
)
_AVERAGE = re.compile(r"\b(\d|three|two|four|five)[- ]year average\b|平均", re.IGNORECASE)
_CHANGE = re.compile(r"\bchange in\b|\bdifference in\b|变化|变动", re.IGNORECASE)
_DEFINED_PART = re.compile(
    r"\b(?:is |here is )?defined as\b.*?(?:[.?](?=\s|$)|$)|\bdefine\b.*?(?:[.?](?=\s|$)|$)", re.IGNORECASE | re.DOTALL
)
_QUARTER = re.compile(
    r"\bQ([1-4])\b|\b([1-4])Q\b|(first|second|third|fourth) (?:fiscal )?quarter|第([一二三四1-4])季度|([一二三四])季度",
    re.IGNORECASE,
)
_Q_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "一": 1, "二": 2, "三": 3, "四": 4}


@dataclass(frozen=True)
class FigureQuestion:
    """A question a fact lookup can answer: one metric or one line item over one or more periods.

    aggregate: "" (one period), "average" (mean over years), "change" (last minus first, in the
    metric's unit: percentage points for margins).
    """

    years: tuple[int, ...]
    metric: Metric | None = None
    concept: str = ""
    quarter: int = 0
    aggregate: str = ""
    defined_in_question: bool = False
    candidates: tuple[str, ...] = field(default_factory=tuple)

    @property
    def year(self) -> int:
        return self.years[-1]


def _covers(library: Metric, defined: Metric) -> bool:
    """The question's named metric is longer than the defined term and contains it."""
    term = defined.en[0].lower().replace("unadjusted", "").strip() if defined.en else ""
    return any(term and term in name.lower() and len(name) > len(term) + 3 for name in library.en)


def years_in(question: str) -> list[int]:
    found: set[int] = set()
    for match in _YEAR.finditer(question):
        digits = match.group(1)
        found.add(int(digits) if len(digits) == 4 else 2000 + int(digits))
    found.update(int(m.group(1)) for m in _ZH_YEAR.finditer(question))
    for match in _RANGE.finditer(question):
        a, b = sorted((int(match.group(1)), int(match.group(2))))
        if b - a <= 10:
            found.update(range(a, b + 1))
    return sorted(y for y in found if 1990 <= y <= 2100)


def quarter_in(question: str) -> int:
    match = _QUARTER.search(question)
    if not match:
        return 0
    raw = next(g for g in match.groups() if g)
    return _Q_WORDS.get(raw.lower(), 0) or int(raw)


# Questions a figure does not answer: yes/no, causes, choices among segments, non-GAAP adjustments.
_NOT_A_FIGURE = re.compile(
    r"^\s*(?:does|do|did|is|are|was|were|has|have|had|can|could|will|would|should)\b|\bwhat drove\b|\bwhy\b|"
    r"\bexplain\b|\bin which\b|\bwhich\b|\bwhat (?:are|were) the\b|\badjusted\b|\bnon[- ]gaap\b|\borganic\b|"
    r"\bexclud\w*|\breal (?:change|growth)\b|\bsegments?\b|是否|为什么|原因|哪些|哪个",
    re.IGNORECASE,
)


_IF_NOT_RELEVANT = re.compile(
    r"(?:^|(?<=[.;?]))\s*if [^.;?]*?\b(?:is|are)(?: not|n't) (?:a |an )?(?:useful|relevant|meaningful|applicable)"
    r"[^?]*$",
    re.IGNORECASE,
)


def read_question(question: str, default_year: int | None = None) -> FigureQuestion | None:
    """The figure question in `question`, or None when it names no metric or line item we know, or asks
    something a figure does not answer (then the passage path answers it)."""
    # "...; if conventional inventory management is not meaningful for the company then state that and
    # explain why": an instruction for a case the figure rules out, not what is asked.
    asked_text = _IF_NOT_RELEVANT.sub("", question)
    if _NOT_A_FIGURE.search(asked_text.replace("unadjusted", "")):
        return None
    years = years_in(question) or ([default_year] if default_year else [])
    if not years:
        return None
    aggregate = ""
    # "change in inventory between FY2016 and FY2017" inside a stated definition is part of the formula.
    asked_part = _DEFINED_PART.sub(" ", question)
    if _AVERAGE.search(asked_part) and len(years) > 1:
        aggregate = "average"
    elif _CHANGE.search(asked_part) and len(years) > 1:
        aggregate = "change"
    quarter = quarter_in(question)
    defined = definition_in_question(question)
    asked = metrics_in_text(question)
    if defined is not None and asked and _covers(asked[0], defined):
        # "Define unadjusted EBITDA as ...; what is EBITDA less capex": the definition is of a part.
        defined = None
    if defined is not None:
        if not aggregate:
            years = years[-1:]
        return FigureQuestion(
            tuple(years), metric=defined, quarter=quarter, aggregate=aggregate, defined_in_question=True
        )
    share = None if asked else share_in_question(question)
    metrics = asked or ([share] if share is not None else [])
    if metrics:
        metric = metrics[0]
        # Without an average or a change one year is asked: the latest named (a growth rate or an
        # average balance reaches back to the year before by itself).
        if not aggregate:
            years = years[-1:]
        return FigureQuestion(
            tuple(years), metric=metric, quarter=quarter, aggregate=aggregate, candidates=tuple(m.id for m in metrics)
        )
    concepts = concepts_in_text(question)
    if concepts:
        if not aggregate:
            years = years[-1:]
        return FigureQuestion(
            tuple(years), concept=concepts[0], quarter=quarter, aggregate=aggregate, candidates=tuple(concepts)
        )
    return None
