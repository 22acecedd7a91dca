"""Questions about a table's own rows, answered by matching the row label the question names.

Not every table holds standard line items ("Regional films (excluding Tamil films)", "Shares used in
diluted computation"). A question that names such a row and one or more of its periods is answered from
the row: its value, the change or percentage change between two periods, or the average over them. The
row is the one whose label's words the question holds best (row_names: all of its words, else most), read
with the heading it sits under and its defined short name; no model, and nothing when no row is named
clearly. Columns are named by year (a split year "2018/2019" is one), or by closing date when a year holds
several. Two rows combine as a sum, difference, mean or share; a standard metric the table does not print
comes from the metric library. Nothing is answered from a year whose side-by-side columns disagree, or for
a share's move asked of a table with no percent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from weaverbird_common.facts.cell_periods import period_in_cell
from weaverbird_common.facts.model import Fact
from weaverbird_common.facts.question import years_in
from weaverbird_common.facts.row_names import RowKey, best_label, label_words, row_key, with_headings
from weaverbird_common.finance.metrics import compute, metrics_in_text

# A relative move; "percentage difference" between two periods is one too. An "absolute percentage change"
# is the move in points of a row printed in percent (read as a change, below).
_PCT = re.compile(
    r"(?<!absolute )percent(?:age)? (?:change|increase|decrease|growth|difference)|% change|growth rate"
    r"|rate of change",
    re.IGNORECASE,
)
# A move between periods; "difference" also asks one (read first-named less second, see answer_row).
_CHANGE_WORD = re.compile(r"\bchange\b|\bincrease\b|\bdecrease\b|\bgrowth\b", re.IGNORECASE)
_DIFFERENCE = re.compile(r"\bdifference\b", re.IGNORECASE)
_CHANGE = re.compile(f"{_CHANGE_WORD.pattern}|{_DIFFERENCE.pattern}", re.IGNORECASE)
# "weighted-average shares" names a row, and "the change in the average X" is a change.
_AVERAGE = re.compile(
    r"(?<!weighted )(?<!weighted-)(?<!change in the )(?<!change in )\baverage\b|\bmean\b", re.IGNORECASE
)
_DECREASE = re.compile(
    r"\b(?:decrease|decline|fall|drop)(?:d|s)? by\b|\bhow much (?:did|has|have) .+? (?:decrease|decline|fall|drop)\b",
    re.IGNORECASE,
)
# A total over several periods ("total ... in 2018 and 2019", "sum of ... from 2017 to 2019", "altogether").
_SUM = re.compile(r"\b(?:total|sum|altogether|combined|in total|aggregate)\b", re.IGNORECASE)
_END = r"(?=\s+(?:in|for|as of|at|during)\s+(?:fy\s*)?(?:19|20)\d{2}|\s+in\s+(?:fiscal|the year)|\?|$)"
_RATIO = re.compile(rf"ratio of (?P<a>.+?) (?:to|and|against|over) (?P<b>.+?){_END}", re.IGNORECASE)
_SHARE = re.compile(
    rf"(?:percentage|proportion|share|portion) of (?P<b>.+?) (?:is|was|are|were) "
    rf"(?:made up of |attributable to |from )?(?P<a>.+?){_END}"
    rf"|(?P<a2>[\w ,'()&-]+?) as an? (?:percentage|proportion|share) of (?P<b2>.+?){_END}"
    rf"|(?:percentage|proportion) of (?P<a3>.+?) (?:over|to|in|of|out of) (?P<b3>(?:the )?total.+?){_END}"
    rf"|(?:percentage|proportion|share)(?: constitution)? of (?P<a4>.+?) (?:among|within|out of|over) "
    rf"(?P<b4>.+?){_END}",
    re.IGNORECASE,
)
_IN_PERCENT = re.compile(r"\s*\(in (?:percentage|percent|%)\)", re.IGNORECASE)
# A question relating two amounts: one row's value does not answer it.
_RELATION = re.compile(
    r"\bratio\b|\bproportion\b|\bportion of\b|\bpercentage (?:constitution )?of\b"
    r"|\bas an? (?:percentage|share|multiple) of\b",
    re.IGNORECASE,
)
# Two rows combined: "difference between A and B", "sum of A and B", "A and B combined".
_PAIR = re.compile(
    rf"\b(?:difference|gap) (?:in [\w ]+? )?between (?P<d>.+?){_END}"
    rf"|\b(?:sum|total) of (?P<s>.+? and .+?){_END}"
    rf"|(?:what (?:is|was|were) (?:the )?)(?P<c>.+? and .+?) combined{_END}",
    re.IGNORECASE,
)


K = TypeVar("K", int, str)  # a column: its fiscal year, or its closing date


@dataclass(frozen=True)
class RowAnswer:
    value: float
    unit: str  # "percent" for a percentage change, else the row's unit
    op: str
    used: tuple[Fact, ...]
    label: str


_YEAR_RATIO = re.compile(
    r"ratio of (?P<a>.+?) (?:in |for )?(?:fiscal |fy ?)?(?P<y1>(?:19|20)\d{2}) (?:to|and|against|over) "
    r"(?:fiscal |fy ?)?(?P<y2>(?:19|20)\d{2})\b",
    re.IGNORECASE,
)


def _year_ratio(question: str, facts: Sequence[Fact]) -> RowAnswer | None:
    """ "the ratio of X in fiscal 2019 to fiscal 2018": one row, the first year's value over the second's."""
    match = _YEAR_RATIO.search(question)
    if match is None:
        return None
    key = best_label(match.group("a"), facts)
    if key is None:
        return None
    row = _by_year([f for f in facts if row_key(f) == key])
    a, b = row.get(int(match.group("y1"))), row.get(int(match.group("y2")))
    if a is None or b is None or b.value == 0:
        return None
    return RowAnswer(a.value / b.value, "ratio", "ratio", (a, b), key[0])


def _fact_of(key: RowKey, facts: Sequence[Fact]) -> Fact:
    return next(f for f in facts if row_key(f) == key)


def _two_rows(question: str, facts: Sequence[Fact], years: list[int]) -> RowAnswer | None:
    """ "ratio of A to B", "A as a percentage of B", "percentage of B made up of A": A / B in one year (the
    latest the table holds when none is named). A
    part that names two rows ("the sum of A and B", "land and leasehold improvements") is their sum."""
    plain = _IN_PERCENT.sub("", question)  # "proportion (in percentage) of": the unit, not the words
    ratio = _RATIO.search(plain)
    share = None if ratio else _SHARE.search(plain)
    if not (ratio or share) or len(years) > 1:
        return None  # no year named: the table's latest period, as for a pair of rows
    match = ratio or share
    assert match is not None
    groups = {k: v for k, v in match.groupdict().items() if v}
    part = groups.get("a") or groups.get("a2") or groups.get("a3") or groups.get("a4")
    whole = groups.get("b") or groups.get("b2") or groups.get("b3") or groups.get("b4")
    if not part or not whole:
        return None
    in_year = _in_year(facts, years)
    a_key, b_key = best_label(part, in_year), best_label(whole, in_year)
    if a_key is None or b_key is None or a_key == b_key:
        return None
    parts = (_fact_of(a_key, in_year),)
    both = _split_two(re.sub(r"^(?:the )?sum of ", "", part, flags=re.I), in_year) if " and " in part else None
    # Two rows, when the wording sums them or the one row found is only one of them.
    if (
        both
        and b_key not in map(row_key, both)
        and (re.match(r"(?:the )?sum of ", part, re.I) or a_key in map(row_key, both))
    ):
        parts = both
    b = _fact_of(b_key, in_year)
    if b.value == 0:
        return None
    value = sum(f.value for f in parts) / b.value
    named = f"{' + '.join(f.label for f in parts)} / {b.label}"
    if ratio or (re.search(r"\bproportion\b", question, re.I) and not re.search(r"percent", question, re.I)):
        # A ratio, and a "proportion" not asked in percent, is a fraction (0.18), not 18 %.
        return RowAnswer(value, "ratio", "ratio", (*parts, b), named)
    return RowAnswer(value * 100, "percent", "share", (*parts, b), named)


def _split_two(span: str, in_year: Sequence[Fact]) -> tuple[Fact, Fact] | None:
    """Two different rows named by "A and B": split at the "and" that leaves both best named."""
    best: tuple[int, Fact, Fact] | None = None
    for cut in re.finditer(r"\s+and\s+", span):
        a_key, b_key = best_label(span[: cut.start()], in_year), best_label(span[cut.end() :], in_year)
        if a_key is None or b_key is None or a_key == b_key:
            continue
        hits = len(set(label_words(a_key[0])) & set(label_words(span))) + len(
            set(label_words(b_key[0])) & set(label_words(span))
        )
        if best is None or hits > best[0]:
            best = (hits, _fact_of(a_key, in_year), _fact_of(b_key, in_year))
    return best[1:] if best else None


def _in_year(facts: Sequence[Fact], years: list[int]) -> list[Fact]:
    """The facts of the one year named, else of the latest year the table holds."""
    year = years[0] if years else max((f.period.fiscal_year for f in facts), default=0)
    return [f for f in facts if f.period.fiscal_year == year]


def _pair(question: str, facts: Sequence[Fact], years: list[int]) -> RowAnswer | None:
    """A - B or A + B for two rows the question names in one period (the latest the table holds when no
    year is named)."""
    match = _PAIR.search(question)
    if match is None or len(years) > 1:
        return None
    op = "difference" if match.group("d") else "sum"
    found = _split_two(match.group("d") or match.group("s") or match.group("c"), _in_year(facts, years))
    if found is None:
        return None
    a, b = found
    value = a.value - b.value if op == "difference" else a.value + b.value
    sign = " - " if op == "difference" else " + "
    return RowAnswer(value, a.unit, op, (a, b), f"{a.label}{sign}{b.label}")


# "the average X of A and B in 2018": the mean of two rows in one year.
_AVERAGE_OF_TWO = re.compile(rf"(?<!weighted )(?<!weighted-)\baverage (?P<s>.+? and .+?){_END}", re.IGNORECASE)


def _average_of_two(question: str, facts: Sequence[Fact], years: list[int]) -> RowAnswer | None:
    match = _AVERAGE_OF_TWO.search(question)
    if match is None or len(years) > 1:
        return None
    found = _split_two(match.group("s"), _in_year(facts, years))
    if found is None:
        return None
    a, b = found
    return RowAnswer((a.value + b.value) / 2, a.unit, "average", (a, b), f"({a.label} + {b.label}) / 2")


def _named_first(question: str) -> int | None:
    """The year the question names first ("between 2019 and 2018" -> 2019)."""
    found = re.search(r"(?<!\d)((?:19|20)\d{2})(?!\d)", question)
    return int(found.group(1)) if found else None


def _default_years(question: str, row: dict[int, Fact]) -> list[int]:
    """No year named: the table's latest period for a value, its latest two for a change, all for an average."""
    held = sorted(row)
    if _AVERAGE.search(question):
        return held
    if _PCT.search(question) or _CHANGE.search(question):
        return held[-2:]
    return held[-1:]


