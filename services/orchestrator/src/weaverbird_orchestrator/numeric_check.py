"""Checks that every figure in an answer appears in the passages it cites (plain logic, no gRPC).

A small model copies numbers well but sometimes invents or misplaces one, and a wrong figure is the
costliest error a financial answer can make. The check is deliberately lenient about form and strict
about value: "1,284.6", "1284.6" and "USD 1,284.6 million" all match a passage's "1,284.6", and
"1.28 billion" matches "1,284.6 million" (it is that value rounded to the answer's precision), but
"1.2 billion" does not; and a scale word the answer names must agree with the scale the passage states
("612.4亿" is not "612.4 million", whose digits it shares). Magnitudes are compared without sign, since a
sign is as often carried by words ("a loss of 1,234", "down 3.2%") as by a minus or accounting parentheses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from weaverbird_common.wire_texts import INSUFFICIENT as INSUFFICIENT  # re-exported: the refusal the check writes

from weaverbird_orchestrator.citations import cited_numbers

AnswerCheck = Literal["supported", "unsupported", "no_numbers", "refused"]

# Full-width forms a Chinese answer may use, mapped one character to one so spans stay aligned with
# the text as written: digits, ．％＄（）－［］, the ideographic space, 【】, the minus sign, odd spaces.
_WIDE = {0xFF10 + i: ord("0") + i for i in range(10)}
_WIDE.update({ord(a): ord(b) for a, b in zip("．％＄（）－［］【】−\u3000\u00a0\u202f", ".%$()-[][]-   ", strict=True)})

_SCALE_WORDS = {
    "trillion": 1e12, "tn": 1e12, "trn": 1e12,
    "billion": 1e9, "bn": 1e9, "bln": 1e9, "b": 1e9,
    "million": 1e6, "mn": 1e6, "mln": 1e6, "m": 1e6,
    "thousand": 1e3, "k": 1e3,
    "万亿": 1e12, "千亿": 1e11, "百亿": 1e10, "亿": 1e8,
    "千万": 1e7, "百万": 1e6, "十万": 1e5, "万": 1e4, "千": 1e3,
}  # fmt: skip

# Currency codes a figure or a table unit may carry ("USD 1,284.6", "(RMB million)").
_CURRENCY_CODES = "USD|HKD|RMB|CNY|EUR|GBP|JPY"
_MENTION = re.compile(
    r"(?P<sign>-(?=(?:[$¥￥€£]\s?)?\d))?"  # glued to the number: "- 5%" is a bullet
    rf"(?P<cur>(?:(?:US|HK|NT|S|A|C)?\$|[¥￥€£]|(?:{_CURRENCY_CODES})(?![A-Za-z]))\s?)?"
    r"(?P<num>(?<![\d.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?!\d)"
    r"(?:\s?(?P<pct>%|(?i:percentage points?|percent|per cent|pct)(?![A-Za-z])|个百分点|百分点)"
    r"|\s?(?P<scale>(?i:trillion|billion|million|thousand|trn|tn|bln|bn|mln|mn|[bmk])s?)(?![A-Za-z])"
    r"|(?P<zscale>万亿|千亿|百亿|亿|千万|百万|十万|万|千))?"
    r"(?P<unit>(?i:bps|bp|x)(?![A-Za-z]))?"
)
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)"
)
# Spans that hold digits but no figure; blanked (same length) before reading the answer.
_NOT_FIGURES = re.compile(
    r"[\[]\s*\d+(?:\s*[,，、\-–]\s*\d+)*\s*\]"  # citation markers [1], [2, 3], [1-3]
    r"|(?m:^[ \t]*(?:[-*•][ \t]*)?\(?\d{1,2}[.)、](?!\d))"  # list ordinals "1." "2)" "3、" at a line start
    r"|https?://\S+"
    r"|\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"  # 2024-03-15, 03/15/2024
    r"|\d{1,2}\s?月(?:\s?\d{1,2}\s?[日号])?|\d{1,2}\s?[日号]"  # 12月31日
    rf"|\b{_MONTH}\.?\s\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s{_MONTH}\b"  # December 31, 31 Dec
    r"|第\s?\d\s?季度?"  # 第3季度: a quarter's name
)
# A passage whose table states its unit ("in millions", "(USD million)", "单位：万元") also supports bare
# figures scaled by it.
_UNIT_CURRENCY = rf"(?:(?:{_CURRENCY_CODES}|US\$|\$)\s?)?"
_TABLE_UNIT = re.compile(
    rf"(?i:\bin {_UNIT_CURRENCY}(thousands|millions|billions)\b"
    rf"|\((?:in )?{_UNIT_CURRENCY}(thousand|million|billion)s?\))"
    r"|单位[:：]\s*(千万|百万|万|亿|千)"
)


# A table unit that leaves its percentages bare: "(in millions, except per share data and percentages)".
_EXCEPT_PERCENT = re.compile(r"(?i:\bexcept\b[^.\n]{0,60}?(?:percent|%|ratio|margin))")


@dataclass(frozen=True, slots=True)
class Figure:
    """One number as written, with its magnitude without and with its scale word."""

    text: str
    raw: float  # signed, scale not applied: "(1,234)" -> -1234.0, "5.1 billion" -> 5.1
    scale: float  # 1e9 for "billion", 1e8 for 亿, 1.0 without a scale word
    decimals: int  # digits shown after the point: the precision the writer claimed
    percent: bool = False

    @property
    def value(self) -> float:
        return self.raw * self.scale


@dataclass(frozen=True, slots=True)
class NumericCheck:
    """Outcome of checking one answer; `unsupported` lists figures as the answer wrote them."""

    checked: tuple[str, ...]
    unsupported: tuple[str, ...]
    cited: bool  # False: the answer cited nothing, so it was checked against every passage given

    @property
    def result(self) -> AnswerCheck:
        if not self.checked:
            return "no_numbers"
        return "unsupported" if self.unsupported else "supported"


def _normalise(text: str) -> str:
    return text.translate(_WIDE)


@dataclass(frozen=True, slots=True)
class _Found:
    figure: Figure
    start: int
    end: int
    plain: bool  # no currency, scale, percent, decimals or separators: could be a year


def _find(text: str) -> list[_Found]:
    """Every number in `text` (already normalised) with its span; nothing is skipped."""
    found = []
    for m in _MENTION.finditer(text):
        num = m.group("num")
        word = (m.group("scale") or m.group("zscale") or "").lower()
        scale = _SCALE_WORDS.get(word) or _SCALE_WORDS.get(word.removesuffix("s"), 1.0)
        start, end = m.start(), m.end()
        negative = bool(m.group("sign"))
        if negative and start > 0 and text[start - 1].isalnum():
            negative, start = False, start + 1  # a range or a code (2023-2024), not a minus
        percent = bool(m.group("pct"))
        if 0 < start and text[start - 1] == "(" and text[end : end + 1] == ")" and scale == 1.0:
            negative, start, end = True, start - 1, end + 1  # accounting negative: (1,234)
            if after := re.match(r"\s?%", text[end:]):  # a negative percentage as 10-Ks print it: (13.6)%
                percent, end = True, end + after.end()
        raw = float(num.replace(",", ""))
        decimals = len(num.partition(".")[2])
        plain = not (m.group("cur") or percent or m.group("unit") or word or decimals or "," in num)
        figure = Figure(text[start:end], -raw if negative else raw, scale, decimals, percent)
        found.append(_Found(figure, start, end, plain))
    return found


def _is_figure(text: str, found: _Found) -> bool:
    """False for years and for numbers glued to letters (FY2024, Q3, H1, 3Q24, 2nd, 10-K, COVID-19)."""
    if re.search(r"[A-Za-z]-?$", text[: found.start]) or re.match(r"[A-Za-z]|-[A-Z]\b", text[found.end :]):
        return False
    return not (found.plain and 1990 <= abs(found.figure.raw) <= 2100)


@dataclass(frozen=True, slots=True)
class Mention:
    """A number in an answer with its span, and whether it is a figure (not a year, marker or name)."""

    start: int
    end: int
    figure: bool


def mentions(answer: str) -> list[Mention]:
    """Every number of `answer` with its span; citation markers, ordinals and dates are not numbers here.
    Spans line up with the answer as written: normalising maps one character to one."""
    text = _NOT_FIGURES.sub(lambda m: " " * len(m.group(0)), _normalise(answer))
    return [Mention(f.start, f.end, _is_figure(text, f)) for f in _find(text)]


def placed_figures(answer: str) -> list[tuple[Figure, int, int]]:
    """The answer's figures with their spans (as written: normalising maps one character to one)."""
    text = _NOT_FIGURES.sub(lambda m: " " * len(m.group(0)), _normalise(answer))
    return [
        (
            Figure(answer[f.start : f.end], f.figure.raw, f.figure.scale, f.figure.decimals, f.figure.percent),
            f.start,
            f.end,
        )
        for f in _find(text)
        if _is_figure(text, f)
    ]


