"""Which row of a table a question names: the label's words (and the heading it sits under) against the
question's, asides and defined short names allowed for, "total" and "beginning of the year" respected.
Used by the table-row reader (label_question)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from weaverbird_common.facts.model import Fact, Period

_OPENING = re.compile(r"\b(?:beginning|opening|start)\b", re.IGNORECASE)
_STOP = set(
    "the a an of in for and or to from between what was were is are how much many did does do by on at as its it "
    "their this that these those year years fiscal fy total change percentage percent average value amount "
    "difference increase decrease growth rate respectively which when with ended ending during than more less "
    "company group million thousand billion".split()
)


# A row is named by its label and the heading it sits under ("Granted" under "PSUs" and under "RSUs").
RowKey = tuple[str, str]


def row_key(fact: Fact) -> RowKey:
    return fact.label, fact.extra.get("section", "")


def with_headings(facts: Sequence[Fact]) -> list[Fact]:
    """Facts whose section is kept only where it is a heading over some rows of its table ("PSUs" over
    "Granted"): one held in two or more columns by some, not all, of their figures. A section found in
    one column only, or on every figure of its columns, is those columns' header words ("December 27,")."""
    in_column: Counter[tuple[str, Period]] = Counter()
    under: dict[tuple[str, str], Counter[Period]] = {}
    for fact in facts:
        in_column[(fact.table, fact.period)] += 1
        under.setdefault((fact.table, fact.extra.get("section", "")), Counter())[fact.period] += 1
    headings = {
        key
        for key, columns in under.items()
        if key[1] and len(columns) >= 2 and any(n < in_column[(key[0], p)] for p, n in columns.items())
    }
    return [f if (f.table, f.extra.get("section", "")) in headings else replace(f, extra={}) for f in facts]


def _aside_free(label: str) -> str:
    """The label without its asides in parentheses, nested ones too ("Additions (Note (a))" -> "Additions")."""
    while (bare := re.sub(r"\([^()]*\)", " ", label)) != label:
        label = bare
    return label


_SHORT_NAME = re.compile(r"\(\s*(?:the\s+)?[“\"]([^”\"]+)[”\"]\s*\)")
# Period words that name a column, not a row: "2018 year end", "at the end of 2019".
_PERIOD_WORDS = re.compile(
    r"(?<=\d{4}) year[- ]end\b|\b(?:at |as at |as of )?(?:the )?end of (?:the )?(?:fiscal )?(?:year )?"
    r"(?=(?:fy\s*)?(?:19|20)\d{2})",
    re.IGNORECASE,
)


def label_words(text: str) -> list[str]:
    """A label's or question's content words, lower-cased, a plural -s dropped, stop words left out."""
    out = []
    for w in re.findall(r"[a-z][a-z&'-]*", text.lower()):
        w = w.strip("'-")
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        if w and w not in _STOP:
            out.append(w)
    return out


def _scored(question: str, facts: Sequence[Fact]) -> tuple[tuple[float, int, bool, float], RowKey] | None:
    """The row the question names, with its score: the largest share of the label's words found in the
    question (at least half, and at least one word), then more words found (the heading's count too), then
    the label the question's "total" names, then the label named with fewest words left over."""
    asked = set(label_words(_PERIOD_WORDS.sub(" ", question)))
    says_total = bool(re.search(r"\btotal\b", question, re.IGNORECASE))
    opening_asked = bool(_OPENING.search(question))
    best: tuple[tuple[float, int, bool, float], RowKey] | None = None
    for key in dict.fromkeys(row_key(f) for f in facts):
        label, section = key
        words = set(label_words(label))
        if not words:
            continue
        # An aside in parentheses ("Free Cash Flow (non-U.S. GAAP measure)", "Cash (1)") is not what is named.
        plain = set(label_words(_aside_free(label))) or words
        # The heading's words name the row too ("PSUs" + "Granted"), but need not be asked ("Wages").
        full = words | set(label_words(section))
        hits = len(full & asked)
        exact = len(words & asked) / len(words)
        # A defined short name ("Huawei Technologies Co., Ltd. (“Huawei”)") names the row as well.
        short = {w for m in _SHORT_NAME.finditer(label) for w in label_words(m.group(1))}
        share = max(exact, len(plain & asked) / len(plain), hits / len(full), len(short & asked) / (len(short) or 1))
        # Of "Other operating expenses" and "Total other operating expenses", the one the question's
        # "total" (or its absence) names.
        agrees = label.lower().startswith("total") == says_total
        # A roll-forward's "Goodwill, beginning of the year" is not the balance asked unless named so.
        agrees = agrees and (opening_asked or not _OPENING.search(label))
        score = (share, hits, agrees, exact)
        if len(words & asked) + len(plain & asked) and share >= 0.5 and (best is None or score > best[0]):
            best = (score, key)
    # "total personnel expenses" in a table with one total row ("Total", "Total Fiscal 2018 Plan"): that
    # row, unless another label is named in full ("Total emissions").
    if says_total and (best is None or best[0][0] < 1):
        totals = list(dict.fromkeys(row_key(f) for f in facts if f.label.lower().startswith("total")))
        if len(totals) == 1:
            return (1.0, 1, True, 1.0), totals[0]
        if best and "total" not in best[1][0].lower():
            return None  # "total assets as reported" is no part-named row ("Other assets"): a total not printed
    return best


def best_label(question: str, facts: Sequence[Fact]) -> RowKey | None:
    """The row (label and heading) the question names, or None."""
    scored = _scored(question, facts)
    return scored[1] if scored else None