def _by_year(row_facts: Sequence[Fact]) -> dict[int, Fact]:
    """A row's figure for each fiscal year its columns name: the first group's, when groups of columns
    repeat the years ("Domestic 2019 2018 | International 2019 2018"). Two side-by-side columns of one year
    with different figures (a balance and the year's net additions) name no one figure: that year is left out."""
    row: dict[int, Fact] = {}
    torn: set[int] = set()
    before: Fact | None = None
    for fact in row_facts:
        year = fact.period.fiscal_year
        if not year:
            continue
        row.setdefault(year, fact)
        if before and before.period.fiscal_year == year and before.value != fact.value and before.unit == fact.unit:
            torn.add(year)
        before = fact
    return {y: f for y, f in row.items() if y not in torn}


_MONTHS = "january february march april may june july august september october november december".split()
_MONTH = r"(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# "January 26, 2019", "July 27" and "30 June 2019": a column named by its closing date.
_DATE = re.compile(
    rf"\b{_MONTH} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<year>(?:19|20)\d{{2}}))?\b"
    rf"|\b(?P<day2>\d{{1,2}}) {_MONTH.replace('mon', 'mon2')} (?P<year2>(?:19|20)\d{{2}})\b",
    re.IGNORECASE,
)


def _dates_named(question: str, years: list[int]) -> list[str]:
    """The closing dates the question names, as "YYYY-MM-DD" in the order named; a date without its year
    takes the one year the question names ("the quarters ended July 27 and April 27 in 2019")."""
    out = []
    for m in _DATE.finditer(question):
        month = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith((m["mon"] or m["mon2"]).lower()))
        year = m["year"] or m["year2"] or (str(years[0]) if len(years) == 1 else "")
        if not year:
            return []
        out.append(f"{year}-{month:02d}-{int(m['day'] or m['day2']):02d}")
    return out


