"""The figure prior of hybrid search: a question to a financial KB mostly asks for a figure, and the figure
sits in a table or a statement, while prose pages (risk factors, an auditor's report naming every
statement, a segment's narrative) share more of the question's words. So each fused candidate gains
`figure_weight` times its number density before the cut to k, unless the question asks for a
description (why, how something is done, a reason, what drove it), where the prose page is the answer.

The density is computed once, at upsert, and stored in the payload (FIGURE_DENSITY_KEY); the store
applies the prior itself with a score formula over the fused candidates (Qdrant's FormulaQuery, in
Qdrant Edge, local mode and a server alike), so only the k hits come back from the engine.

Measured with `weaverbird eval retrieval` on FinanceBench, TAT-QA and Fin-Eva (docs/results/retrieval.md); the
weight was chosen on the tuning halves of all three.
"""

from __future__ import annotations

import re

from weaverbird_retriever.stores.search_options import SearchOptions

# The payload field holding a chunk's number density (written at upsert, read by the score formula).
FIGURE_DENSITY_KEY = "figure_density"

# A figure as a PDF or table writes it: 1,284.6 / (12) / $5 / -3.1% / 2023.
_NUMBER_TOKEN = re.compile(r"^[\(\$]*-?\d[\d,]*(?:\.\d+)?%?\)?$")

# Questions whose expected answer is a description, not a number (the DESC class of answer-type
# taxonomies), read in the question's first sentence only (what follows is often instructions: "if the
# ratio is not relevant, explain why"): why, how something is done or happens (how + a verb, not how
# much / many), a reason, purpose, nature, what drove or caused it, describe / explain / discuss; in
# Chinese 为什么, 原因, 如何, 怎样, 说明, 解释, 含义.
_DESCRIPTION = re.compile(
    r"\bwhy\b|\bhow\s+(?:does|do|did|is|are|was|were|can|could|should|would|will|has|have)\b"
    r"|\b(?:reasons?|purpose|nature|describe|explain|discuss)\b|\bwhat\s+(?:drove|caused)\b"
    r"|为什么|为何|原因|如何|怎样|怎么|说明|解释|含义",
    re.IGNORECASE,
)
# The end of a sentence: ?, !, 。 or a full stop before a space (not a decimal point).
_SENTENCE_END = re.compile(r"[?？!！。]|\.(?=\s|$)")


def number_density(text: str) -> float:
    """Share of the text's whitespace-separated tokens that are numbers (0 for unspaced Chinese text)."""
    tokens = text.split()
    return sum(1 for t in tokens if _NUMBER_TOKEN.match(t)) / len(tokens) if tokens else 0.0


def density_field(text: str) -> dict[str, float]:
    """The payload field the score formula reads, for a chunk's text (at upsert and when migrating)."""
    return {FIGURE_DENSITY_KEY: round(number_density(text), 6)}


def asks_for_description(question: str) -> bool:
    """Whether the question's first sentence asks for a description (the prior then stays off)."""
    return bool(_DESCRIPTION.search(_SENTENCE_END.split(question.strip(), maxsplit=1)[0]))


def prior_weight(options: SearchOptions) -> float:
    """The weight of number density in the score formula for this search; 0 = the fusion's order (not
    hybrid, prior off, or a question asking for a description)."""
    if options.mode != "hybrid" or options.figure_weight <= 0 or asks_for_description(options.text):
        return 0.0
    return options.figure_weight
