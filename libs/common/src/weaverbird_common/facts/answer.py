"""A figure question answered from facts: the value with unit and scale, the formula, a page per figure.

The model never writes a figure here. A line item is looked up; a metric is computed in code from the
line items its formula names (finance.metrics); a missing or conflicting fact is said plainly and the
caller falls back to the passage path.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from weaverbird_common.facts.model import Fact
from weaverbird_common.facts.question import FigureQuestion
from weaverbird_common.facts.select import Conflict, pick_fact
from weaverbird_common.facts.units import multiplier_word
from weaverbird_common.finance.concepts import CONCEPTS
from weaverbird_common.finance.metrics import Computed, Metric, compute, show_metric


@dataclass(frozen=True)
class FactAnswer:
    """What the user is told: the text (citations [n] over `used`), the value and its unit."""

    value: float
    unit: str
    text: str
    formula: str
    used: tuple[Fact, ...]
    steps: tuple[str, ...] = ()  # the formula with the figures put in ("= 325.2 / 842.5")
    metric: bool = False  # a metric's value: a percent is a fraction (0.224), a figure's is as printed (22.4)
    series: tuple[tuple[str, str, float], ...] = ()  # per period asked: (period, value as shown, value)


@dataclass(frozen=True)
class FactMiss:
    """Why facts could not answer: "missing" (which concept, which period) or "conflict"."""

    reason: str
    detail: str
    facts: tuple[Fact, ...] = field(default_factory=tuple)


Cite = Callable[[Fact], int]
_FALLBACK = {"net_income_parent": "net_income"}
# A line item some balance sheets print only as its parts (Microsoft: "Current portion of long-term debt"
# and "Long-term debt", no total; inventories as raw materials, work in process, finished goods): the
# parts added, the last one required.
_PARTS = {
    "total_debt": ("short_term_debt", "long_term_debt"),
    "inventory": ("inventory_raw_materials", "inventory_work_in_process", "inventory_finished_goods"),
    "cost_of_revenue": ("cost_of_services", "cost_of_products"),
}


def concepts_for(concept: str) -> tuple[str, ...]:
    """The concepts an answer about `concept` may read: itself, the line it falls back to, its parts."""
    return (concept, *((_FALLBACK[concept],) if concept in _FALLBACK else ()), *_PARTS.get(concept, ()))


def _find(
    facts: Sequence[Fact], concept: str, year: int, quarter: int, fall_back: bool = False
) -> Fact | Conflict | None:
    """The concept's fact for the period; else (fall_back) the line it falls back to; else its printed parts
    added up."""
    found = pick_fact(facts, concept, year, quarter)
    if found is None and fall_back and concept in _FALLBACK:
        # A filing without noncontrolling interests prints one net income line.
        found = pick_fact(facts, _FALLBACK[concept], year, quarter)
    return found if found is not None else _sum_of_parts(facts, concept, year, quarter)


def _sum_of_parts(facts: Sequence[Fact], concept: str, year: int, quarter: int) -> Fact | Conflict | None:
    parts = [pick_fact(facts, part, year, quarter) for part in _PARTS.get(concept, ())]
    if not parts or parts[-1] is None:
        return None
    conflict = next((p for p in parts if isinstance(p, Conflict)), None)
    if conflict is not None:
        return conflict
    present = [p for p in parts if isinstance(p, Fact)]
    base = present[-1]
    total = sum(f.amount for f in present)
    scale = base.scale if base.scale > 0 else 1.0
    return replace(base, concept=concept, label=" + ".join(f.label for f in present), value=total / scale)


# The words before a computed answer's formula and figures lines (the table path writes them too).
LINE_WORDS = {"en": {"formula": "Formula: ", "figures": "Figures: "}, "zh": {"formula": "公式：", "figures": "数据："}}


class _Lookup:
    """The lookup a metric computes over: (concept, "t"/"t-1") -> amount in the inputs' common scale."""

    def __init__(self, facts: Sequence[Fact], year: int, quarter: int) -> None:
        self.facts, self.year, self.quarter = facts, year, quarter
        self.used: list[Fact] = []
        self.missing: list[tuple[str, int]] = []
        self.conflicts: list[Conflict] = []
        self.scale: float | None = None

    def __call__(self, concept: str, period: str) -> float | None:
        year = self.year - 1 if period == "t-1" else self.year
        found = _find(self.facts, concept, year, self.quarter)
        if isinstance(found, Conflict):
            self.conflicts.append(found)
            return None
        if found is None:
            self.missing.append((concept, year))
            return None
        self.used.append(found)
        # In the first figure's stated scale ("325.2 / 842.5", as the statement prints them); a figure
        # from a table in another scale is converted, so the arithmetic stays right.
        if self.scale is None:
            self.scale = found.scale if found.unit == "currency" and found.scale > 0 else 1.0
        return found.amount / self.scale if found.unit == "currency" else found.amount


