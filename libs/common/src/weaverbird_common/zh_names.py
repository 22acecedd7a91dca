"""Proper names in a Chinese question, for the coverage gate's "has the KB ever heard of it?" look-up.

English names show themselves by capitals (weaverbird_common.coverage.name_candidates); Chinese has no
capitals and no spaces, so jieba's part-of-speech tagger points them out: people (nr), places (ns),
organisations (nt) and other proper nouns (nz). jieba cuts a company it does not know into pieces
("德必集团" → "德必" + "集团", the first tagged as a name), and a distinctive piece is enough to ask the
lexical index whether any chunk holds it. Latin words of three letters or more ("iRobot", "XBB") count
too; two-letter ones are mostly exchange suffixes ("600711.SH").

jieba is imported on first use: only the orchestrator asks, and its dictionary takes about a second to
load (the orchestrator warms it at start-up).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

# Most specific first, so the look-up limit is spent on people, companies and products before places.
_TAG_ORDER = {"nr": 0, "nrfg": 0, "nrt": 0, "nz": 1, "nt": 1, "eng": 1, "ns": 2}
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@cache
def _tagger() -> Any:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(60)  # its start-up banner is not an error
    jieba.initialize()
    return jieba.posseg


def warm_up() -> None:
    """Loads jieba's dictionary now rather than on the first Chinese question."""
    _tagger()


def chinese_names(question: str) -> list[str]:
    """Proper names of `question` in the order above (then as written), each once; CJK names of two
    characters or more, Latin words of three letters or more."""
    if not _CJK.search(question):
        return []
    found: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for position, pair in enumerate(_tagger().cut(question)):
        word, tag = pair.word.strip(), pair.flag
        if tag not in _TAG_ORDER or word in seen:
            continue
        if tag == "eng" and not _LATIN.fullmatch(word):
            continue
        if tag != "eng" and (len(word) < 2 or not _CJK.search(word)):
            continue
        seen.add(word)
        found.append((_TAG_ORDER[tag], position, word))
    return [word for _, _, word in sorted(found)]
