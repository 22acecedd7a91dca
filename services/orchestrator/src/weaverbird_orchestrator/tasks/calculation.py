"""Comparisons and calculations: the model copies the figures (each with its passage) and writes a
formula over their letters; code checks every figure is in the passage it names, brings them to one
scale, evaluates the formula and writes the answer with the figures, the formula and the citations.

The model's output format (weaverbird_common.calc_format; the generator's tasks/figures.py asks for it):
    A: revenue 2024 = USD 1,284.6 million [1]
    B: revenue 2023 = USD 1,102.9 million [1]
    Formula: (A - B) / B * 100
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing

from weaverbird_common.calc_format import (
    FigureLine,
    is_missing_line,
    parse_figures,
    read_figure_line,
    read_formula_line,
)

from weaverbird_orchestrator.domain import Example, Passage
from weaverbird_orchestrator.numeric_check import answer_figures, check_answer
from weaverbird_orchestrator.outcomes import CURRENCY, SCALE_NAMES, CalcFigure, CalculationOutcome
from weaverbird_orchestrator.tasks.formula import (
    FormulaError,
    divides,
    evaluate,
    is_percent_scaled,
    is_ratio,
    letters,
    normalise_formula,
    scales_by_100,
)
from weaverbird_orchestrator.tasks.llm import Generator


def parse_output(text: str) -> tuple[list[FigureLine], str]:
    """(letter, label, figure text, passage) per figure line, and the formula ("" when none)."""
    return parse_figures(text)


def _figure(letter: str, label: str, text: str, passage: int, passages: Sequence[str]) -> CalcFigure | str:
    """The figure read and checked against its passage, or why it cannot be used."""
    found = answer_figures(text)
    if len(found) != 1:
        return f"{letter} ({text!r}) is not one figure"
    if not 1 <= passage <= len(passages):
        return f"{letter} cites passage [{passage}], which was not given"
    if check_answer(f"{text} [1]", [passages[passage - 1]]).result != "supported":
        # The right figure with its neighbour's number (a small model's usual slip): cite the passage
        # that holds it, as the lookup path re-points citations; a figure in no passage is refused.
        holders = [i for i, p in enumerate(passages, start=1) if check_answer(f"{text} [1]", [p]).result == "supported"]
        if not holders:
            return f"{letter} = {text} is in no passage"
        passage = holders[0]
    f = found[0]
    return CalcFigure(letter, label, text, passage, f.raw, f.scale, f.percent)


def _value_key(f: CalcFigure) -> tuple[int, float, float, bool]:
    """What makes two figures the same number of the same passage."""
    return (f.passage, f.value, f.scale, f.percent)


def reused_figure(figures: Sequence[CalcFigure], formula: str) -> str:
    """Why the calculation reads one number of a passage as two items ("" when it does not): a small
    model asked for "2023 vs 2022" copies the one figure it found into both lines (A = B = 7.09亿元 [1],
    then a change of 0). Counting how often the passage states the number does not tell: news items
    repeat their headline figure. Two items with the very same figure in one passage are rare, and a
    refused calculation only means the question is answered as a lookup."""
    seen: dict[tuple[int, float, float, bool], str] = {}
    for f in figures:
        if f.letter not in letters(formula):
            continue
        key = _value_key(f)
        if key in seen:
            return f"{seen[key]} and {f.letter} are the same figure ({f.text}) of passage [{f.passage}]"
        seen[key] = f.letter
    return ""


def to_one_scale(figures: Sequence[CalcFigure]) -> tuple[dict[str, float], float, list[str]]:
    """Values per letter on one scale, that scale, and notes. Bare figures (a table "in millions") take
    the scale written on their siblings; figures in different scales are converted to the first one's."""
    scaled = [f.scale for f in figures if f.scale != 1.0 and not f.percent]
    target = scaled[0] if scaled else 1.0
    values, notes = {}, []
    for f in figures:
        scale = f.scale if f.scale != 1.0 or f.percent else target
        values[f.letter] = f.value * scale / target if not f.percent else f.value
        if scale != target:
            notes.append(f"{f.letter} converted to {SCALE_NAMES.get(target, 'units')}")
    return values, target, notes


