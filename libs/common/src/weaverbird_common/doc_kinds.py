"""Which kind of document a question asks about ("in this 10-K report", "the Q2 10-Q", "年度报告").

A question that names a kind of filing is about that filing: "the three companies Pfizer acquired in this
10-K" is not answered by Pfizer's 10-Q, however similar its passages read. The catalog lists each
company's document kinds (docs.entities.DOC_TYPES, read from file names and cover pages), so the coverage
gate can tell that the KB holds no such document of the company (coverage.assess, gap "kind").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# A kind the question names -> the document kinds (DOC_TYPES) that are such a document. An annual report
# may be filed as a 10-K, a 20-F or a 40-F; an earnings release is furnished on a Form 8-K.
_ANNUAL = frozenset({"10K", "20F", "40F", "ANNUAL_REPORT"})
_QUARTERLY = frozenset({"10Q", "6K", "QUARTERLY_REPORT", "INTERIM_REPORT"})
_KINDS: tuple[tuple[re.Pattern[str], str, frozenset[str]], ...] = (
    (re.compile(r"(?<![$\d.,])\b(?:form\s+)?10-?K\b|\bannual\s+report\b", re.I), "10-K or annual report", _ANNUAL),
    (re.compile(r"\b(?:form\s+)?10-?Q\b|\bquarterly\s+report\b", re.I), "10-Q or quarterly report", _QUARTERLY),
    (re.compile(r"\b(?:form\s+)?8-?K\b", re.I), "8-K", frozenset({"8K", "EARNINGS"})),
    (re.compile(r"\bearnings\s+(?:release|report)\b|\bpress\s+release\b", re.I), "earnings release",
     frozenset({"EARNINGS", "8K"})),
    # "年报" but not "2023年报告期" (the year, then 报告期: the reporting period).
    (re.compile(r"半年度报告|中期报告|半年报(?!告)"), "半年度报告", frozenset({"INTERIM_REPORT"})),
    (re.compile(r"(?<!半)年度报告|(?<!半)年报(?!告)"), "年度报告", _ANNUAL),
    (re.compile(r"季度报告|季报(?!告)"), "季度报告", _QUARTERLY),
)  # fmt: skip


AskedKinds = Sequence[tuple[str, frozenset[str]]]


def asked_kinds(question: str) -> list[tuple[str, frozenset[str]]]:
    """(the kind as a reader names it, the document kinds that are one) for each kind `question` names."""
    return [(shown, kinds) for pattern, shown, kinds in _KINDS if pattern.search(question)]


def missing_kind(asked: AskedKinds, company_kinds: Iterable[str]) -> str:
    """The first kind of document `asked` (asked_kinds) of which the company holds none, as a reader names
    it; "" when none is asked or the company holds each. `company_kinds` must list the kind of every
    document of the company: a document of unknown kind may be the one asked for, so the caller passes
    none then, and nothing is missing."""
    held = set(company_kinds)
    if not held:
        return ""
    return next((shown for shown, kinds in asked if not held & kinds), "")
