"""The figure prior of hybrid search: a question to a financial KB mostly asks for a figure, and the figure
sits in a table or a statement, while prose pages (risk factors, an auditor's report naming every
statement, a segment's narrative) share more of the question's words. So each fused candidate gains
`figure_weight` times its number density before the cut to k, unless the question asks for a
description (why, how something is done, a reason, what drove it), where the prose page is the answer.

The density is the share of a text's words that are figures, read the same way in both languages:
English (any text without CJK characters) counts its whitespace-separated tokens, as it always has;
unspaced Chinese ("全国铁路发送旅客11.5亿人次，较2019年同期增长11.6%") counts the figures inside its
runs, against a length in word-equivalents (two CJK characters to a word, as
weaverbird_common.questions.detect_language assumes), so a Chinese passage and an English one with the
same share of figures get about the same density (before, unspaced Chinese scored 0 and English tables
gained over the Chinese passage holding the answer).

The density is computed once, at upsert, and stored in the payload (FIGURE_DENSITY_KEY); the store
applies the prior itself with a score formula over the fused candidates (Qdrant's FormulaQuery, in
Qdrant Edge, local mode and a server alike), so only the k hits come back from the engine. A KB stored
before the density was kept gets it on start-up (edge_migrations.add_figure_densities,
qdrant_requests.MISSING_DENSITY). Those migrations only fill a missing field, so a KB stored with the
earlier, spaced-only density keeps it for its Chinese chunks (English chunks' density is unchanged) until
they are re-ingested, or until the field is deleted from the collection's points (Qdrant's
delete_payload of FIGURE_DENSITY_KEY): the next start recomputes it from each point's stored text.

Measured with `weaverbird eval retrieval` on FinanceBench, TAT-QA and Fin-Eva (docs/results/retrieval.md); the
weight was chosen on the tuning halves of all three, and is the same for both languages (issue 35: with
Chinese figures read, the prior costs Chinese questions nothing on Fin-Eva, alone or in one KB with
TAT-QA's English tables; benchmarks/results/eval/retrieval-figures-zh/).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from weaverbird_common.questions import CJK_CHARS_PER_WORD, CJK_RE

from weaverbird_retriever.stores.search_options import SearchOptions

# The payload field holding a chunk's number density (written at upsert, read by the score formula).
FIGURE_DENSITY_KEY = "figure_density"

# A figure as a PDF or table writes it: 1,284.6 / (12) / $5 / -3.1% / 2023.
_NUMBER_TOKEN = re.compile(r"^[\(\$]*-?\d[\d,]*(?:\.\d+)?%?\)?$")
# Inside unspaced Chinese: a figure between characters (11.5 in 11.5亿, 2019 in 2019年, 11.6%, a date
# 2023-12-31 as one), and the Latin words beside them (ROE, EBITDA).
_FIGURE_IN_RUN = re.compile(r"\d(?:[\d,.:/-]*\d)?[%％]?")
_LATIN_WORD = re.compile(r"[A-Za-z]+")

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


def spaced_number_density(text: str) -> float:
    """Share of the text's whitespace-separated tokens that are numbers: the density of English text
    (and, before CJK runs were read, of every text: 0 for unspaced Chinese)."""
    tokens = text.split()
    return sum(1 for t in tokens if _NUMBER_TOKEN.match(t)) / len(tokens) if tokens else 0.0


def number_density(text: str) -> float:
    """Share of the text's words that are figures; a token holding CJK characters counts half a word
    per character plus its figures and Latin words, the others count as in spaced_number_density."""
    words = figures = 0.0
    for token in text.split():
        cjk = len(CJK_RE.findall(token))
        if not cjk:
            words += 1
            figures += bool(_NUMBER_TOKEN.match(token))
            continue
        inside = len(_FIGURE_IN_RUN.findall(token))
        words += cjk / CJK_CHARS_PER_WORD + inside + len(_LATIN_WORD.findall(token))
        figures += inside
    return figures / words if words else 0.0


def density_field(text: str, density: Callable[[str], float] = number_density) -> dict[str, float]:
    """The payload field the score formula reads, for a chunk's text (at upsert and when migrating)."""
    return {FIGURE_DENSITY_KEY: round(density(text), 6)}


def asks_for_description(question: str) -> bool:
    """Whether the question's first sentence asks for a description (the prior then stays off)."""
    return bool(_DESCRIPTION.search(_SENTENCE_END.split(question.strip(), maxsplit=1)[0]))


def prior_weight(options: SearchOptions) -> float:
    """The weight of number density in the score formula for this search; 0 = the fusion's order (not
    hybrid, prior off, or a question asking for a description)."""
    if options.mode != "hybrid" or options.figure_weight <= 0 or asks_for_description(options.text):
        return 0.0
    return options.figure_weight
