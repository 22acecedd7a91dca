"""Draws an answer's chart (AnswerDone.chart / AskResponse.chart) as a PNG with matplotlib's Agg canvas.

Accepts the proto ChartSpec or the orchestrator's ChartSpec dataclass alike: only the fields are read
(type, title, categories, series[name, values], x_label, y_label, unit). Chinese labels need a font with
CJK glyphs, which matplotlib's bundled DejaVu lacks: one is looked up among the system fonts
(Noto CJK, WenQuanYi, Source Han, Droid Sans Fallback ...) and used as a per-glyph fallback behind
DejaVu Sans. Without one the chart is still written, with boxes for the Chinese characters, and a
warning says so (`cjk_font()` tells callers in advance).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib import font_manager, ft2font
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

log = logging.getLogger(__name__)

_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
# File-name hints of common CJK fonts (Debian/Ubuntu packages, macOS, Windows), most preferred first.
_CJK_FONT_HINTS = (
    "notosanscjk",
    "notosanssc",
    "sourcehansans",
    "wqy-microhei",
    "wqy-zenhei",
    "droidsansfallback",
    "notoserifcjk",
    "pingfang",
    "hiragino",
    "msyh",
    "simhei",
    "uming",
    "ukai",
)
_MAX_FONTS_SCANNED = 300  # without a hint, fonts are opened to look for CJK glyphs; bounded
_SIZE_INCHES = (8.0, 4.8)
_DPI = 120


def _covers_cjk(path: str) -> bool:
    try:
        return ord("中") in ft2font.FT2Font(path).get_charmap()
    except (OSError, RuntimeError, ValueError):
        return False


@lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The family name of an installed font with Chinese glyphs (registered with matplotlib), or None."""
    paths = font_manager.findSystemFonts()
    hinted = sorted(
        (p for p in paths if any(h in Path(p).name.lower().replace("_", "") for h in _CJK_FONT_HINTS)),
        key=lambda p: next(i for i, h in enumerate(_CJK_FONT_HINTS) if h in Path(p).name.lower().replace("_", "")),
    )
    candidates = hinted or [p for p in paths if p.lower().endswith((".ttf", ".otf", ".ttc"))][:_MAX_FONTS_SCANNED]
    for path in candidates:
        if not _covers_cjk(path):
            continue
        try:
            font_manager.fontManager.addfont(path)
            return font_manager.FontProperties(fname=path).get_name()
        except (OSError, RuntimeError, ValueError):
            continue
    return None


def _text_of(spec: Any) -> str:
    series = " ".join(str(s.name) for s in spec.series)
    return " ".join([str(spec.title), *map(str, spec.categories), series, str(spec.x_label), str(spec.y_label)])


def _fonts(spec: Any) -> list[str]:
    families = ["DejaVu Sans"]
    if _CJK.search(_text_of(spec)):
        font = cjk_font()
        if font:
            families.append(font)
        else:
            log.warning("no font with Chinese glyphs found (install fonts-noto-cjk or fonts-wqy-microhei): "
                        "Chinese text in the chart will show as boxes")  # fmt: skip
    return families


def _number(value: float) -> str:
    """A value label: thousands separators, at most two decimals, no trailing zeros."""
    text = f"{value:,.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _checked(spec: Any) -> tuple[str, list[str], list[tuple[str, list[float]]]]:
    chart_type = str(spec.type or "bar").lower()
    if chart_type not in ("bar", "line", "pie"):
        raise ValueError(f"unknown chart type {spec.type!r}: expected bar, line or pie")
    categories = [str(c) for c in spec.categories]
    series = [(str(s.name), [float(v) for v in s.values]) for s in spec.series]
    if not categories or not series:
        raise ValueError("the chart has no categories or no series")
    for name, values in series:
        if len(values) != len(categories):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(categories)} categories")
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"series {name!r} has a value that is not a finite number")
    if chart_type == "pie" and (any(v < 0 for v in series[0][1]) or sum(series[0][1]) <= 0):
        raise ValueError("a pie chart needs non-negative values with a positive total")
    return chart_type, categories, series


def write_chart_png(spec: Any, path: Path) -> Path:
    """Draws `spec` (proto ChartSpec or the orchestrator's dataclass) into the PNG file `path`; returns it.

    Raises ValueError for a spec that cannot be drawn (unknown type, no data, lengths that disagree).
    """
    chart_type, categories, series = _checked(spec)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"font.family": _fonts(spec), "axes.unicode_minus": False}):
        # A bare Figure on an Agg canvas: no pyplot, so no global backend or figure state to clean up.
        figure = Figure(figsize=_SIZE_INCHES, dpi=_DPI, layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        unit = str(spec.unit or "")
        if chart_type == "pie":
            _pie(axes, categories, series[0][1], unit)
        else:
            _bars_or_lines(axes, chart_type, categories, series)
            axes.set_xlabel(str(spec.x_label or ""))
            axes.set_ylabel(str(spec.y_label or unit))
            axes.grid(axis="y", alpha=0.3)
            if len(series) > 1:
                axes.legend()
        axes.set_title(str(spec.title or ""), pad=18 if chart_type == "pie" else 6)
        figure.savefig(path, format="png")
    return path


def _pie(axes: Any, categories: Sequence[str], values: Sequence[float], unit: str) -> None:
    suffix = f" {unit}" if unit and unit != "%" else unit
    labels = [f"{c}\n{_number(v)}{suffix}" for c, v in zip(categories, values, strict=True)]
    axes.pie(values, labels=labels, autopct="%1.1f%%", startangle=90, counterclock=False)
    axes.axis("equal")


def _bars_or_lines(
    axes: Any, chart_type: str, categories: Sequence[str], series: Sequence[tuple[str, Sequence[float]]]
) -> None:
    positions = list(range(len(categories)))
    width = 0.8 / len(series)
    for index, (name, values) in enumerate(series):
        if chart_type == "line":
            axes.plot(positions, values, marker="o", label=name)
            for x, y in zip(positions, values, strict=True):
                axes.annotate(_number(y), (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
        else:
            offset = (index - (len(series) - 1) / 2) * width
            bars = axes.bar([p + offset for p in positions], values, width=width, label=name)
            axes.bar_label(bars, labels=[_number(v) for v in values], fontsize=8)
    axes.set_xticks(positions)
    long_labels = len(categories) > 6 or max(len(c) for c in categories) > 12
    axes.set_xticklabels(categories, rotation=30 if long_labels else 0, ha="right" if long_labels else "center")
    if chart_type == "bar":
        axes.axhline(0, color="black", linewidth=0.6)
