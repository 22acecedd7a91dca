"""Whether a question leans on the conversation, and its standalone form by the rules (English and
Chinese rules apart: en_rules.py, zh_rules.py). Only user turns are read for slots: an assistant's answer
is full of years and figures that are not what the user asked about."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from weaverbird_common.questions import detect_language

from weaverbird_orchestrator.domain import Turn
from weaverbird_orchestrator.tasks.followup.en_rules import EN_PRONOUN, en_company, en_resolve
from weaverbird_orchestrator.tasks.followup.slots import (
    NO_ALIASES,
    Names,
    company_names,
    known_company_span,
    user_questions,
)
from weaverbird_orchestrator.tasks.followup.zh_rules import ZH_CUE, ZH_POINTER, ZH_PRONOUN, zh_entity, zh_resolve


def needs_rewrite(
    question: str,
    history: Sequence[Turn],
    known_companies: Sequence[str] = (),
    aliases: Mapping[str, str] = NO_ALIASES,
) -> bool:
    """Whether the question leans on the conversation: it points back ("its", "that year", "它的"), is
    elliptical ("and in 2023?", "what about 3M?", "那2023年呢？"), or names no company while an earlier
    user turn did. A question that stands alone, or one without earlier user turns, needs none."""
    earlier = user_questions(history)
    text = question.strip()
    if not earlier or not text:
        return False
    names = company_names(known_companies, aliases)
    if detect_language(text) == "zh":
        if re.search(r"呢\s*[?？]?\s*$", text) or ZH_CUE.match(text) or ZH_PRONOUN.search(text):
            return True
        if ZH_POINTER.search(text) or len(re.sub(r"[?？。，,\s]", "", text)) <= 6:
            return True
        if zh_entity(text, names, strict=True) is None and len(text) <= 15:
            return any(zh_entity(q, names) is not None for q in earlier)
        return False
    if re.match(r"^\s*(?:and|but|also|what\s+about|how\s+about|what\s+of|same\s+for|then)\b", text, re.IGNORECASE):
        return True
    if EN_PRONOUN.search(text) or len(text.split()) <= 3:
        return True
    # Names no company while the conversation did: a KB question without one means the same company.
    if names.keys:
        if known_company_span(text, names) is None:
            return any(known_company_span(q, names) is not None for q in earlier)
        return False
    # No catalog: a question with no capitalised word after its first names nobody.
    if not any(re.match(r"[A-Z0-9]", w) for w in text.split()[1:]):
        return any(en_company(q, names) is not None for q in earlier)
    return False


def rewrite_with_rules(
    question: str,
    history: Sequence[Turn],
    known_companies: Sequence[str] = (),
    aliases: Mapping[str, str] = NO_ALIASES,
) -> str:
    """The question made standalone from the latest user turns (company, period, metric carried over,
    whatever the follow-up names replaced); unchanged when it needs no rewrite. Earlier follow-ups are
    resolved in turn, so "and in 2022?" then "what about its net PP&E?" keeps both the year and company."""
    names = company_names(known_companies, aliases)
    previous = ""
    seen: list[Turn] = []
    for text in user_questions(history):
        previous = _resolve(text, previous, seen, names) if previous else text
        seen.append(Turn("user", text))
    if not previous or not needs_rewrite(question, history, known_companies, aliases):
        return question
    return _resolve(question, previous, seen, names)


def _resolve(
    question: str,
    previous: str,
    seen: Sequence[Turn],
    names: Names,
) -> str:
    if not needs_rewrite(question, seen, names.known, names.aliases):
        return question
    latin = re.search("[A-Za-z]{3}", question)
    if detect_language(question) == "zh" or (detect_language(previous) == "zh" and not latin):
        return zh_resolve(question, previous, names)
    return en_resolve(question, previous, names)
