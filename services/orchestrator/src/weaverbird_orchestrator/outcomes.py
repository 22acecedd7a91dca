"""What the tasks beyond a lookup produce (tasks/calculation.py, tasks/extraction.py, tasks/chart.py):
plain types the answer's done event carries (events.TaskExtras) and servicer.py turns into protos.
They live here, below both the tasks and the events, so that nothing imports upward."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# A figure's currency as written, and the names of the scales figures are brought to.
CURRENCY = re.compile(r"(US\$|HK\$|\$|¥|￥|€|£|USD|HKD|RMB|CNY|EUR|GBP|JPY|元|美元|港元)")
SCALE_NAMES = {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion", 1e4: "万", 1e8: "亿"}


@dataclass(frozen=True)
class CalcFigure:
    letter: str
    label: str
    text: str  # as the model copied it from the passage
    passage: int
    value: float  # in units of `scale`
    scale: float
    percent: bool

    @property
    def unit(self) -> str:
        if self.percent:
            return "%"
        currency = CURRENCY.search(self.text)
        scale = SCALE_NAMES.get(self.scale, "")
        return " ".join(x for x in (currency.group(1) if currency else "", scale) if x)


@dataclass(frozen=True)
class CalculationOutcome:
    figures: tuple[CalcFigure, ...] = ()
    formula: str = ""
    result: float | None = None
    unit: str = ""
    result_text: str = ""
    answer: str = ""
    error: str = ""  # non-empty: no verified calculation (the reason)
    raw: str = ""  # the model's output as written
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class ExtractionOutcome:
    json: str  # the validated document (keys as requested); "" when nothing parsed
    value: Any  # the parsed object, or None
    valid: bool
    missing_keys: tuple[str, ...]
    errors: tuple[str, ...]  # why it is invalid
    repaired: bool  # the first output was invalid and the repair call fixed it
    keys: tuple[str, ...] = ()  # what was asked for
    notes: tuple[str, ...] = ()  # what was tolerated or dropped on the way (never a reason to distrust)
    null_keys: tuple[str, ...] = ()  # asked for, answered null: not in the passages
    attempts: int = 1
    raw: str = ""  # the model's last output as written


@dataclass(frozen=True)
class ChartSeries:
    """Mirrors proto ChartSeries: one value per category, and the passages (1-based) they come from."""

    name: str
    values: tuple[float, ...]
    passages: tuple[int, ...] = ()


@dataclass(frozen=True)
class ChartSpec:
    """Mirrors proto ChartSpec."""

    type: str  # "bar" | "line" | "pie"
    title: str
    categories: tuple[str, ...]
    series: tuple[ChartSeries, ...]
    x_label: str = ""
    y_label: str = ""
    unit: str = ""
