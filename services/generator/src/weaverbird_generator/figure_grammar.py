"""A llama.cpp grammar (GBNF) that lets the model write only the numbers its prompt holds (plain logic).

The orchestrator's numeric check withholds an answer with a figure in no cited passage; the 1.5B model
on CPU wrote such a figure in about a quarter of its FinanceBench answers with figures (README,
"Answers"), and each one cost the user the whole answer. Under this grammar every run of digits the model
writes is one the prompt contains as written ("1,284.6", "2024", "3.27"): words, units, signs and
citation brackets stay free, so the model still chooses which figure to copy and how to say it, but it
cannot round, convert or compute a new one. The check stays: a copied figure can still come from a
passage the answer does not cite, or carry a wrong scale word.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

# A number as written: digits with thousands separators or a decimal point inside ("1,284.6", "0.68").
_NUMBER = re.compile(r"[0-9]+(?:[,.][0-9]+)*")
_FULL_WIDTH_DIGITS = str.maketrans("０１２３４５６７８９．，", "0123456789.,")


def numbers_in(texts: Iterable[str]) -> set[str]:
    """Every number of `texts` as written; full-width digits read as ASCII."""
    return {m.group(0) for text in texts for m in _NUMBER.finditer(text.translate(_FULL_WIDTH_DIGITS))}


def figures_from_prompt(messages: Iterable[Mapping[str, str]]) -> str:
    """A GBNF grammar for an answer whose numbers are all numbers of `messages` (rules, passages, question).

    A number ends where no digit follows, nor a separator with a digit after it, so "1" + "," + "284"
    cannot spell a new number out of shorter ones the prompt holds."""
    literals = sorted(numbers_in(m["content"] for m in messages), key=lambda s: (-len(s), s))
    # ASCII and full-width digits are not free characters: a digit only starts one of the numbers.
    free = "[^0-9０-９]"
    if not literals:
        return f"root ::= {free}*\n"
    alternatives = " | ".join(json.dumps(literal) for literal in literals)
    return (
        "root ::= seg* (number [,.]?)?\n"
        f"seg ::= {free} | number [^0-9０-９,.] | number [,.] {free}\n"
        f"number ::= {alternatives}\n"
    )