def check_units(figures: Sequence[CalcFigure], formula: str) -> str:
    """Why the figures cannot be combined by this formula ("" when they can): a percentage added to or
    subtracted from an amount, an amount multiplied by 100 as if it were a ratio (a small model writes
    "(A + B + C) / 3 * 100" for an average), or amounts in different currencies."""
    used = [f for f in figures if f.letter in letters(formula)]
    percents = {f.percent for f in used}
    if len(percents) > 1 and not divides(formula):  # "A * B / 100" takes a percentage of an amount
        return "the formula adds or subtracts a percentage and an amount"
    if scales_by_100(formula) and not is_ratio(formula) and not all(f.percent for f in used):
        return "the formula multiplies an amount by 100: only a ratio of figures makes a percentage"
    currencies = {c.group(1).upper() for f in used if not f.percent and (c := CURRENCY.search(f.text))}
    currencies = {
        {"$": "USD", "US$": "USD", "美元": "USD", "元": "RMB", "CNY": "RMB", "￥": "RMB"}.get(c, c) for c in currencies
    }
    if len(currencies) > 1:
        return f"the figures are in different currencies ({', '.join(sorted(currencies))})"
    return ""


def _format(value: float) -> str:
    text = f"{value:,.2f}".rstrip("0").rstrip(".")
    return "0" if text in {"-0", ""} else text


def result_unit(figures: Sequence[CalcFigure], formula: str, scale: float) -> str:
    used = [f for f in figures if f.letter in letters(formula)] or list(figures)
    if is_percent_scaled(formula):
        return "%"
    if is_ratio(formula):
        return ""
    if all(f.percent for f in used):
        # A difference of percentages is in percentage points; a sum or an average is a percentage.
        return "percentage points" if "-" in normalise_formula(formula) else "%"
    amount = next((f for f in used if not f.percent), used[0])
    currency = CURRENCY.search(amount.text)
    return " ".join(x for x in (currency.group(1) if currency else "", SCALE_NAMES.get(scale, "")) if x)


def figures_header(language: str) -> str:
    return "数据：\n" if language == "zh" else "Figures:\n"


def figure_line(f: CalcFigure, language: str) -> str:
    """One figure as the answer shows it, with its citation."""
    if language == "zh":
        return f"{f.letter}（{f.label}）= {f.text} [{f.passage}]"
    return f"{f.letter} ({f.label}) = {f.text} [{f.passage}]"


def calculation_line(formula: str, result_text: str, language: str) -> str:
    return f"计算：{formula} = {result_text}" if language == "zh" else f"Calculation: {formula} = {result_text}"


def render(figures: Sequence[CalcFigure], formula: str, result_text: str, language: str) -> str:
    """The answer: each figure with its citation, the formula, the result computed in code."""
    lines = "\n".join(figure_line(f, language) for f in figures)
    return f"{figures_header(language)}{lines}\n{calculation_line(formula, result_text, language)}"


def compute(output: str, passages: Sequence[str], language: str) -> CalculationOutcome:
    """The calculation from the model's output, verified; `error` says why when there is none."""
    parsed, formula = parse_output(output)
    if not parsed:
        return CalculationOutcome(error="the model listed no figures", raw=output)
    if not formula:
        return CalculationOutcome(error="the model wrote no formula", raw=output)
    figures: list[CalcFigure] = []
    for letter, label, text, passage in parsed:
        checked = _figure(letter, label, text, passage, passages)
        if isinstance(checked, str):
            return CalculationOutcome(error=checked, raw=output, formula=formula)
        figures.append(checked)
    used = letters(formula)
    missing = sorted(used - {f.letter for f in figures})
    if missing:
        return CalculationOutcome(error=f"the formula uses {', '.join(missing)}, not given", raw=output)
    if problem := reused_figure(figures, formula) or check_units(figures, formula):
        return CalculationOutcome(figures=tuple(figures), formula=formula, error=problem, raw=output)
    values, scale, notes = to_one_scale(figures)
    try:
        result = evaluate(formula, values)
    except FormulaError as exc:
        return CalculationOutcome(figures=tuple(figures), formula=formula, error=str(exc), raw=output)
    unit = result_unit(figures, formula, scale)
    result_text = f"{_format(result)}{unit}" if unit == "%" else " ".join(x for x in (_format(result), unit) if x)
    shown = tuple(f for f in figures if f.letter in used)
    return CalculationOutcome(
        figures=shown,
        formula=formula,
        result=result,
        unit=unit,
        result_text=result_text,
        answer=render(shown, formula, result_text, language),
        raw=output,
        notes=tuple(notes),
    )