def answer_from_facts(
    question: FigureQuestion, facts: Sequence[Fact], cite: Cite, language: str = "en"
) -> FactAnswer | FactMiss:
    if question.verdict == "steady":
        return _steady_answer(question, facts, cite, language)
    if question.metric is not None:
        result = _metric_answer(question, question.metric, facts, cite, language)
    else:
        result = _concept_answer(question, facts, cite, language)
    if isinstance(result, FactAnswer) and question.verdict and result.series:
        return _with_verdict(_plain_verdict(question), result, language)
    return result


def _plain_verdict(question: FigureQuestion) -> str:
    """ "improve" / "worsen" as the direction the metric moves when it does ("either" when no way is better)."""
    if question.verdict not in ("improve", "worsen"):
        return question.verdict
    better = question.metric.better if question.metric is not None else ""
    if not better:
        return "either"
    up = (better == "higher") == (question.verdict == "improve")
    return "up" if up else "down"


_MOVED = {"en": {"up": "rose", "down": "fell", "": "was unchanged"}, "zh": {"up": "上升", "down": "下降", "": "持平"}}


def _with_verdict(verdict: str, answer: FactAnswer, language: str) -> FactAnswer:
    """A yes/no question about the figure's sign or direction: the verdict first, said from the figures."""
    zh = language == "zh"
    (first_period, first_shown, first), (last_period, last_shown, last) = answer.series[0], answer.series[-1]
    if verdict in ("positive", "negative"):
        holds = last > 0 if verdict == "positive" else last < 0
        said = ""
    else:
        moved = "up" if last > first else "down" if last < first else ""
        holds = moved == verdict if verdict in ("up", "down") else None
        word = _MOVED["zh" if zh else "en"][moved]
        if zh:
            said = f"从{first_shown}（{first_period}）{word}至{last_shown}（{last_period}）。"
        else:
            said = f"It {word} from {first_shown} ({first_period}) to {last_shown} ({last_period})."
    yes_no = "" if holds is None else ("是。" if holds else "否。") if zh else ("Yes. " if holds else "No. ")
    lead = f"{yes_no}{said}".strip()
    return replace(answer, text=f"{lead}\n{answer.text}" if lead else answer.text)


_MOST_YEARS = 5  # "historically" without named years: the latest five years the facts hold at most


def _years_held(q: FigureQuestion, facts: Sequence[Fact]) -> list[int]:
    """The fiscal years the facts hold for the question's first line item, latest last."""
    concept = next(iter(q.metric.inputs.values())).concept if q.metric is not None else q.concept
    readable = concepts_for(concept)
    held = sorted({f.period.fiscal_year for f in facts if f.concept in readable and f.period.quarter == q.quarter})
    # Consecutive years only: a move from FY2019 to FY2021 is no year-to-year move.
    run = held[-1:]
    for year in reversed(held[:-1]):
        if year != run[0] - 1:
            break
        run.insert(0, year)
    return run[-_MOST_YEARS:]


