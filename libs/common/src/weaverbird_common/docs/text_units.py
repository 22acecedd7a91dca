"""Token estimates and the units a chunk is cut into: sentences, clauses, words.

What the chunker measures and cuts text with; the generator trims its context with the same
estimate, so "tokens" means one thing across the services.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from weaverbird_common.questions import CJK_CLASS

CJK_RE = re.compile(f"[{CJK_CLASS}]")
_WORD_RE = re.compile(r"[A-Za-z]+")
# A run of one repeated symbol ("_____", ".....") counts once: tokenizers merge such runs, and
# PDF rules and dot leaders would otherwise look like hundreds of tokens.
_OTHER_RE = re.compile(rf"\d+|([^\sA-Za-z\d{CJK_CLASS}])\1*")
# Subword tokenizers split an English word into ~1.3 pieces on average; digit runs and symbols
# come out as about one token each ("$ 16,388" -> $ 16 , 388), and a CJK character is ~1 token.
_TOKENS_PER_WORD = 1.3


def count_tokens(text: str) -> int:
    """Cheap estimate of subword tokens; no tokenizer download, good to ~15% for e5/BERT-like models."""
    words = len(_WORD_RE.findall(text))
    others = sum(1 for _ in _OTHER_RE.finditer(text))
    return len(CJK_RE.findall(text)) + math.ceil(words * _TOKENS_PER_WORD) + others


_BOUNDARY_RE = re.compile(r"[。！？]+[”’」』）)]*|[.!?]+[\"”’)\]]*(?=\s)")
# Periods that rarely end a sentence in filings: "U.S. GAAP", "No. 5", "Inc. and its".
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st no nos inc corp co ltd llc plc jr sr vs etc e.g i.e u.s u.k approx fig figs "
    "sec art dept est jan feb mar apr jun jul aug sep sept oct nov dec p pp vol".split()
)


def split_sentences(text: str) -> list[str]:
    """Split English (. ! ?) and Chinese (。！？) prose into sentences, keeping the end marks."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        end = match.end()
        if text[match.start()] == ".":
            before = re.search(r"(\S+)$", text[start : match.start()])
            word = before.group(1).lower().lstrip("(\"“'") if before else ""
            # Initials ("J. Smith") and known abbreviations do not end sentences; neither does a
            # period followed by a lower-case word (a wrapped "approx. three").
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or word.endswith(".u.s"):
                continue
            following = text[end:].lstrip()[:1]
            if following and following.islower():
                continue
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def split_long(text: str, limit: int, target: int) -> Iterator[tuple[str, int]]:
    """Yield `text` whole if within `limit` tokens, else pieces of about `target` tokens.

    Cuts at clause marks (，；, ;) first and between words or CJK characters only when a clause
    is itself too long; used for run-on sentences and giant table rows.
    """
    tokens = count_tokens(text)
    if tokens <= limit:
        yield text, tokens
        return
    # Latin clause marks only count before a space, so "118,573" and "12:30" stay whole.
    clauses = [c for c in re.split(r"(?<=[，；：])\s*|(?<=[,;:])\s+", text) if c]
    if len(clauses) == 1:
        units = re.findall(rf"[{CJK_CLASS}]|[^\s{CJK_CLASS}]+\s*", text)
        buffer, buffer_tokens = "", 0
        for unit in units:
            unit_tokens = count_tokens(unit)
            if buffer and buffer_tokens + unit_tokens > target:
                yield buffer.strip(), count_tokens(buffer)
                buffer, buffer_tokens = "", 0
            buffer += unit
            buffer_tokens += unit_tokens
        if buffer.strip():
            yield buffer.strip(), count_tokens(buffer)
        return
    buffer = ""
    for clause in clauses:
        joined = f"{buffer} {clause}".strip() if not CJK_RE.match(clause[:1]) else buffer + clause
        if buffer and count_tokens(joined) > target:
            yield from split_long(buffer, limit, target)
            buffer = clause
        else:
            buffer = joined
    if buffer:
        yield from split_long(buffer, limit, target)
