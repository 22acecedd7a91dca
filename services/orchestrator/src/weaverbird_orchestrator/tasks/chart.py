"""Chart data (TASK_ANALYSIS): the model copies labels and figures, code builds and checks the chart.

The model writes categories and, per series, the figures as written ("1,284.6", "12.8亿元") with the
passage they come from. Code then reads each figure (scale words included) and puts a series on one
scale, keeps only values found in the passage the series cites (a value found in another passage
re-points the citation; one found nowhere drops its category, reported), and picks the chart type: the
one the question names ("pie chart", "饼图", "趋势"), else from the data: periods -> line, shares of a
whole -> pie, anything else -> bar. Periods are put in time order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from weaverbird_orchestrator.domain import Example, Passage
from weaverbird_orchestrator.numeric_check import Figure, answer_figures, mentions
from weaverbird_orchestrator.outcomes import ChartSeries, ChartSpec
from weaverbird_orchestrator.tasks.extraction import first_json_object
from weaverbird_orchestrator.tasks.grounding import (
    in_labelled_row,
    names,
    number_text,
    short,
    stated_with,
    table_rows,
    unsupported_figures,
)
from weaverbird_orchestrator.tasks.llm import Generator, complete

CHART_TYPES = ("bar", "line", "pie")
MAX_CATEGORIES = 40
MIN_CATEGORIES = 2  # one bar or one point is a figure, not a chart


@dataclass(frozen=True)
class ChartOutcome:
    spec: ChartSpec | None  # None: no chart could be built from the output (see errors)
    errors: tuple[str, ...] = ()  # problems: values dropped, or why there is no chart
    notes: tuple[str, ...] = ()  # adjustments that keep the data as written (type, order, scale, citation)
    repaired: bool = False
    attempts: int = 1
    raw: str = ""  # the model's last output


# ---------------------------------------------------------------------------------------------
# Chart type
# ---------------------------------------------------------------------------------------------

_NAMED_TYPE = (
    ("pie", re.compile(r"(?i)\bpie\b|\bdonut\b|\bdoughnut\b|饼图|饼状图|扇形图|环形图")),
    ("line", re.compile(r"(?i)\bline\s*(?:chart|graph|plot)\b|\btrend|\bover time\b|折线|趋势|走势|曲线")),
    ("bar", re.compile(r"(?i)\bbar\b|\bcolumn\s*(?:chart|graph)\b|\bhistogram\b|柱状图|柱形图|条形图|直方图")),
)
_SHARE_WORDS = re.compile(
    r"(?i)\b(?:share|shares|proportion|composition|breakdown|mix|split|allocation|weight|weights)\b"
    r"|占比|比例|比重|构成|结构|份额|分布|配置"
)
_TOTAL = re.compile(r"(?i)^\s*(?:total|sum|overall|all)\b|合计|总计|总额|总量|全部")


def named_type(question: str) -> str | None:
    """The chart type the question asks for by name, if any."""
    for chart_type, pattern in _NAMED_TYPE:
        if pattern.search(question):
            return chart_type
    return None


_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
_QUARTER = {"一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4}


def period_key(label: str) -> tuple[int, int] | None:
    """(year, position within the year) of a period label; None when the label is not a period.

    "2019", "FY2019", "2019年", "Q3 2020", "2020Q3", "2023年第三季度", "Jan 2021", "2021年3月", "H1 2022",
    "2022年上半年". A label without a year ("第三季度", "1月") gets year 0, so such labels still order.
    """
    text = label.strip().casefold()
    year_match = re.search(r"(?<!\d)(19\d\d|20\d\d)(?!\d)", text)
    year = int(year_match.group(1)) if year_match else 0
    rest = text.replace(year_match.group(1), " ", 1) if year_match else text
    rest = re.sub(r"\bfy\b|fy(?=\s|$)|fiscal|year|年度|年|[\s\-/.,()]+", " ", rest).strip()
    if not rest:
        return (year, 0) if year else None
    patterns: tuple[tuple[str, Any], ...] = (
        (r"^(?:q([1-4])|([1-4])q)$", lambda m: 3 * int(m.group(1) or m.group(2))),
        (r"^第?([一二三四1-4])季度?$", lambda m: 3 * _QUARTER[m.group(1)]),
        (r"^h([12])$|^([上下])半年?$", lambda m: 6 * (int(m.group(1)) if m.group(1) else 1 + (m.group(2) == "下"))),
        (r"^(1[0-2]|[1-9])月(?:份)?$", lambda m: int(m.group(1))),
        (
            r"^([a-z]{3})[a-z]*(?: \d{1,2})?$",
            lambda m: _MONTHS.index(m.group(1)) + 1 if m.group(1) in _MONTHS else None,
        ),
    )
    for pattern, position in patterns:
        m = re.match(pattern, rest)
        if m:
            value = position(m)
            return None if value is None else (year, value)
    return None


def choose_type(question: str, categories: Sequence[str], series: Sequence[ChartSeries]) -> tuple[str, str]:
    """(type, why): the question's named type, else periods -> line, shares of a whole -> pie, else bar."""
    named = named_type(question)
    pie_ok = len(series) == 1 and all(v >= 0 for v in series[0].values) and len(categories) >= 2
    if named == "pie" and not pie_ok:
        return "bar", "a pie was asked for, but the data is not one series of non-negative values"
    if named:
        return named, "named in the question"
    if len(categories) >= 2 and all(period_key(c) for c in categories):
        return "line", "the categories are periods"
    if pie_ok and not any(_TOTAL.search(c) for c in categories):
        if _SHARE_WORDS.search(question) or _SHARE_WORDS.search(series[0].name):
            return "pie", "the question asks for shares of a whole"
    return "bar", "categories are items, not periods or shares"


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class _Value:
    text: str  # what is checked against the passages
    raw: float  # as written, scale not applied
    scale: float | None  # None: a bare JSON number, taken as already in the chart's unit
    percent: bool
    label: str  # unit words around the figure: "亿元", "$", "%", "million"