def answer_figures(answer: str) -> list[Figure]:
    """The figures of an answer: numbers except citation markers, ordinals, years, dates and names."""
    return [figure for figure, _, _ in placed_figures(answer)]


@dataclass(frozen=True, slots=True)
class _Evidence:
    """A number of a passage: its magnitude as written and scaled, and whether the passage says its scale."""

    raw: float
    value: float
    scale_known: bool  # a scale word, a table unit, or the same number written with a scale word elsewhere
    # May be read as a percentage: written as one ("13.6%", "62.4 %"), or a bare number whose scale the
    # passage leaves open or whose table unit excepts percentages ("in millions, except percentages").
    percent: bool = False


def _table_units(text: str) -> list[tuple[int, float]]:
    """(where, scale) of each table unit a normalised passage states: "in millions", "单位：万元"."""
    return [
        (m.start(), _SCALE_WORDS[next(g for g in m.groups() if g).lower().removesuffix("s")])
        for m in _TABLE_UNIT.finditer(text)
    ]


def _evidence(passage: str) -> list[_Evidence]:
    """Every number in a passage, table units applied too."""
    text = _normalise(passage)
    units = [scale for _, scale in _table_units(text)]
    found = _find(text)
    excepts_percent = bool(_EXCEPT_PERCENT.search(text))
    # "Revenue: USD 612.4 million" and, in the same passage, a table cell "612.4": the same amount.
    scaled = {abs(f.figure.raw) for f in found if f.figure.scale != 1.0}
    out = []
    for f in found:
        raw = abs(f.figure.raw)
        known = f.figure.scale != 1.0 or bool(units) or raw in scaled
        percent = f.figure.percent or not known or (excepts_percent and f.figure.scale == 1.0)
        out.append(_Evidence(raw, abs(f.figure.value), known, percent))
        if f.figure.scale == 1.0:
            out.extend(_Evidence(raw, raw * unit, True) for unit in units)
    return out