def _steady_answer(q: FigureQuestion, facts: Sequence[Fact], cite: Cite, language: str) -> FactAnswer | FactMiss:
    """How much the figure moved from one year to the next, and, when the question states a bound
    ("not fluctuating more than roughly 2 % each year"), whether every move stayed within it."""
    named = bool(q.years)
    per_year: list[FactAnswer] = []
    # Latest first: without named years an older year the facts cannot answer ends the series there.
    for year in reversed(q.years or _years_held(q, facts)):
        one = replace(q, years=(year,), verdict="", bound=0.0)
        result = (
            _metric_answer(one, q.metric, facts, cite, language)
            if q.metric is not None
            else _concept_answer(one, facts, cite, language)
        )
        if isinstance(result, FactMiss):
            if named or not per_year:
                return result
            break
        per_year.insert(0, result)
    if len(per_year) < 2:
        return FactMiss("missing", f"{q.metric.id if q.metric else q.concept}: fewer than two years")
    # A margin moves in percentage points; an amount or a ratio by its relative change. Fractions throughout:
    # a metric's percent is one already (0.214), a printed percent line (21.4) is divided.
    points = q.metric.unit == "percent" if q.metric is not None else per_year[-1].unit == "percent"
    values = [a.value if q.metric is not None or not points else a.value / 100 for a in per_year]
    moves = [b - a if points else (b - a) / abs(a) if a else 0.0 for a, b in itertools.pairwise(values)]
    largest = max(abs(m) for m in moves)
    move_unit = "percentage points" if points else "percent"
    zh = language == "zh"
    series = tuple(entry for a in per_year for entry in a.series)
    shown = [f"{series[0][0]} {series[0][1]}"] + [
        f"{period} {value} ({'+' if m >= 0 else '-'}{show_metric(abs(m), move_unit)})"
        for (period, value, _), m in zip(series[1:], moves, strict=True)
    ]
    used: list[Fact] = []  # facts are unhashable (a dict field): kept once each, in order
    for f in (f for a in per_year for f in a.used):
        if f not in used:
            used.append(f)
    holds = None if not q.bound else largest <= q.bound + 1e-9
    name = _metric_name(q.metric, zh) if q.metric is not None else per_year[-1].used[-1].label
    most = show_metric(largest, move_unit)
    if zh:
        yes_no = "" if holds is None else "是。" if holds else "否。"
        bound = f"（问题所给上限：{show_metric(q.bound, move_unit)}）" if q.bound else ""
        lead = f"{yes_no}{name}逐年变动最多{most}{bound}：{'；'.join(shown)} {_cites(used, cite)}。"
    else:
        yes_no = "" if holds is None else "Yes. " if holds else "No. "
        bound = f" (the question's bound: {show_metric(q.bound, move_unit)})" if q.bound else ""
        lead = f"{yes_no}{name} moved by at most {most} from one year to the next{bound}: {'; '.join(shown)}"
        lead += f" {_cites(used, cite)}."
    formula = per_year[-1].formula
    words = LINE_WORDS["zh" if zh else "en"]
    figures = "; ".join(f"{f.label} ({f.period.label()}) {amount_text(f.amount, f)} [{cite(f)}]" for f in used)
    steps = tuple(step for a in per_year for step in a.steps)
    formula_line = [f"{words['formula']}{formula}"] if q.metric is not None else []
    text = "\n".join([lead, *formula_line, *steps, f"{words['figures']}{figures}"])
    return FactAnswer(largest, move_unit, text, formula, tuple(used), steps, metric=True, series=series)


