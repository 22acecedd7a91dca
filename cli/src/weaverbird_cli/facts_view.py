"""How `weaverbird kb facts` prints a document's facts: page, period, row label, concept, value and unit."""

from __future__ import annotations

from weaverbird_common.facts.model import Fact

# Scale words for the multipliers tables state ("in thousands", 单位：万元); others are shown as "x1e5".
_SCALE_WORDS = {1.0: "", 1e3: "thousand", 1e4: "万", 1e6: "million", 1e8: "亿", 1e9: "billion", 1e12: "trillion"}


def figure(value: float) -> str:
    """The value as printed in a table: thousands separated, no trailing zeros, sign kept."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.6f}".rstrip("0").rstrip(".")


def unit_text(fact: Fact) -> str:
    """The unit after a value: "USD million", "CNY 万", "% ", "USD per share", "million shares"."""
    scale = _SCALE_WORDS.get(fact.scale, f"x{fact.scale:g}")
    if fact.unit == "percent":
        return "%"
    if fact.unit == "per_share":
        return f"{fact.currency} per share".strip()
    if fact.unit == "shares":
        return f"{scale} shares".strip()
    if fact.unit == "number":
        return scale
    return f"{fact.currency} {scale}".strip()


def fact_line(fact: Fact) -> str:
    """One row: `p.4   FY2024     Revenue [revenue]  1,102.9 USD million`."""
    page = f"p.{fact.page}" if fact.page else "p.-"
    concept = f" [{fact.concept}]" if fact.concept else ""
    value = f"{figure(fact.value)} {unit_text(fact)}".strip()
    return f"{page:<6} {fact.period.label():<20} {fact.label}{concept}  {value}"