def read_value(item: Any) -> _Value | None:
    """A chart value from a JSON number or a figure written as text ("$1,284.6", "12.8亿元", "5.6%")."""
    if isinstance(item, bool) or item is None:
        return None
    if isinstance(item, int | float):
        if not math.isfinite(item):
            return None
        return _Value(number_text(item), float(item), None, False, "")
    if not isinstance(item, str):
        return None
    figures: list[Figure] = answer_figures(item)
    if figures:
        figure = figures[0]
        written, raw, scale, percent = figure.text, figure.raw, figure.scale, figure.percent
    else:
        # A bare 1990-2100 reads as a year to numeric_check; as a chart value it is a figure ("2100" USD/t).
        numbers = [item[m.start : m.end] for m in mentions(item)]
        if not numbers:
            return None
        written, raw, scale, percent = numbers[0], float(numbers[0].replace(",", "")), 1.0, False
    number = _NUMBER.search(written)
    label = item.replace(number.group(0), " ", 1) if number else item
    label = " ".join(label.replace("(", " ").replace(")", " ").strip(" -−+~约").split())
    return _Value(item, raw, scale, percent, label)


def _on_one_scale(values: list[_Value]) -> tuple[list[float], str, str]:
    """The values on the most common scale among them, that scale's unit label, and a note if any moved."""
    scaled = [v for v in values if v.scale is not None]
    if not scaled:
        return [v.raw for v in values], "", ""
    counts = Counter(v.scale for v in scaled)
    target = max(counts, key=lambda s: (counts[s], s))
    label = Counter(v.label for v in scaled if v.scale == target).most_common(1)[0][0]
    moved = any(v.scale != target for v in scaled)
    out = [v.raw if v.scale in (None, target) else v.raw * v.scale / target for v in values]
    note = f"values put on one scale ({label or 'units'})" if moved else ""
    return out, label, note


def _cited(item: dict[str, Any], count: int) -> tuple[int, ...]:
    cited = item.get("passages", item.get("passage", ()))
    numbers = cited if isinstance(cited, list) else [cited]
    out = []
    for n in numbers:
        if isinstance(n, str) and n.strip().strip("[]").isdigit():
            n = int(n.strip().strip("[]"))
        if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= count and n not in out:
            out.append(n)
    return tuple(out)


def _holders(value: _Value, passages: Sequence[str]) -> list[int]:
    return [i for i, text in enumerate(passages, start=1) if not unsupported_figures(value.text, [text])]


