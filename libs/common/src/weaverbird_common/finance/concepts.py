"""Statement line items (concepts) and how filings print them, in English and Chinese.

`concept_for_label` maps a row label as printed ("Total net sales", "Purchases of property, plant and
equipment (PP&E)", "一、营业总收入") to a concept id; it matches whole labels, so "Deferred revenue" or
"Revenue from related parties" are not revenue. `concepts_in_text` finds the concepts a question names,
with the shorthand analysts write (capex, COGS, net AR, PP&E).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from weaverbird_common.finance.tables import read_table, words


@dataclass(frozen=True)
class Concept:
    id: str
    statement: str  # "income" | "balance" | "cash_flow" | "other"
    kind: str  # "flow" | "stock" | "per_share" | "ratio" | "count"
    en: tuple[str, ...]  # whole labels as printed, lower-case; a "*" ending matches any tail
    zh: tuple[str, ...]
    sign: int = 1
    # Words a question uses for it that are no statement label ("capex", "cogs").
    asked: tuple[str, ...] = ()


_FIELDS = {"id", "statement", "kind", "en", "zh", "sign", "asked"}


def _concept(row: dict[str, Any]) -> Concept:
    unknown = set(row) - _FIELDS
    if unknown:
        raise ValueError(f"concept {row['id']}: unknown fields {sorted(unknown)}")
    return Concept(
        row["id"],
        row["statement"],
        row["kind"],
        words(row, "en"),
        words(row, "zh"),
        int(row.get("sign", 1)),
        words(row, "asked"),
    )


# The table itself is data: finance/data/concepts/*.yaml, read in file-name order.
_LIST = tuple(_concept(row) for row in read_table("concepts"))
CONCEPTS: dict[str, Concept] = {c.id: c for c in _LIST}

_NOTE = re.compile(r"\((?:see )?notes? [^)]*\)|\(\d\)|\[\d\]", re.IGNORECASE)
_TAIL = re.compile(
    r",? (?:net )?(?:of|less) (?:\$|allowances?|accumulated|doubtful|reserves?|current|proceeds|refunds?\b).*$"
    r"|, net of \w.*$"  # "Capital expenditures, net of construction payable"
    r"|,? respectively$"
)
_CN_PREFIX = re.compile(r"^(?:[一二三四五六七八九十]+、|（[一二三四五六七八九十]+）|\d+[.、．]|[加减][：:]|其中[：:])")
_EN_PREFIX = re.compile(r"^(?:less|add|plus|deduct|minus)\s*:\s*|^(?:less|plus)\s+(?=[a-z])")


def _dashes(text: str) -> str:
    return re.sub(r"\s*[–—]\s*|\s+-\s+", ", ", text)


def _norm(label: str) -> str:
    text = _NOTE.sub(" ", label.lower().replace("’", "'")).strip()
    text = _EN_PREFIX.sub("", text)
    text = re.sub(r"\s*[-–—]\s*\$[\d,]+.*$", "", text)
    text = _dashes(text)  # "Property, plant and equipment—net", "Earnings per share - diluted"
    text = text.replace("&", " and ") if "p&e" not in text and "s&a" not in text and "r&d" not in text else text
    text = re.sub(r"[:;*†‡]", " ", text)
    return _canon(" ".join(text.split()).strip(" ,."))


def _canon(text: str) -> str:
    """One spelling for what filings print several ways: the Oxford comma, "used for/by", "cash and
    equivalents", "Cash provided by ..." without "net"."""
    text = text.replace(", and ", " and ").replace("/(", " (").replace(")/", ") ")  # "Net income/(loss)"
    text = text.replace("'", "")  # "stockholders' equity", "stockholders equity"
    text = re.sub(r"\bused (?:for|by)\b", "used in", text)
    text = re.sub(
        r"\(used(?: in)?\) provided(?: by)?|provided(?: by)? \(used(?: in)?\)(?: by)?", "provided by (used in)", text
    )
    text = re.sub(r"\bcash and equivalents\b", "cash and cash equivalents", text)
    return re.sub(r"^cash (?=provided|used|\(used|from|flows? from)", "net cash ", text)


def _matches(pattern: str, label: str) -> bool:
    if pattern.endswith("*"):
        return label.startswith(pattern[:-1].strip())
    if "*" in pattern:
        head, tail = pattern.split("*", 1)
        return label.startswith(head) and label.endswith(tail.strip())
    return label == pattern


_EN_INDEX = [
    (p.replace("&", " and ") if not any(k in p for k in ("p&e", "s&a", "r&d")) else p, c.id)
    for c in _LIST
    for p in c.en
]
_EN_INDEX = [(_canon(" ".join(_dashes(p).split())), cid) for p, cid in _EN_INDEX]
# "(loss)" in "Net income (loss)", "(benefit)" in "Provision (benefit) for income taxes".
_SIGN_WORDS = re.compile(r"\s*\((?:loss|losses|income|benefit|expense|deficit|gain|decrease|increase)\)")
_PARENS = re.compile(r"\(([^()]*)\)")  # "Net cash (used in) operating activities"
# "Earnings before income taxes and equity in income of affiliates": the pre-tax line all the same.
_AFTER_TAX_TAIL = re.compile(r"(before (?:income taxes|income tax expense|taxes)) and .*$")
# The previous row's label and figures glued before this one: "Dividends paid (1,158) Net cash used in ...".
_BEFORE_FIGURES = re.compile(r"^.*\d\)?\s+(?=[a-z])")
_FIGURES = re.compile(r"(?:\s+\$?\s*\(?[\d,]+(?:\.\d+)?\s*\)?\s*%?)+$")  # "Total assets $ 17,475"
_EXACT: dict[str, str] = {}
for _pattern, _cid in _EN_INDEX:
    if "*" not in _pattern:
        _EXACT.setdefault(_pattern, _cid)
