"""The model's rewrite of a follow-up (task "rewrite"), checked and backed by the rules."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence

from weaverbird_common.errors import WeaverbirdError
from weaverbird_common.periods import YEAR_DIGITS
from weaverbird_common.questions import detect_language, normalize_company

from weaverbird_orchestrator.domain import Turn
from weaverbird_orchestrator.tasks.followup.en_rules import en_company
from weaverbird_orchestrator.tasks.followup.rules import rewrite_with_rules
from weaverbird_orchestrator.tasks.followup.slots import NO_ALIASES, Names, company_names, user_questions
from weaverbird_orchestrator.tasks.followup.zh_rules import zh_entity
from weaverbird_orchestrator.tasks.llm import Generator, complete

log = logging.getLogger(__name__)

_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:standalone|rewritten|rewrite|complete|full|new)?\s*(?:question|query)\s*[:：]\s*(?:\*\*)?\s*"
    r"|^\s*(?:改写后的问题|改写后|独立问题|完整问题|问题|改写)\s*[:：]\s*",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# The turns sent with a rewrite request (the prompt reads the last user turns among them).
_SENT_TURNS = 12


def clean_model_rewrite(text: str) -> str:
    """The first line of the model's output without a label ("Question:") or quotes around it."""
    for line in text.strip().splitlines():
        line = _LABEL.sub("", line).strip().strip("\"'“”‘’「」`*").strip()
        if line:
            return line
    return ""


def _company_named(text: str, names: Names) -> str:
    span = zh_entity(text, names) if detect_language(text) == "zh" else en_company(text, names)
    return span.text if span else ""


def plausible_rewrite(
    rewrite: str, question: str, history: Sequence[Turn], language: str, *, company: str = ""
) -> bool:
    """One question in the asked language, not empty, not much longer than what it is built from, not the
    follow-up unchanged, naming `company` (what the rules carry over) when given, and no figure the user
    did not write: a model that answers, or invents a date, instead of rewriting fails this. A year
    before one the user wrote is allowed ("the year before")."""
    if not rewrite:
        return False
    earlier = user_questions(history)
    budget = len(question) + (len(earlier[-1]) if earlier else 0) + 80
    if len(rewrite) > min(budget, 600) or len(re.findall(r"[?？]", rewrite)) > 1:
        return False
    if detect_language(rewrite) != language:
        return False
    squash = lambda s: re.sub(r"\W", "", s).lower()  # noqa: E731
    if squash(rewrite) == squash(question):
        return False
    if company and normalize_company(company) not in normalize_company(rewrite):
        return False
    asked = set(_NUMBER.findall(" ".join([*earlier, question])))
    asked |= {str(int(n) - 1) for n in asked if re.fullmatch(YEAR_DIGITS, n)}
    asked |= {n[-2:] for n in asked if re.fullmatch(YEAR_DIGITS, n)} | {f"20{n}" for n in asked if len(n) == 2}
    return all(n in asked for n in _NUMBER.findall(rewrite))


async def rewrite_with_llm(
    generator: Generator,
    question: str,
    history: Sequence[Turn],
    language: str,
    *,
    known_companies: Sequence[str] = (),
    aliases: Mapping[str, str] = NO_ALIASES,
) -> str:
    """The model's standalone question (task "rewrite"), or the rules' when the model fails or its output
    is not a plausible rewrite (see plausible_rewrite)."""
    try:
        completion = await complete(generator, "rewrite", question, (), language, history=history[-_SENT_TURNS:])
    except WeaverbirdError as exc:
        log.warning("follow-up rewrite by the model failed (%s); using the rules", exc)
        return rewrite_with_rules(question, history, known_companies, aliases)
    rewrite = clean_model_rewrite(completion.text)
    by_rules = rewrite_with_rules(question, history, known_companies, aliases)
    company = _company_named(by_rules, company_names(known_companies, aliases))
    if plausible_rewrite(rewrite, question, history, language, company=company):
        return rewrite
    log.info("model rewrite %r rejected; using the rules", rewrite[:200])
    return by_rules