def _concept_answer(q: FigureQuestion, facts: Sequence[Fact], cite: Cite, language: str) -> FactAnswer | FactMiss:
    picked: list[Fact] = []
    for year in q.years:
        found = _find(facts, q.concept, year, q.quarter, fall_back=True)
        if isinstance(found, Conflict):
            return FactMiss("conflict", _conflict_text(found, language), found.facts)
        if found is None:
            return FactMiss("missing", f"{q.concept} {year}")
        picked.append(found)
    last = picked[-1]
    info = CONCEPTS.get(q.concept)
    if info is not None and info.sign < 0:
        # An outflow ("Dividends paid (389)") is asked as an amount paid.
        picked = [replace(f, value=abs(f.value)) for f in picked]
        last = picked[-1]
    if q.aggregate == "average" and len(picked) > 1:
        value = sum(f.amount for f in picked) / len(picked)
        formula = "(" + " + ".join(_show(f, cite) for f in picked) + f") / {len(picked)}"
    elif q.aggregate == "change" and len(picked) > 1:
        value = picked[-1].amount - picked[0].amount
        formula = f"{_show(picked[-1], cite)} - {_show(picked[0], cite)}"
    else:
        value = last.amount
        formula = _show(last, cite)
    shown = asked_amount(value, last, q.scale, language)
    name = last.label
    period = " - ".join(f.period.label() for f in picked) if len(picked) > 1 else last.period.label()
    if language == "zh":
        # A Chinese question about an English filing: the line item's Chinese name, the printed label after.
        if info is not None and info.zh and not re.search(r"[\u4e00-\u9fff]", name):
            name = f"{info.zh[0]}（{name}）"
        text = f"{name}（{period}）：{shown} {_cites(picked, cite)}。"
    else:
        text = f"{name} ({period}): {shown} {_cites(picked, cite)}."
    if len(picked) > 1:
        text += f" {formula}"
    steps = (f"= {formula}",) if len(picked) > 1 else ()
    series = tuple((f.period.label(), amount_text(f.amount, f), f.amount) for f in picked)
    return FactAnswer(value, last.unit, text, formula, tuple(picked), steps, series=series)


def _metric_answer(
    q: FigureQuestion, metric: Metric, facts: Sequence[Fact], cite: Cite, language: str
) -> FactAnswer | FactMiss:
    results: list[tuple[int, Computed]] = []
    used: list[Fact] = []
    for year in q.years:
        lookup = _Lookup(facts, year, q.quarter)
        computed = compute(metric, lookup)
        if lookup.conflicts and computed is None:
            return FactMiss("conflict", _conflict_text(lookup.conflicts[0], language), lookup.conflicts[0].facts)
        if computed is None:
            missing = ", ".join(f"{c} {y}" for c, y in lookup.missing) or metric.id
            return FactMiss("missing", missing)
        if metric.unit == "currency" and lookup.scale:
            computed = replace(computed, value=computed.value * lookup.scale)  # back to base units
        results.append((year, computed))
        used.extend(f for f in lookup.used if f not in used)
    values = [c.value for _, c in results]
    if q.aggregate == "average" and len(values) > 1:
        value = sum(values) / len(values)
        how = f"average of {', '.join(_metric_value(v, metric.unit) for v in values)}"
    elif q.aggregate == "change" and len(values) > 1:
        value = values[-1] - values[0]
        how = f"{_metric_value(values[-1], metric.unit)} - {_metric_value(values[0], metric.unit)}"
    else:
        value = values[-1]
        how = ""
    years = "-".join(str(y) for y, _ in results) if len(results) > 1 else str(results[-1][0])
    zh = language == "zh"
    name = _metric_name(metric, zh)
    unit = "percentage points" if q.aggregate == "change" and metric.unit == "percent" else metric.unit
    if unit == "currency" and used:
        shown = asked_amount(value, used[0], q.scale, language)
    else:
        shown = _metric_value(value, unit, used[0] if used else None)
    period = f"Q{q.quarter} {years}" if q.quarter else f"FY{years}"
    words = LINE_WORDS["zh" if zh else "en"]
    if zh:
        lines = [f"{name}（{period}）：{shown} {_cites(used, cite)}。"]
    else:
        lines = [f"{name} {period}: {shown} {_cites(used, cite)}."]
    lines.append(f"{words['formula']}{metric.description}")
    steps = [f"= {computed.formula}" for _, computed in results]
    if how:
        steps.append(f"{q.aggregate.title()}: {how} = {shown}")
    lines.extend(steps)
    figures = "; ".join(f"{f.label} ({f.period.label()}) {amount_text(f.amount, f)} [{cite(f)}]" for f in used)
    lines.append(f"{words['figures']}{figures}")
    text = "\n".join(lines)
    series = tuple(
        (
            f"Q{q.quarter} FY{y}" if q.quarter else f"FY{y}",
            _metric_value(c.value, metric.unit, used[0] if used else None),
            c.value,
        )
        for y, c in results
    )
    return FactAnswer(value, unit, text, metric.description, tuple(used), tuple(steps), metric=True, series=series)