_WILDCARDS = [(p, cid) for p, cid in _EN_INDEX if "*" in p]
# pypdf drops the spaces of some filings' labels ("Operatingincome", "Totalcurrentassets").
_GLUED: dict[str, str] = {}
for _pattern, _cid in _EXACT.items():
    _GLUED.setdefault(_pattern.replace(" ", ""), _cid)
_GLUED_WORD = re.compile(r"[a-z]{14,}")
# Section headings pypdf glues before a row's label: "Current assets Cash and cash equivalents".
_SECTION = re.compile(
    r"^(?:liabilities and (?:stockholders' |shareholders' |shareowners' )?equity"
    r"|(?:non-?)?current ?(?:assets|liabilities)"
    r"|assets|liabilities|\(unaudited\)|commitments and contingencies"
    r"|(?:cash flows?,? (?:from )?)?(?:operating|investing|financing) activities) (?=\S)"
)
# Explanations printed after the item: "Cost of sales (exclusive of depreciation shown below)".
_ASIDE = re.compile(
    r"\s*\((?:exclusive|excluding|exclusive of|including|inclusive of)\b[^)]*\)$"
    r"|,\s*(?:excluding|exclusive of)\b.*$"
)


def _unheaded(text: str) -> str:
    while _SECTION.match(text):
        text = _SECTION.sub("", text, count=1)
    return text


# Each step may or may not apply: a label is tried as printed, then with each applicable step taken.
_STEPS = (
    _unheaded,
    lambda v: _TAIL.sub("", v),
    lambda v: _ASIDE.sub("", v),
    lambda v: _SIGN_WORDS.sub("", v),
    lambda v: _PARENS.sub(r"\1", v),
    lambda v: _AFTER_TAX_TAIL.sub(r"\1", v),
    lambda v: _FIGURES.sub("", v),
    lambda v: _BEFORE_FIGURES.sub("", v),
    lambda v: v[6:] if v.startswith("total ") else v,
    lambda v: v[:-5] if v.endswith(", net") else v,
)


def _variants(label: str) -> list[str]:
    out = [_norm(label)]
    for step in _STEPS:
        for v in list(out):
            cut = _canon(" ".join(step(v).split()).strip(" ,"))
            if cut and cut not in out:
                out.append(cut)
    return out


@lru_cache(maxsize=65536)  # statements repeat their labels page after page, filing after filing
def concept_for_label(label: str) -> str | None:
    """The concept a statement row label names, or None. Whole-label matches only (after dropping note
    references, "net of allowances ..." tails and a leading "Total")."""
    if re.search(r"[\u4e00-\u9fff]", label):
        text = _CN_PREFIX.sub("", re.sub(r"\s+", "", label))
        text = re.sub(r"[（(][^)）]*[)）]$", "", text)
        for concept in _LIST:
            if text in concept.zh or any(_CN_PREFIX.sub("", z) == text for z in concept.zh):
                return concept.id
        return None
    variants = _variants(label)
    # Exact labels first: "... attributable to noncontrolling interests" is not "... attributable to *".
    for variant in variants:
        if variant in _EXACT:
            return _EXACT[variant]
    for variant in variants:
        for pattern, cid in _WILDCARDS:
            if _matches(pattern, variant):
                return cid
    if _GLUED_WORD.search(variants[0]):  # a word no line item has: spaces lost in extraction
        for variant in variants:
            found = _GLUED.get(variant.replace(" ", ""))
            if found:
                return found
    return None


# Labels that name a line item in a statement but mean something else in a question ("marketing strategy").
_LABEL_ONLY = {"turnover", "marketing", "basic", "diluted", "other", "other, net", "deposits"}


def _phrases() -> list[tuple[str, str]]:
    out = []
    for c in _LIST:
        for p in (*c.en, *c.asked):
            if "*" in p or (len(p) < 3 and p not in ("ar",)) or p in _LABEL_ONLY:
                continue
            out.append((p, c.id))
        out.extend((z, c.id) for z in c.zh if len(z) >= 2)
    return sorted(out, key=lambda x: -len(x[0]))


_PHRASES = _phrases()
# Words too common in questions to name a line item alone.
_WEAK = {
    "sales",
    "basic",
    "diluted",
    "cash",
    "marketing",
    "dividends",
    "receivables",
    "depreciation",
    "ar",
    "current assets",
    "current liabilities",
    "property and equipment",
    "property, plant and equipment",
}


def concepts_in_text(text: str) -> list[str]:
    """Concepts a question names, longest phrase first, each once."""
    lowered = " " + " ".join(text.lower().replace("’", "'").split()) + " "
    lowered = re.sub(r"(?<![a-z])cash-?flow", "cash flow", lowered)  # "cashflow" is often one word
    found: list[str] = []
    taken: list[tuple[int, int]] = []
    for phrase, cid in _PHRASES:
        if phrase in _WEAK and len(found) > 0:
            continue
        if re.search(r"[\u4e00-\u9fff]", phrase):
            spans = [(m.start(), m.end()) for m in re.finditer(re.escape(phrase), lowered)]
        else:
            spans = [(m.start(), m.end()) for m in re.finditer(rf"(?<![a-z&]){re.escape(phrase)}(?![a-z&])", lowered)]
        for start, end in spans:
            if any(start < e and end > s for s, e in taken):
                continue
            taken.append((start, end))
            if cid not in found:
                found.append(cid)
    return found
