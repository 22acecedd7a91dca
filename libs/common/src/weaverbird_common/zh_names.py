"""Proper names in a Chinese question, for the coverage gate's "has the KB ever heard of it?" look-up.

English names show themselves by capitals (weaverbird_common.coverage.name_candidates); Chinese has no
capitals and no spaces, so jieba's part-of-speech tagger points them out: people (nr), places (ns),
organisations (nt) and other proper nouns (nz). jieba cuts a company it does not know into pieces
("德必集团" → "德必" + "集团", the first tagged as a name), and a distinctive piece is enough to ask the
lexical index whether any chunk holds it. Latin words of three letters or more with a capital letter
("iRobot", "XBB") count too; two-letter ones are mostly exchange suffixes ("600711.SH").

jieba is imported on first use: only the orchestrator asks, and its dictionary takes about two seconds to
load (the orchestrator warms it at start-up).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from weaverbird_common.questions import CJK_RE, FRAMING_WORDS_ZH

# Lexical hits to read when asking whether a chunk holds a name. The index segments Chinese into words,
# and jieba segments a name differently inside a sentence than alone ("高管王含静" need not give
# "王含静"), so hits may share only a piece of it and the chunk that holds it can rank below them or
# not at all: the hits' text decides, and the passages the question's own search found are read first.
LOOKUP_HITS = 50
# Most specific first, so the look-up limit is spent on people, companies and products before places.
_TAG_ORDER = {"nr": 0, "nrfg": 0, "nrt": 0, "nz": 1, "nt": 1, "eng": 1, "ns": 2}
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")
# jieba's tagger guesses names for unknown runs, some of them question words or function words glued to
# a neighbour ("因何原因" gives "何原因", "已达成共识" gives "已达成", "库有什么" gives "库有"): a
# candidate holding a question word, or starting or ending with a function character, is no name.
_QUESTION_WORDS = re.compile("何|哪|谁|什么|多少|几|吗|呢|怎")
_FUNCTION_CHARS = frozenset("的了有是在已将被把对为与和及或因于从向就都也还又很最更并而则之其该此")
# Words of the question's framing, some tagged as organisations: "根据新闻资讯" (according to the news).
_FRAMING = FRAMING_WORDS_ZH | {"公告"}


@cache
def _tagger() -> Any:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(60)  # its start-up banner is not an error
    jieba.initialize()
    return jieba.posseg


def holds_name(texts: Iterable[str], name: str) -> bool:
    """Whether one of `texts` (passages with their titles) holds `name` as written, Latin in any case."""
    wanted = name.lower()
    return any(wanted in text.lower() for text in texts)


def warm_up() -> None:
    """Loads jieba's dictionary now rather than on the first Chinese question."""
    _tagger()


def chinese_names(question: str) -> list[str]:
    """Proper names of `question` in the order above (then as written), each once; CJK names of two
    characters or more, Latin words of three letters or more."""
    if not CJK_RE.search(question):
        return []
    found: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for position, pair in enumerate(_tagger().cut(question)):
        word, tag = pair.word.strip(), pair.flag
        if tag not in _TAG_ORDER or word in seen:
            continue
        if tag == "eng" and not (_LATIN.fullmatch(word) and any(c.isupper() for c in word)):
            continue  # jieba tags every Latin word "eng": only capitalised ones can be names
        if tag != "eng" and not _is_cjk_name(word):
            continue
        seen.add(word)
        found.append((_TAG_ORDER[tag], position, word))
    return [word for _, _, word in sorted(found)]


def _is_cjk_name(word: str) -> bool:
    return (
        len(word) >= 2
        and bool(CJK_RE.search(word))
        and word not in _FRAMING
        and not _QUESTION_WORDS.search(word)
        and word[0] not in _FUNCTION_CHARS
        and word[-1] not in _FUNCTION_CHARS
    )