def stated_scales(figure: Figure, passage: str) -> set[float]:
    """The scales at which `passage` states `figure`'s digits: a scale word written beside them ("1,824
    million"), else the last table unit line above them ("in millions"), else 1.0 (a number above any unit
    line, or in a passage with none, may be a count). Empty when the digits are not in the passage."""
    text = _normalise(passage)
    units = _table_units(text)
    scales: set[float] = set()
    for f in _find(text):
        if f.figure.percent or not math.isclose(abs(f.figure.raw), abs(figure.raw), rel_tol=1e-9):
            continue
        above = [unit for start, unit in units if start < f.start]
        scales.add(f.figure.scale if f.figure.scale != 1.0 else above[-1] if above else 1.0)
    return scales


def _supported(figure: Figure, evidence: Sequence[_Evidence]) -> bool:
    """The value matches at the answer's precision; or the digits match a number whose scale the passage
    leaves open, unless the answer names a scale ("612.4亿" against "612.4 million" is a hundredfold error).
    A percentage is not an amount: "966%" is not supported by a sales figure of 966 in a table "in
    millions", only by a percentage or by a bare number that may be one (_Evidence.percent)."""
    if figure.percent:
        evidence = [e for e in evidence if e.percent]
    raw, value = abs(figure.raw), abs(figure.value)
    # Half a unit in the last shown digit, at the answer's scale: "1.28 billion" covers 1.275-1.285 bn.
    tolerance = 0.5 * 10.0**-figure.decimals * figure.scale * (1 + 1e-9)
    digits_suffice = figure.scale == 1.0
    return any(
        abs(value - e.value) <= tolerance
        or (math.isclose(raw, e.raw, rel_tol=1e-9) and (digits_suffice or not e.scale_known))
        for e in evidence
    )


def check_answer(answer: str, passages: Sequence[str]) -> NumericCheck:
    """Checks the answer's figures against the passages it cites by [n] (numbered from 1 in `passages`);
    when it cites none of them, against all of them, with `cited` False."""
    cited = sorted(n for n in cited_numbers(_normalise(answer)) if 1 <= n <= len(passages))
    sources = [passages[n - 1] for n in cited] if cited else list(passages)
    evidence = [e for passage in sources for e in _evidence(passage)]
    checked, unsupported = [], []
    for figure in answer_figures(answer):
        checked.append(figure.text)
        if not _supported(figure, evidence) and figure.text not in unsupported:
            unsupported.append(figure.text)
    return NumericCheck(tuple(checked), tuple(unsupported), bool(cited))


# A run of citation markers after a claim: "[2][3]", " [1]", "【2】".
MARKER_RUN = re.compile(r"(?:\s*\[\s*\d+(?:\s*[,\-–]\s*\d+)*\s*\])+")


def recite(answer: str, passages: Sequence[str], editable_from: int = 0) -> str | None:
    """The answer with each citation run pointed at a passage that holds the figures it follows, when the
    model cited the wrong one ("1.87% [2][3]" with 1.87% in passage 1 becomes "1.87% [1]").

    A small model often copies the right figure and cites its neighbour; withholding such an answer loses
    a right figure, keeping it shows a wrong source. Only citation markers change, never words or figures.
    None when a figure is in no passage at all, when a marker to change starts before `editable_from`
    (already shown to the user), or when the result would still not pass check_answer.
    """
    text = _normalise(answer)
    evidence = [_evidence(p) for p in passages]
    figures = placed_figures(answer)
    out, last, cursor = [], 0, 0
    for run in MARKER_RUN.finditer(text):
        claimed = [f for f, start, _ in figures if cursor <= start < run.start()]
        cursor = run.end()
        cited = [n for n in cited_numbers(run.group()) if 1 <= n <= len(passages)]
        if not claimed or all(any(_supported(f, evidence[n - 1]) for n in cited) for f in claimed):
            continue
        holders = [i for i, ev in enumerate(evidence, start=1) if all(_supported(f, ev) for f in claimed)]
        if not holders or run.start() < editable_from:
            return None
        lead = run.group()[: len(run.group()) - len(run.group().lstrip())]
        out.append(answer[last : run.start()] + f"{lead}[{holders[0]}]")
        last = run.end()
    fixed = "".join(out) + answer[last:]
    if fixed == answer or check_answer(fixed, passages).result == "unsupported":
        return None
    return fixed
