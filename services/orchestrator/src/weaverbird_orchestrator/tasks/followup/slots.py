"""What a follow-up and the turns before it name: spans of text, the KB's company names and where a
question writes one, and how a rewrite is written out as a question (shared by the English and Chinese
rules and the model's checked rewrite)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from weaverbird_common.questions import CJK_RE, filters_from_question, normalize_company, short_company_name

from weaverbird_orchestrator.domain import Turn

NO_ALIASES: Mapping[str, str] = {}


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Names:
    """The companies a KB knows: names, alias -> company, and matching key -> company for finding where
    a question writes one."""

    known: Sequence[str]
    aliases: Mapping[str, str]
    keys: Mapping[str, str]


def company_names(known: Sequence[str], aliases: Mapping[str, str]) -> Names:
    keys: dict[str, str] = {}
    for name, company in [*((c, c) for c in known), *aliases.items()]:
        for form in (name, short_company_name(name)):
            key = normalize_company(form)
            if len(key) >= 2 and not key.isdigit():
                keys.setdefault(key, company)
    return Names(tuple(known), aliases, keys)


def known_company_span(text: str, names: Names) -> Span | None:
    """Where the text writes the company it names. Which company that is, is decided as the retrieval
    filters decide it (questions.filters_from_question: case rules for tickers, whole words); this only
    finds the words that wrote it."""
    company = filters_from_question(text, names.known, aliases=names.aliases).get("company")
    if not company:
        return None
    wanted = {key for key, owner in names.keys.items() if owner == company}
    words = list(re.finditer(r"[0-9A-Za-z&.\-]+", text))
    found: list[Span] = []
    for i in range(len(words)):
        for n in range(min(6, len(words) - i), 0, -1):  # longest name first: "American Water Works"
            run = words[i : i + n]
            if normalize_company("".join(w.group() for w in run)) in wanted:
                found.append(Span(run[0].start(), run[-1].end(), text[run[0].start() : run[-1].end()]))
                break
        if found:
            break
    upper = text.upper()
    for key in wanted:
        if CJK_RE.search(key) and (pos := upper.find(key)) >= 0:
            found.append(Span(pos, pos + len(key), text[pos : pos + len(key)]))
    return min(found, key=lambda s: s.start) if found else None


def as_question(text: str, language: str) -> str:
    text = " ".join(text.split()).strip()
    if language == "zh":
        return text.rstrip("?？。.!！ ") + "？"
    text = text.rstrip("?.! ")
    return (text[:1].upper() + text[1:] + "?") if text else text


def user_questions(history: Sequence[Turn]) -> list[str]:
    return [t.text.strip() for t in history if t.role == "user" and t.text.strip()]
