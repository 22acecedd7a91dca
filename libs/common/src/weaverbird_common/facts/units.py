"""The scale and currency a table states ("in millions, except per share", 单位：万元)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_EN_SCALE = re.compile(
    r"\b(?:in|\$|dollars in|amounts in|usd in|shares in|\()\s*(?:[a-z$]+\s+){0,3}?"
    r"(?P<word>thousands|millions|billions)\b|\((?P<bare>thousands|millions|billions)\b"
    # A currency caption, singular or plural: "(USD million)", "(EUR thousands)".
    r"|\((?:[A-Z]{3}|US\$|\$)\s*(?P<caption>thousand|million|billion)s?\)",
    re.IGNORECASE,
)
_ZH_SCALE = re.compile(r"单位\s*[:：]?\s*(?:人民币|美元|港元|港币)?\s*(?P<word>元|千元|万元|百万元|亿元)")
_MULTIPLIER = {
    "thousands": 1e3,
    "millions": 1e6,
    "billions": 1e9,
    "元": 1.0,
    "千元": 1e3,
    "万元": 1e4,
    "百万元": 1e6,
    "亿元": 1e8,
}


@dataclass(frozen=True)
class Scale:
    multiplier: float
    text: str
    position: int


def scales_in(text: str) -> list[Scale]:
    """Every stated scale in text, in order of position."""
    found: list[Scale] = []
    for match in _EN_SCALE.finditer(text):
        word = (match.group("word") or match.group("bare") or match.group("caption") + "s").lower()
        found.append(Scale(_MULTIPLIER[word], match.group(0).strip(), match.start()))
    for match in _ZH_SCALE.finditer(text):
        found.append(Scale(_MULTIPLIER[match.group("word")], match.group(0).strip(), match.start()))
    return sorted(found, key=lambda s: s.position)


def scale_before(scales: list[Scale], position: int) -> Scale | None:
    """The last stated scale before position (a table's own caption), else the page's first one."""
    before = [s for s in scales if s.position <= position]
    if before:
        return before[-1]
    return scales[0] if scales else None


_CURRENCIES = (
    (re.compile(r"人民币|RMB|CNY|元"), "CNY"),
    (re.compile(r"HK\$|HKD|港元|港币"), "HKD"),
    (re.compile(r"€|EUR\b|euros?\b", re.IGNORECASE), "EUR"),
    (re.compile(r"£|GBP\b"), "GBP"),
    (re.compile(r"\$|USD|U\.S\. dollars|美元"), "USD"),
)


def currency_in(text: str) -> str:
    """The currency a table is printed in: the one it names most ("" when it names none); HK$ counts as
    HKD, not also as USD."""
    counts: dict[str, int] = {}
    for pattern, code in _CURRENCIES:
        hits = len(pattern.findall(text))
        if code == "USD":
            hits -= counts.get("HKD", 0)
        if hits > 0:
            counts[code] = hits
    return max(counts, key=lambda c: counts[c]) if counts else ""


def multiplier_word(scale: float) -> str:
    """'million' for 1e6 etc., for showing a figure's scale."""
    return {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e4: "万", 1e8: "亿"}.get(scale, "")
