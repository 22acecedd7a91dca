"""The PEER plan step in code: whether a question needs a plan at all, and reading the model's plan.

A question that asks for one thing in one period is a single lookup: planning it costs a model call and
splits nothing. The model's plan is read line by line and kept only where a line is a question (ends in
? or ？) that states no figure the user's question does not (a small model sometimes answers instead of
planning, with made-up figures); numbering and bullets are stripped, repeats dropped, at most `limit`.
"""

from __future__ import annotations

import re

from weaverbird_common.periods import YEAR_NUMBER_RE

from weaverbird_orchestrator.numeric_check import answer_figures

# Words that make an English question ask for more than one fact, or for a judgement over facts.
_EN_SEVERAL = re.compile(
    r"(?i)\b(?:and|versus|vs\.?|compare[ds]?|comparison|between|change[ds]?|changing|trend|drove|driven|drivers?"
    r"|why|improv\w*|declin\w*|increas\w*|decreas\w*|grow\w*|grew|consistent\w*|ratio|margins?|relative"
    r"|analy[sz]\w*|intensive|healthy|profile|turnover|both|each)\b"
)
_ZH_SEVERAL = re.compile(
    r"和|与|及|以及|比较|对比|相比|变化|趋势|原因|为什么|分析|增长|下降|提高|降低|增加|减少|较|比|各|分别|哪"
)
_YEAR = YEAR_NUMBER_RE
_QUESTION_SPLIT = re.compile(r"(?<=[?？])\s*")
_LEAD = re.compile(
    r"^\s*(?:[-*•]+\s*|\(?\d{1,2}\s*[.)、:：]\s*|(?:sub-?questions?|子问题)\s*\d*\s*[.:：)]?\s*)+", re.IGNORECASE
)
_MAX_CHARS = 300


def needs_plan(question: str) -> bool:
    """False for a single lookup: no word asking for several facts or a judgement, at most one year."""
    if len(set(_YEAR.findall(question))) > 1:
        return True
    return bool(_EN_SEVERAL.search(question) or _ZH_SEVERAL.search(question))


def _key(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip("?？")


def parse_plan(text: str, question: str, limit: int) -> tuple[str, ...]:
    """The sub-questions of the model's plan (see the module docstring); () when none is usable."""
    asked = {abs(f.value) for f in answer_figures(question)}
    seen = {_key(question)}
    out: list[str] = []
    for line in text.splitlines():
        for piece in _QUESTION_SPLIT.split(line):
            candidate = _LEAD.sub("", piece).strip().strip("\"'“”‘’`*").strip()
            if not candidate.endswith(("?", "？")) or len(candidate) > _MAX_CHARS or len(candidate) < 4:
                continue
            if any(abs(f.value) not in asked for f in answer_figures(candidate)):
                continue  # states a figure: an answer dressed as a question, not a lookup
            key = _key(candidate)
            if key in seen:
                continue
            seen.add(key)
            out.append(candidate)
            if len(out) == limit:
                return tuple(out)
    return tuple(out)
