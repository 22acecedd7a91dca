"""What a figure question asks, read by rules: the metric or line item, and the period(s).

"What is Amazon's FY2017 days payable outstanding?" -> metric dpo, years [2017]. "FY2015 - FY2017 3
year average net profit margin" -> metric net_margin, years 2015..2017, averaged. "FY2019 - FY2020
revenue growth" -> revenue_growth for 2020. "year end FY2020 net AR" -> concept accounts_receivable, as
of FY2020. A definition written in the question ("ROA is defined as ...") overrides the library's.
Nothing here writes a figure: the answer's figures come from facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

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
    verdict: what a yes/no question asks of the figure: "positive" / "negative" (its sign), "up" / "down"
    (its direction from the first period to the last), "improve" / "worsen" (its direction against the way
    the metric improves, Metric.better), "either" (the direction, no yes/no: "improved or declined"),
    "steady" (whether it stayed within `bound` from one year to the next), "" for a question that asks
    the figure itself. A move asked of one year is the move from the year before into it.
    years: the periods asked, oldest first; empty for "steady" without named years: every year the facts hold.
    bound: for "steady", the largest move a year the question allows ("not fluctuating more than 2 %"): a
    fraction, read as percentage points for a percent metric and as a relative change otherwise; 0 when the
    question states none (then the moves are shown without a yes/no).
    scale: the scale the question asks an amount in (1e6 for "Answer in USD millions", 1e8 for "单位：亿元");
    0 when it names none (the amount is shown as its statement prints it).
    """

    years: tuple[int, ...]
    metric: Metric | None = None
    concept: str = ""
    quarter: int = 0
    aggregate: str = ""
    defined_in_question: bool = False
    candidates: tuple[str, ...] = field(default_factory=tuple)
    verdict: str = ""
    bound: float = 0.0
    scale: float = 0.0

    @property
    def year(self) -> int:
        return self.years[-1] if self.years else 0


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


# Questions a figure does not answer: causes, choices among segments, non-GAAP adjustments.
_NOT_A_FIGURE = re.compile(
    r"\bwhat drove\b|\bwhy\b|"
    r"\bexplain\b|\bin which\b|\bwhich\b|\bwhat (?:are|were) the\b|\badjusted\b|\bnon[- ]gaap\b|\borganic\b|"
    r"\bexclud\w*|\breal (?:change|growth)\b|\bsegments?\b|为什么|原因|哪些|哪个",
    re.IGNORECASE,
)
# A yes/no question. A figure answers it only when it asks the figure's sign ("Does X have positive working
# capital in FY2022?") or its direction between two periods ("Has X's quick ratio improved or declined
# between FY2022 and FY2023?"); any other yes/no question ("Is X capital intensive?") is a judgement.
_YES_NO = re.compile(r"^\s*(?:does|do|did|is|are|was|were|has|have|had|can|could|will|would|should)\b|是否", re.I)
_SIGN = re.compile(r"\b(positive|negative)\b|(为正|为负)", re.IGNORECASE)
_UP = re.compile(r"\b(?:increas\w*|r[io]se|rising|grow\w*|grew|rais\w*|went up|higher)\b|增加|增长|上升|提高", re.I)
_DOWN = re.compile(
    r"\b(?:decreas\w*|declin\w*|f[ae]ll|falling|drop\w*|reduc\w*|went down|lower)\b|减少|下降|降低", re.I
)
_EITHER = re.compile(r"\b(?:improv\w*|worsen\w*|deteriorat\w*|chang\w*)\b|改善|恶化|变化", re.IGNORECASE)
# "an improving gross margin profile": better or worse, which way depends on the metric (Metric.better).
_BETTER = re.compile(r"\bimprov\w*|改善", re.IGNORECASE)
_WORSE = re.compile(r"\b(?:worsen\w*|deteriorat\w*)|恶化", re.IGNORECASE)
_OR = re.compile(r"\bor\b|还是")
# "Are X's gross margins historically consistent?", "Has revenue been stable?": how much the figure moves
# from one year to the next, over the years named or, without them, every year the KB holds.
_STEADY = re.compile(r"\b(?:consistent|stable|steady|volatile|fluctuat\w*)\b|稳定|波动", re.IGNORECASE)
# The move the question allows: "(not fluctuating more than roughly 2% each year)", "within 3 percentage points".
_BOUND = re.compile(
    r"\b(?:more than|over|beyond|exceed\w*|within|above|under|less than)\s+"
    r"(?:roughly |about |approximately |around |~)?(\d+(?:\.\d+)?)\s*(?:%|percent\b|percentage points?\b)",
    re.IGNORECASE,
)