# ---------------------------------------------------------------------------------------------
# From the model's output to a checked spec
# ---------------------------------------------------------------------------------------------


@dataclass
class _Build:
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def spec_from_output(text: str, question: str, passages: Sequence[str]) -> ChartOutcome:
    """Builds and checks a chart from one model output (no model call)."""
    log = _Build()
    parsed = first_json_object(text)
    log.notes += parsed.notes
    data = parsed.value
    if data is None:
        return ChartOutcome(None, ("the output holds no JSON object",), tuple(log.notes), raw=text)
    categories = [str(c).strip() for c in data.get("categories", []) or []] if isinstance(data, dict) else []
    raw_series = data.get("series", [])
    if isinstance(raw_series, dict):
        raw_series = [raw_series]
    if not raw_series and "values" in data:
        raw_series = [{"name": data.get("title", ""), "values": data["values"], "passage": data.get("passage")}]
    if not categories or not isinstance(raw_series, list) or not raw_series:
        return ChartOutcome(None, ("the output has no categories or no series",), tuple(log.notes), raw=text)
    if len(categories) > MAX_CATEGORIES:
        return ChartOutcome(None, (f"more than {MAX_CATEGORIES} categories",), tuple(log.notes), raw=text)

    kept, dropped = _series(raw_series, categories, passages, log)
    if not kept:
        return ChartOutcome(None, tuple(log.errors or ["no series with usable values"]), tuple(log.notes), raw=text)
    keep = [i for i in range(len(categories)) if i not in dropped]
    if len(keep) < MIN_CATEGORIES:
        log.errors.append(f"{len(keep)} of {len(categories)} categories left: too few for a chart")
        return ChartOutcome(None, tuple(log.errors), tuple(log.notes), raw=text)
    categories = [categories[i] for i in keep]
    series = [replace(s, values=tuple(s.values[i] for i in keep)) for s, _ in kept]
    unit = str(data.get("unit") or "").strip() or kept[0][1]

    keys = [period_key(c) for c in categories]
    if all(keys) and len(set(keys)) == len(keys) and keys != sorted(keys):  # type: ignore[type-var]
        order = sorted(range(len(categories)), key=lambda i: keys[i])  # type: ignore[arg-type,return-value]
        categories = [categories[i] for i in order]
        series = [replace(s, values=tuple(s.values[i] for i in order)) for s in series]
        log.notes.append("periods put in time order")
    chart_type, why = choose_type(question, categories, series)
    log.notes.append(f"{chart_type} chart: {why}")
    if chart_type == "pie":
        series = series[:1]
    title = str(data.get("title") or "").strip() or question.strip()[:80]
    spec = ChartSpec(
        type=chart_type,
        title=title,
        categories=tuple(categories),
        series=tuple(series),
        x_label=str(data.get("x_label") or "").strip(),
        y_label=str(data.get("y_label") or "").strip() or unit,
        unit=unit,
    )
    return ChartOutcome(spec, tuple(log.errors), tuple(log.notes), raw=text)


def _checked_value(
    value: _Value, category: str, name: str, categories: list[str], passages: Sequence[str]
) -> tuple[list[int], str]:
    """The passages holding a value, or why it cannot stand for this category and series."""
    where = _holders(value, passages)
    if not where:
        return [], "is not in the passages"
    if period_key(category) is None and not any(names(category, text) for text in passages):
        return [], "belongs to a category the passages do not name"
    if stated_with(category, value.text, passages, categories) is False:
        return [], "is not stated for this category"
    # When the category heads a column, the series names the row: the value must be in that row.
    labels_a_row = any(row and names(category, row[0]) for text in passages for row in table_rows(text))
    if not labels_a_row and in_labelled_row(name, value.text, passages) is False:
        return [], "is not in this series' row"
    return where, ""


