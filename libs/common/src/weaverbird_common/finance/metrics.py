"""Standard financial metrics as formulas over statement concepts, with the conventions shown to users.

Each metric names its inputs by concept and period ("t" the asked period, "t-1" the one before, "avg"
the mean of the two: the usual convention for turnover and return ratios). Expenses and outflows are
read as magnitudes (a cash flow statement prints capex as (1,577)), so formulas are written as analysts
write them. A definition written in the question overrides the library (`definition_in_question`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from weaverbird_common.finance import formulas
from weaverbird_common.finance.concepts import CONCEPTS, concepts_in_text
from weaverbird_common.finance.tables import read_table, words

# Read as magnitudes whatever sign the statement prints.
_MAGNITUDE = {
    "cost_of_revenue",
    "sga",
    "selling_expense",
    "admin_expense",
    "rnd_expense",
    "interest_expense",
    "income_tax_expense",
    "depreciation_amortization",
    "operating_expenses",
    "capital_expenditure",
    "dividends_paid",
    "share_repurchases",
}


@dataclass(frozen=True)
class Input:
    concept: str
    period: str  # "t" | "t-1" | "avg"


@dataclass(frozen=True)
class Metric:
    id: str
    en: tuple[str, ...]
    zh: tuple[str, ...]
    expression: str
    inputs: dict[str, Input]
    unit: str  # "percent" | "ratio" | "times" | "days" | "currency"
    description: str
    alternatives: tuple[tuple[str, dict[str, Input]], ...] = field(default_factory=tuple)
    # Which way the metric improves ("higher": margins, returns, coverage; "lower": days outstanding,
    # leverage); "" where analysts disagree (payout, capex intensity). An "improving" question needs it.
    better: str = ""


@dataclass(frozen=True)
class Computed:
    value: float  # a fraction for percent metrics (0.224 is 22.4 %)
    unit: str
    formula: str
    used: dict[str, tuple[str, str, float]]


def _i(spec: str) -> Input:
    concept, _, period = spec.partition("@")
    return Input(concept, period or "t")


def _inputs(spec: dict[str, str]) -> dict[str, Input]:
    return {str(k): _i(v) for k, v in spec.items()}


def _metric(row: dict[str, Any]) -> Metric:
    unknown = set(row) - {"id", "en", "zh", "expression", "inputs", "unit", "description", "alternatives", "better"}
    if unknown:
        raise ValueError(f"metric {row['id']}: unknown fields {sorted(unknown)}")
    if row.get("better", "") not in ("", "higher", "lower"):
        raise ValueError(f"metric {row['id']}: better is higher or lower")
    return Metric(
        row["id"],
        words(row, "en"),
        words(row, "zh"),
        row["expression"],
        _inputs(row["inputs"]),
        row["unit"],
        row["description"],
        tuple((alt["expression"], _inputs(alt["inputs"])) for alt in row.get("alternatives", ())),
        row.get("better", ""),
    )


# The table itself is data: finance/data/metrics.yaml.
_LIST = tuple(_metric(row) for row in read_table("metrics"))
METRICS: dict[str, Metric] = {m.id: m for m in _LIST}


def _name_pattern(name: str) -> re.Pattern[str]:
    if re.search(r"[\u4e00-\u9fff]", name):
        return re.compile(re.escape(name))
    # Words may be joined by hyphens ("free-cash-flow margin"), and "cash flow" is often written as one word.
    body = re.escape(name).replace(r"\ ", r"[\s-]+").replace(r"cash[\s-]+flow", r"cash[\s-]*flow")
    # A plural names the metric too ("gross margins"); "change in operating income" is growth, but not
    # "change in operating income % margin".
    plural = "s?" if name[-1:].isalpha() else ""
    return re.compile(rf"(?<![a-z&]){body}{plural}(?![a-z&])(?!\s*%?\s*margin)", re.IGNORECASE)


_NAMES = sorted(((n, m) for m in _LIST for n in (*m.en, *m.zh)), key=lambda x: -len(x[0]))
_PATTERNS = [(_name_pattern(n), m) for n, m in _NAMES]


def metrics_in_text(text: str) -> list[Metric]:
    """Metrics a question names, each once, in the order the question names them; a longer name wins over a
    shorter one inside it ("EBITDA margin" is not "EBITDA"). A name that is only the term a definition in the
    question defines ("Define unadjusted EBITDA as ...") comes last: the question asks about something else."""
    defined = [m.span(g) for m in _DEFINITION.finditer(text) for g in ("name1", "name2") if m.group(g)]
    hits: list[tuple[bool, int, Metric]] = []
    taken: list[tuple[int, int]] = []
    matches = [(m.start(), m.end(), metric) for pattern, metric in _PATTERNS for m in pattern.finditer(text)]
    # Of overlapping names the one ending last wins, then the longest: English puts the head noun last
    # ("unadjusted EBITDA less capex" is EBITDA less capex, "unadjusted EBITDA % margin" a margin).
    for start, end, metric in sorted(matches, key=lambda x: (-x[1], x[0])):
        if any(start < e and end > s for s, e in taken):
            continue
        taken.append((start, end))
        in_definition = any(s <= start and end <= e for s, e in defined)
        hits.append((in_definition, start, metric))
    found: list[Metric] = []
    for _, _, metric in sorted(hits, key=lambda h: (h[0], h[1])):
        if metric not in found:
            found.append(metric)
    return found


def compute(metric: Metric, lookup: Callable[[str, str], float | None]) -> Computed | None:
    """The metric from looked-up amounts, or None when an input is missing (after the alternatives) or a
    division by zero."""
    for expression, inputs in ((metric.expression, metric.inputs), *metric.alternatives):
        values: dict[str, float] = {}
        used: dict[str, tuple[str, str, float]] = {}
        shown: dict[str, str] = {}
        for letter, item in inputs.items():
            value = _input_value(item, lookup)
            if value is None:
                break
            values[letter] = value
            used[letter] = (item.concept, item.period, value)
            shown[letter] = _show_number(value)
        else:
            try:
                result = formulas.evaluate(expression, values)
            except ZeroDivisionError:
                return None
            filled = re.sub(r"\b([a-z])\b", lambda m, shown=shown: shown.get(m.group(1), m.group(1)), expression)
            filled = filled.replace("*", "x")
            out = show_metric(result, metric.unit)
            return Computed(result, metric.unit, f"{filled} = {out}", used)
    return None


def _input_value(item: Input, lookup: Callable[[str, str], float | None]) -> float | None:
    def one(period: str) -> float | None:
        value = lookup(item.concept, period)
        if value is None:
            return None
        return abs(value) if item.concept in _MAGNITUDE else value

    if item.period == "avg":
        now, before = one("t"), one("t-1")
        return None if now is None or before is None else (now + before) / 2
    if item.period == "delta":
        now, before = one("t"), one("t-1")
        return None if now is None or before is None else now - before
    return one(item.period)


def _show_number(value: float) -> str:
    """A figure as the formula shows it: in the lookup's own scale, grouped, no invented unit."""
    if value == int(value) and abs(value) < 1e15:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.4g}"