# A move of a share or a rate, which only a row printed in percent holds.
_OF_A_PERCENTAGE = re.compile(
    r"\b(?:change|increase|decrease|difference) in (?:the )?(?:percentage|proportion|share|%) of\b", re.IGNORECASE
)


def _compute(question: str, row: dict[K, Fact], cols: list[K], label: str, first: K | None) -> RowAnswer | None:
    """The value, average, sum, change or percentage change the wording asks of a row's named columns
    (cols in time order; first: the column the question names first)."""
    by_col = {c: f for c, f in row.items() if c in cols}
    if not by_col:
        return None
    unit = next(iter(by_col.values())).unit
    if _AVERAGE.search(question):
        used = [by_col[c] for c in cols if c in by_col]
        if len(used) != len(cols) or len(used) < 2:
            return None
        return RowAnswer(sum(f.value for f in used) / len(used), unit, "average", tuple(used), label)
    if len(cols) >= 2 and _SUM.search(question) and not (_PCT.search(question) or _CHANGE.search(question)):
        used = [by_col[c] for c in cols if c in by_col]
        if len(used) != len(cols):
            return None
        return RowAnswer(sum(f.value for f in used), unit, "sum", tuple(used), label)
    if _PCT.search(question) or _CHANGE.search(question):
        if len(cols) != 2 or len(by_col) != 2:
            return None
        old, new = by_col[min(cols)], by_col[max(cols)]
        if _PCT.search(question):
            if old.value == 0:
                return None
            return RowAnswer((new.value - old.value) / old.value * 100, "percent", "pct_change", (new, old), label)
        if _DECREASE.search(question):  # "how much did X decrease by": the fall, as a positive amount
            return RowAnswer(old.value - new.value, unit, "decrease", (new, old), label)
        if _DIFFERENCE.search(question) and not _CHANGE_WORD.search(question) and first == min(cols):
            # "the difference in X between 2018 and 2019" is the first named less the second.
            return RowAnswer(old.value - new.value, unit, "difference", (old, new), label)
        return RowAnswer(new.value - old.value, unit, "change", (new, old), label)
    if len(cols) == 1 and not _RELATION.search(question):
        fact = by_col[cols[0]]
        return RowAnswer(fact.value, unit, "value", (fact,), label)
    return None  # a ratio or a share of two rows not both found is not one row's value