def _series(
    raw_series: list[Any], categories: list[str], passages: Sequence[str], log: _Build
) -> tuple[list[tuple[ChartSeries, str]], set[int]]:
    """The usable series with their unit labels, and the category positions whose value is unsupported."""
    kept: list[tuple[ChartSeries, str, bool, set[int]]] = []
    for index, item in enumerate(raw_series, start=1):
        if not isinstance(item, dict):
            log.errors.append(f"series {index} is not an object")
            continue
        name = str(item.get("name") or "").strip() or f"series {index}"
        items = item.get("values")
        if not isinstance(items, list) or len(items) != len(categories):
            count = len(items) if isinstance(items, list) else 0
            log.errors.append(f'series "{name}" has {count} values for {len(categories)} categories')
            continue
        values = [read_value(v) for v in items]
        cited = _cited(item, len(passages))
        holders: set[int] = set()
        dropped: set[int] = set()
        problems: list[str] = []
        for position, (value, written) in enumerate(zip(values, items, strict=True)):
            at = f'"{short(name)}" / "{short(categories[position])}"'
            if value is None:
                problems.append(f"{at}: {written!r} is not a number; dropped")
                dropped.add(position)
                continue
            where, why = _checked_value(value, categories[position], name, categories, passages)
            if why:
                problems.append(f"{at}: {value.text} {why}; dropped")
                dropped.add(position)
            else:
                holders.update(set(where) & set(cited) or {where[0]})
        if len(dropped) == len(categories):
            # Nothing of it holds: the series goes, not the categories the other series fill.
            log.errors.append(f'series "{name}" dropped: none of its values is in the passages as stated')
            continue
        log.errors += problems
        usable = [v for v in values if v is not None]
        if len({v.percent for v in usable}) > 1:
            log.errors.append(f'series "{name}" mixes percentages and amounts')
            continue
        on_scale, unit, note = _on_one_scale(usable)
        scaled = iter(on_scale)
        numbers = [next(scaled) if v is not None else math.nan for v in values]  # NaN: category dropped
        if note:
            log.notes.append(f'"{name}": {note}')
        sources = tuple(sorted(holders))
        if cited and sources and sources != cited:
            log.notes.append(f'"{name}": citation re-pointed from {list(cited)} to {list(sources)}')
        percent = bool(usable) and usable[0].percent
        kept.append((ChartSeries(name, tuple(numbers), sources or cited), unit, percent, dropped))
    if kept and len({percent for _, _, percent, _ in kept}) > 1:
        first = kept[0]
        for series, _, percent, _ in kept[1:]:
            if percent != first[2]:
                log.errors.append(f'series "{series.name}" dropped: its unit differs from "{first[0].name}"')
        kept = [k for k in kept if k[2] == first[2]]
    dropped_anywhere = set().union(*(d for _, _, _, d in kept)) if kept else set()
    return [(series, unit) for series, unit, _, _ in kept], dropped_anywhere


# ---------------------------------------------------------------------------------------------
# The step
# ---------------------------------------------------------------------------------------------

_REPAIR = {
    "en": "Your previous output:\n{previous}\nIts problems:\n{problems}\nWrite the corrected JSON object.",
    "zh": "你上次的输出：\n{previous}\n其中的问题：\n{problems}\n请写出改正后的 JSON 对象。",
}
_PREVIOUS_CHARS = 800


async def chart_spec(
    generator: Generator,
    question: str,
    passages: list[Passage],
    language: str,
    examples: Sequence[Example] = (),
) -> ChartOutcome:
    """Chart data from the passages, checked; one repair call when the first output gives no chart or
    loses values."""
    texts = [p.text for p in passages]
    first = await complete(generator, "chart", question, passages, language, examples=examples)
    outcome = spec_from_output(first.text, question, texts)
    if outcome.spec is not None and not outcome.errors:
        return outcome
    # No chart, or values dropped: one repair call naming the problems; the better of the two is kept.
    instruction = _REPAIR["zh" if language == "zh" else "en"].format(
        previous=first.text.strip()[:_PREVIOUS_CHARS] or "(empty)",
        problems="\n".join(f"- {e}" for e in outcome.errors),
    )
    second = await complete(
        generator, "chart", question, passages, language, examples=examples, instruction=instruction
    )
    retried = spec_from_output(second.text, question, texts)
    if retried.spec is not None and _rank(retried) < _rank(outcome):
        return replace(retried, repaired=True, attempts=2)
    return replace(outcome, attempts=2)


def _rank(outcome: ChartOutcome) -> tuple[int, int, int]:
    """Lower is better: a chart over none, then more values kept, then fewer problems."""
    if outcome.spec is None:
        return (1, 0, len(outcome.errors))
    kept = len(outcome.spec.categories) * len(outcome.spec.series)
    return (0, -kept, len(outcome.errors))