_IF_NOT_RELEVANT = re.compile(
    r"(?:^|(?<=[.;?]))\s*if [^.;?]*?\b(?:is|are)(?: not|n't) (?:a |an )?(?:useful|relevant|meaningful|applicable)"
    r"[^?]*$"
    # "If the quick ratio is not something an analyst would ask about ..., then state that and explain why."
    r"|(?:^|(?<=[.;?]))\s*if [^.;?]*?\b(?:is|are)(?: not|n't)\b[^.;?]*?\bthen state that\b[^?]*$",
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
    if _YES_NO.search(asked_text) and _STEADY.search(asked_text):
        return _read_steady(question, asked_text, years)
    if not years:
        return None
    verdict = ""
    if _YES_NO.search(asked_text):
        verdict = _verdict(_DEFINED_PART.sub(" ", asked_text), len(years))
        if not verdict:
            return None
        if verdict in _MOVES and len(years) == 1:
            # "Did revenue increase in FY2023?", "an improving margin profile as of FY2022": the move from
            # the year before into the year named.
            years = [years[0] - 1, years[0]]
    compare = verdict in _MOVES
    read = _read_figure(question, years, compare)
    return replace(read, verdict=verdict, scale=asked_scale(question)) if read is not None else None


def _read_steady(question: str, asked: str, years: list[int]) -> FigureQuestion | None:
    """ "Are gross margins consistent (not fluctuating more than 2 % a year)?": the metric or line item
    over the years named (two or more) or every year held, with the bound the question states."""
    read = _read_figure(_DEFINED_PART.sub(" ", question), years or [0], compare=True)
    if read is None:
        return None
    bound = _BOUND.search(asked)
    return replace(
        read,
        years=tuple(years) if len(years) > 1 else (),
        aggregate="",
        verdict="steady",
        bound=float(bound.group(1)) / 100 if bound else 0.0,
    )


_MOVES = ("up", "down", "either", "improve", "worsen")

# The scale a question asks an amount in: "(in USD millions)", "Answer in USD billions", "单位：亿元".
_ASKED_SCALE = re.compile(
    r"\bin\s+(?:units\s+of\s+)?(?:USD\s+|US\s*\$\s*|\$\s*)?(thousands|millions|billions)\b"
    r"|(?:单位\s*[：:为是]?\s*|以)(千元|万元|亿元)",
    re.IGNORECASE,
)
_SCALES = {"thousands": 1e3, "millions": 1e6, "billions": 1e9, "千元": 1e3, "万元": 1e4, "亿元": 1e8}


def asked_scale(question: str) -> float:
    """FigureQuestion.scale of `question`: 0 when it names no scale."""
    match = _ASKED_SCALE.search(question)
    return _SCALES[(match.group(1) or match.group(2)).lower()] if match else 0.0


def _verdict(asked: str, periods: int) -> str:
    """What a yes/no question asks of its figure, or "" when a figure does not answer it."""
    sign = _SIGN.search(asked)
    if sign and periods == 1:
        return "positive" if (sign.group(1) or "").lower() == "positive" or sign.group(2) == "为正" else "negative"
    up, down, either = bool(_UP.search(asked)), bool(_DOWN.search(asked)), bool(_EITHER.search(asked))
    alternatives = bool(_OR.search(asked))
    if up != down and not (either and alternatives):  # not "improved or declined"
        return "up" if up else "down"
    better, worse = bool(_BETTER.search(asked)), bool(_WORSE.search(asked))
    if better != worse and not alternatives:
        return "improve" if better else "worsen"
    return "either" if up or down or either else ""


def _read_figure(question: str, years: list[int], compare: bool = False) -> FigureQuestion | None:
    """The metric or line item asked over `years`; `compare`: the question asks how it moved between the
    first and the last of them."""
    aggregate = ""
    # "change in inventory between FY2016 and FY2017" inside a stated definition is part of the formula.
    asked_part = _DEFINED_PART.sub(" ", question)
    if _AVERAGE.search(asked_part) and len(years) > 1:
        aggregate = "average"
    elif (compare or _CHANGE.search(asked_part)) and len(years) > 1:
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
        if aggregate == "change" and not compare and years[-1] - years[0] == 1 and _reaches_back(metric):
            # "change in operating income from FY2015 to FY2016" named a growth rate: FY2016's, one value.
            aggregate = ""
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


def _reaches_back(metric: Metric) -> bool:
    """A growth rate: the metric compares the period with the one before by itself."""
    return any(i.period == "t-1" for i in metric.inputs.values())
