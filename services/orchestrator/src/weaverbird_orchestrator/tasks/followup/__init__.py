"""Follow-up questions made standalone before retrieval: "and in 2023?" after a revenue question.

Retrieval and the company / year filters read one question, so a follow-up that leans on the conversation
("What about its capex?", "那2023年呢？") is rewritten first. Rules carry the company, period and metric
over from the latest user turns that named them and replace whatever the follow-up names itself; the
model can do the same (task "rewrite"), checked and backed by the rules. Only user turns are read for
slots: an assistant's answer is full of years and figures that are not what the user asked about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from weaverbird_common.questions import detect_language

from weaverbird_orchestrator.domain import Turn
from weaverbird_orchestrator.tasks.followup.rewrite import clean_model_rewrite, plausible_rewrite, rewrite_with_llm
from weaverbird_orchestrator.tasks.followup.rules import needs_rewrite, rewrite_with_rules
from weaverbird_orchestrator.tasks.followup.slots import NO_ALIASES
from weaverbird_orchestrator.tasks.llm import Generator

__all__ = [
    "clean_model_rewrite",
    "needs_rewrite",
    "plausible_rewrite",
    "rewrite_with_llm",
    "rewrite_with_rules",
    "standalone_question",
]


async def standalone_question(
    question: str,
    history: Sequence[Turn],
    *,
    mode: str,
    generator: Generator,
    known_companies: Sequence[str] = (),
    aliases: Mapping[str, str] = NO_ALIASES,
    language: str = "",
) -> str:
    """The question to retrieve and answer with: `question` itself when it stands alone (or mode "off"),
    else its rewrite by the rules or the model (mode "llm", which falls back to the rules)."""
    if mode not in ("rules", "llm", "off"):
        raise ValueError(f"unknown follow-up rewrite mode {mode!r}")
    if mode == "off" or not needs_rewrite(question, history, known_companies, aliases):
        return question
    if mode == "rules":
        return rewrite_with_rules(question, history, known_companies, aliases)
    return await rewrite_with_llm(
        generator,
        question,
        history,
        language or detect_language(question),
        known_companies=known_companies,
        aliases=aliases,
    )