def show_metric(value: float, unit: str) -> str:
    """A metric's value as users read it, in the formula and the answer alike: "22.4 %", "63.86 days"."""
    if unit == "percent":
        return f"{value * 100:.1f} %"
    if unit == "percentage points":
        return f"{value * 100:.1f} percentage points"
    if unit == "days":
        return f"{value:,.2f} days"
    if unit == "times":
        return f"{value:,.2f} times"
    if unit == "ratio":
        return f"{value:,.2f}"
    return _show_number(value)


# "X is defined as: <expression>", "Define X as <expression>", "X here is defined as: (<expression>)".
_DEFINITION = re.compile(
    r"(?:(?P<name1>[A-Za-z][\w&%()\- ]{1,60}?)\s+(?:is|here is)\s+defined\s+as"
    r"|define\s+(?P<name2>[A-Za-z][\w&%()\- ]{1,60}?)\s+as)"
    r"\s*:?\s*(?P<expr>[^.?;]+?(?:\.\d[^.?;]*)*)(?=[.?;](?:\s|$)|$)",
    re.IGNORECASE,
)
_ITEM_SPLIT = re.compile(
    r"(\(|\)|\s[+\-*/x]\s|[+*/]|\s-\s|\bdivided by\b|\bplus\b|\bminus\b|\bless\b|\btimes\b)", re.IGNORECASE
)
_OP_WORDS = {"divided by": "/", "plus": "+", "minus": "-", "less": "-", "times": "*", "x": "*"}