class FigureReader:
    """Reads the figures step's output as the model writes it and hands out each figure once it is checked
    against its passage, so a client sees the figures long before the formula (a small model on a CPU
    writes about 9 tokens a second). A figure is held until the next line shows it is not the first of
    the "one figure read as two items" slip (A = B = 7.09亿元 [1]: one of the two labels is wrong, so
    neither is shown). The reader stops at the first line that fails the check compute() applies, at a
    repeated figure, and at the end of the figures (the formula, "Missing: ..."). A failing line and
    "Missing" set `failure`: compute() over the whole output could only fail too, so the caller may stop
    the model there."""

    def __init__(self, passages: Sequence[str]) -> None:
        self._passages = passages
        self._pending = ""
        self._held: CalcFigure | None = None
        self._letters: set[str] = set()
        self._values: set[tuple[int, float, float, bool]] = set()
        self._stopped = False
        self.text = ""  # everything fed so far
        self.failure = ""  # why no calculation can verify, once a line shows it

    def feed(self, piece: str) -> list[CalcFigure]:
        """The figures that the lines this piece completes let out (often none)."""
        self.text += piece
        self._pending += piece
        *lines, self._pending = self._pending.split("\n")
        return [f for line in lines for f in self._read(line)]

    def finish(self) -> list[CalcFigure]:
        """What is left at the end of the output: the last line's figure and the one held."""
        line, self._pending = self._pending, ""
        return [*self._read(line), *self._release()]

    def _release(self) -> list[CalcFigure]:
        held, self._held = self._held, None
        return [held] if held is not None else []

    def _stop(self, release: bool) -> list[CalcFigure]:
        self._stopped = True
        out = self._release()
        return out if release else []

    def _read(self, line: str) -> list[CalcFigure]:
        if self._stopped or not line.strip():
            return []
        read = read_figure_line(line)
        if read is None:
            # The formula or "Missing: ..." ends the figures; other prose is skipped, as parse_output does.
            missing = is_missing_line(line)
            if missing:
                self.failure = f"the model found a figure missing ({line.strip()})"
            return self._stop(release=True) if missing or read_formula_line(line) is not None else []
        if read.letter in self._letters:
            return []  # parse_output keeps the first line of a letter
        checked = _figure(read.letter, read.label, read.text, read.passage, self._passages)
        if isinstance(checked, str):
            self.failure = checked
            return self._stop(release=True)  # the held figure was checked; this one fails on its own
        if _value_key(checked) in self._values:
            return self._stop(release=False)
        self._letters.add(checked.letter)
        self._values.add(_value_key(checked))
        out = self._release()
        self._held = checked
        return out


async def read_calculation(
    generator: Generator,
    question: str,
    passages: list[Passage],
    language: str,
    examples: Sequence[Example] = (),
) -> AsyncIterator[CalcFigure | CalculationOutcome]:
    """One model call for the figures and formula: yields each figure once it is verified, then the
    outcome of compute() over the whole output. A line that shows no calculation can verify ends the
    call there (the model stops writing; the caller's fallback starts seconds sooner) with that reason as
    the outcome. Never raises on bad model output."""
    texts = [f"{p.title}\n{p.heading}\n{p.text}" for p in passages]
    reader = FigureReader(texts)
    stream = generator.generate(question, passages, language, 0.0, 0, task="figures", examples=examples)
    async with aclosing(stream):  # closing it cancels the generator call
        async for item in stream:
            if isinstance(item, str):
                for figure in reader.feed(item):
                    yield figure
                if reader.failure:
                    break
    if reader.failure:
        yield CalculationOutcome(error=reader.failure, raw=reader.text)
        return
    for figure in reader.finish():
        yield figure
    yield compute(reader.text, texts, language)