def _metric_name(metric: Metric, zh: bool) -> str:
    name = (metric.zh[0] if zh and metric.zh else metric.en[0]) if (metric.en or metric.zh) else metric.id
    return name[:1].upper() + name[1:]


def _cites(facts: Sequence[Fact], cite: Cite) -> str:
    seen: list[int] = []
    for f in facts:
        n = cite(f)
        if n not in seen:
            seen.append(n)
    return "".join(f"[{n}]" for n in seen)


def _show(fact: Fact, cite: Cite) -> str:
    return f"{amount_text(fact.amount, fact)} ({fact.period.label()}) [{cite(fact)}]"


def amount_text(amount: float, like: Fact) -> str:
    """An amount in the scale its table states: "USD 177,866 million", "6.15 per share", "21.4 %"."""
    if like.unit == "percent":
        return f"{amount:,.2f} %".replace(".00 %", " %")
    if like.unit == "per_share":
        return f"{like.currency + ' ' if like.currency else ''}{amount:,.2f} per share"
    scale = like.scale if like.scale > 0 else 1.0
    value = amount / scale
    word = multiplier_word(scale)
    digits = _digits(value)
    unit = "shares" if like.unit == "shares" else (like.currency or "")
    if like.unit == "shares":
        return f"{digits} {word} shares".replace("  ", " ")
    if word in ("万", "亿"):
        return f"{digits}{word}{'元' if unit == 'CNY' else ' ' + unit}".strip()
    return " ".join(p for p in (unit, digits, word) if p)


def asked_amount(amount: float, like: Fact, scale: float, language: str = "en") -> str:
    """amount_text in the scale the question asks for (FigureQuestion.scale), the statement's own figure
    after it: "USD 0.39 billion (USD 389 million as reported)". As printed when no scale is asked, the
    figure is not an amount of money, or the asked scale would show it as 0."""
    printed = amount_text(amount, like)
    if not scale or like.unit != "currency" or scale == like.scale or abs(amount / scale) < 0.01:
        return printed
    asked = amount_text(amount, replace(like, scale=scale))
    return f"{asked}（报表数：{printed}）" if language == "zh" else f"{asked} ({printed} as reported)"


def _digits(value: float) -> str:
    """As a statement prints it: thousands separators, up to two decimals, no trailing zeros."""
    text = f"{value:,.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _metric_value(value: float, unit: str, like: Fact | None = None) -> str:
    if unit == "currency" and like is not None:
        return amount_text(value, like)
    return show_metric(value, unit)


def _conflict_text(conflict: Conflict, language: str) -> str:
    name = CONCEPTS[conflict.concept].en[0] if conflict.concept in CONCEPTS else conflict.concept
    values = "; ".join(f"{amount_text(f.amount, f)} ({f.label}, page {f.page})" for f in conflict.facts[:4])
    if language == "zh":
        return f"知识库中 {conflict.year} 年的 {name} 有不同的数值：{values}。"
    return f"The knowledge base holds different values for {name} in {conflict.year}: {values}."
