"""Template questions over KB passages, English and Chinese.

Table rows: the facts read at ingest (company, line item, period) give "What was X's revenue in FY2017?"
and "X2017年的营业收入是多少？" (the concept's Chinese name where the row maps to one). Prose: the
heading a passage sits under, and the inverse cloze task (a sentence of the passage asks for the rest of
it). Questions a model writes are closer to users' (training/generated.py, `weaverbird train questions`),
but at ~5 s each on this CPU they cover a sample of the KB, not all of it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from weaverbird_common.facts.model import Fact
from weaverbird_common.finance.concepts import CONCEPTS

_EN_FACT = (
    "What was {company}'s {label} {at} {period}?",
    "How much was {company}'s {label} {at} {period}?",
    "{company} {label} {period}",
    "What did {company} report as {label} {at} {period}?",
)
_ZH_FACT = ("{company}{period}的{label}是多少？", "{company}{period}{label}", "{period}{company}的{label}为多少？")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_WORDS = re.compile(r"\S+")
ICT_WORDS = (6, 40)  # a sentence this long (in words) can stand in for a question


@dataclass(frozen=True)
class Question:
    text: str
    language: str  # "en" | "zh"
    template: str


_LEADERS = re.compile(r"\s*\.{3,}.*$")  # "Cash ........ $ 352,371": dot leaders and what follows
_WORDY = re.compile(r"^[A-Za-z\u4e00-\u9fff][A-Za-z\u4e00-\u9fff,;&'’/()\- ]*$")


def _label(fact: Fact) -> str:
    """The row's label as a question can name it, or "" for labels the row reader cut badly (figures,
    unbalanced brackets, a lone connective, a sentence)."""
    label = _LEADERS.sub("", " ".join(fact.label.split())).strip(" :,")
    words = label.split()
    if not _WORDY.match(label) or label.count("(") != label.count(")") or not 1 <= len(words) <= 10:
        return ""
    if words[0].lower() in {"and", "or", "of", "the", "to", "in", "for", "by", "with"}:
        return ""
    return label


def _en_period(fact: Fact) -> tuple[str, str]:
    """(preposition, period) in English: "in FY2017", "as of 2022-12-31"."""
    text = fact.period.label()
    return ("", text) if text.startswith("as of") else ("in", text)


def _zh_period(fact: Fact) -> str:
    period = fact.period
    if period.months == 3 and period.quarter:
        return f"{period.fiscal_year}年第{period.quarter}季度"
    if period.months == 0:
        return f"{period.fiscal_year}年末"
    return f"{period.fiscal_year}年"


def fact_questions(fact: Fact, rng: random.Random) -> list[Question]:
    """One English and one Chinese question asking for the fact's figure; a document with no company
    read from it (TAT-QA's anonymous reports) is asked about as "the company" / "公司"."""
    label = _label(fact)
    if not label or fact.period.fiscal_year <= 0:
        return []
    en_t = rng.choice(_EN_FACT)
    at, period = _en_period(fact)
    out = [
        Question(
            " ".join(
                en_t.format(company=fact.company or "the company", label=label.lower(), at=at, period=period).split()
            ),
            "en",
            en_t,
        )
    ]
    concept = CONCEPTS.get(fact.concept) if fact.concept else None
    if concept and concept.zh:
        zh_t = rng.choice(_ZH_FACT)
        out.append(
            Question(
                zh_t.format(company=fact.company or "公司", label=concept.zh[0], period=_zh_period(fact)), "zh", zh_t
            )
        )
    return out


def heading_question(company: str, heading: str) -> Question | None:
    heading = " ".join(heading.split()).strip(" :.")
    if not company or len(heading) < 4 or not re.search(r"[A-Za-z]{3}", heading):
        return None
    return Question(f"What does {company} disclose about {heading.lower()}?", "en", "heading")


def inverse_cloze(body: str, rng: random.Random) -> tuple[Question, str] | None:
    """(a sentence as the query, the passage without it) for prose passages of 3+ sentences; tables
    (pipe rows) are left to the fact questions."""
    if "|" in body:
        return None
    sentences = [s.strip() for s in _SENTENCE.split(" ".join(body.split())) if s.strip()]
    fit = [i for i, s in enumerate(sentences) if ICT_WORDS[0] <= len(_WORDS.findall(s)) <= ICT_WORDS[1]]
    if len(sentences) < 3 or not fit:
        return None
    i = rng.choice(fit)
    rest = " ".join(sentences[:i] + sentences[i + 1 :])
    return Question(sentences[i], "en", "inverse-cloze"), rest