# "The change between 2018 and 2019 average X": a move of average balances (not "the change in the average
# X", a row so named).
_AVERAGE_MOVE = re.compile(r"\b(?:change|increase|decrease|difference)\b.*\baverage\b", re.IGNORECASE)


def _average_move(question: str, row: dict[int, Fact], years: list[int], label: str) -> RowAnswer | None:
    """The change (or percentage change) from one year's average balance to another's, a year's average
    being the mean of its figure and the prior year's."""
    used = [row.get(y) for y in (years[0] - 1, years[0], years[1] - 1, years[1])]
    if any(f is None for f in used):
        return None
    v = [f.value for f in used if f is not None]
    old, new = (v[0] + v[1]) / 2, (v[2] + v[3]) / 2
    facts = tuple(f for f in used if f is not None)
    if _PCT.search(question):
        return None if old == 0 else RowAnswer((new - old) / old * 100, "percent", "pct_change", facts, label)
    return RowAnswer(new - old, used[0].unit if used[0] else "", "change", facts, label)


def _named_metric(question: str, facts: Sequence[Fact], years: list[int]) -> RowAnswer | None:
    """A standard metric the question names for one year ("the current ratio in 2019") that the table does
    not print as a row: computed by the metric library from the line items' concepts."""
    found = metrics_in_text(question)
    if not found or len(years) > 1 or _CHANGE.search(question) or _PCT.search(question) or _AVERAGE.search(question):
        return None
    metric = found[0]
    if any(re.search(rf"\b{re.escape(name)}", f.label, re.IGNORECASE) for f in facts for name in metric.en):
        return None  # the table prints it: its row answers
    year = years[0] if years else max((f.period.fiscal_year for f in facts), default=0)
    used: list[Fact] = []

    def lookup(concept: str, period: str) -> float | None:
        want = year - 1 if period == "t-1" else year
        values = {f.value for f in facts if f.concept == concept and f.period.fiscal_year == want}
        if len(values) != 1:
            return None  # missing, or two different figures: not this reader's to choose
        used.append(next(f for f in facts if f.concept == concept and f.period.fiscal_year == want))
        return values.pop()

    computed = compute(metric, lookup)
    if computed is None:
        return None
    value = computed.value * 100 if computed.unit == "percent" else computed.value
    return RowAnswer(value, computed.unit, metric.id, tuple(used), computed.formula)