_SHARE_OF = re.compile(
    r"(?P<a>[\w&,'’ -]+?)\s+as\s+an?\s+(?:%|percent|percentage|share|proportion)\s+of\s+(?P<b>[\w&,'’ -]+?)"
    r"(?=\s+(?:from|in|for|between|during|over|at)\b|[?.;,]|$)",
    re.IGNORECASE,
)


def share_in_question(text: str) -> Metric | None:
    """ "cost of goods sold as a % of revenue": one line item over another, as a percent, when each side
    names exactly one line item and the library has no metric of that name."""
    match = _SHARE_OF.search(text)
    if match is None:
        return None
    part, whole = concepts_in_text(match.group("a")), concepts_in_text(match.group("b"))
    if len(part) != 1 or len(whole) != 1 or part == whole:
        return None
    a, b = (_concept_name(c) for c in (part[0], whole[0]))
    name = f"{a} as a % of {b}"
    return Metric(
        f"share:{part[0]}/{whole[0]}",
        (name,),
        (),
        "a / b",
        {"a": Input(part[0], "t"), "b": Input(whole[0], "t")},
        "percent",
        f"{name[:1].upper()}{name[1:]} = {a} / {b}",
    )


def _concept_name(concept: str) -> str:
    info = CONCEPTS.get(concept)
    return info.en[0] if info and info.en else concept.replace("_", " ")


def definition_in_question(text: str) -> Metric | None:
    """A metric defined in the question, its items read as concepts and periods, or None."""
    match = _DEFINITION.search(text)
    if not match:
        return None
    name = (match.group("name1") or match.group("name2") or "").strip()
    expr_text = match.group("expr").strip()
    years = [int(y) for y in re.findall(r"(?:19|20)\d{2}", expr_text)]
    latest = max(years) if years else None
    pieces = [p for p in _ITEM_SPLIT.split(expr_text) if p and p.strip()]
    expression: list[str] = []
    inputs: dict[str, Input] = {}
    letters = iter("abcdefghijklmnopqrstuvw")
    for piece in pieces:
        token = piece.strip()
        low = token.lower()
        if token in "()+-*/":
            expression.append(token)
            continue
        if low in _OP_WORDS:
            expression.append(_OP_WORDS[low])
            continue
        if re.fullmatch(r"\d+(?:\.\d+)?", token):
            expression.append(token)
            continue
        concepts = concepts_in_text(token)
        if not concepts:
            return None
        period = "t"
        if re.search(r"\baverage\b|\bavg\b", low):
            period = "avg"
        elif re.search(r"\bchange in\b|\bincrease in\b", low):
            period = "delta"
        elif latest is not None:
            named = [int(y) for y in re.findall(r"(?:19|20)\d{2}", token)]
            if named and max(named) < latest:
                period = "t-1"
        letter = next(letters)
        inputs[letter] = Input(concepts[0], period)
        expression.append(letter)
    expr = " ".join(expression)
    try:
        formulas.names(expr)
    except SyntaxError:
        return None
    name = re.sub(r"^the\s+", "", name, flags=re.IGNORECASE)
    return Metric(
        f"defined:{name.lower()}",
        (name,),
        (),
        expr,
        inputs,
        _defined_unit(name, expr, text),
        f"{name} = {' '.join(expr_text.split())} (as the question defines it)",
    )


def _defined_unit(name: str, expression: str, question: str) -> str:
    """The unit the question asks for, else the library's for a metric of that name, else from the form."""
    divides = "/" in expression
    if divides and re.search(r"in units of percents?|as a %|as a percent|percentage", question, re.IGNORECASE):
        return "percent"
    same = metrics_in_text(name)
    if same:
        return same[0].unit
    if re.search(r"\b36[05]\b", expression):
        return "days"
    return "ratio" if divides else "currency"