# A split fiscal year ("2018/2019", "2018/19") is one year: the one a table's header of that form is read as.
_SPLIT_YEAR = re.compile(r"\b(?:19|20)\d{2}/(?:(?:19|20)?\d{2})\b")


def _one_year(match: re.Match[str]) -> str:
    period = period_in_cell(match.group(0), "other", None)
    return str(period.fiscal_year) if period else match.group(0)


def answer_row(question: str, facts: Sequence[Fact]) -> RowAnswer | None:
    facts = with_headings(facts)
    question = _SPLIT_YEAR.sub(_one_year, question)
    years = years_in(question)
    if (metric := _named_metric(question, facts, years)) is not None:
        return metric
    if (over_years := _year_ratio(question, facts)) is not None:
        return over_years
    if (two := _two_rows(question, facts, years)) is not None:
        return two
    if (two_rows := _average_of_two(question, facts, years)) is not None:
        return two_rows
    if _PCT.search(question) and _pair(question, facts, years) is not None:
        return None  # a percentage difference of two rows needs a base the wording does not name
    if (pair := _pair(question, facts, years)) is not None:
        return pair
    key = best_label(question, facts)
    if key is None:
        return None
    row_facts = [f for f in facts if row_key(f) == key]
    if _OF_A_PERCENTAGE.search(question) and not any(
        f.unit == "percent" for f in facts if f.table == row_facts[0].table
    ):
        return None  # "the change in the percentage of sales from APAC" of a table that prints no percent
    # Columns named by their closing dates ("the quarters ended January 26, 2019 and October 27, 2018"),
    # two or more of them, are read by date: a table may hold several columns of one year.
    dates = _dates_named(question, years)
    by_date = {f.period.end: f for f in reversed(row_facts) if f.period.end}
    if len(dates) >= 2 and all(d in by_date for d in dates):
        return _compute(question, by_date, sorted(dates), key[0], dates[0])
    row = _by_year(row_facts)
    if (
        len(years) == 2
        and _AVERAGE.search(question)
        and _AVERAGE_MOVE.search(question)
        and "average" not in key[0].lower()
    ):
        return _average_move(question, row, years, key[0])
    if not years:
        years = _default_years(question, row)
    elif len(years) == 1 and _AVERAGE.search(question) and not re.search(r"\bper\b", question, re.IGNORECASE):
        # "the 2019 average X": the mean of the year's and the prior year's figure (an average balance).
        years = [years[0] - 1, years[0]]
    elif _PCT.search(question) or _CHANGE.search(question):
        # "the change in X in 2019" is from the year before; "from 2017 to 2019" is between the two ends.
        years = [years[0] - 1, years[0]] if len(years) == 1 else [years[0], years[-1]]
    return _compute(question, row, years, key[0], _named_first(question))
