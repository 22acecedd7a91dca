"""Query-focused context: keeps, from each passage, only the sentences and table rows that bear on the question.

On one CPU machine the local model reads prompts at 20-50 tokens/s, so prompt length *is* the answer
latency. Three full 400-token passages cost 20-60 s before the first token; the figure the question asks
for usually sits in one sentence or one table row of them. This step cuts each passage into units
(sentences of prose, lines of bullet lists, rows of tables), scores every unit by the question's terms it
contains (IDF-weighted over all units, so "revenue" outweighs "the company"), and keeps the best units
under a token budget:

- each passage keeps its number, title and source, so citations [n] still point at the full passage the
  user sees;
- a kept table row brings its table's header row (or, in PDF text, the nearest line of column years), so
  "1,284.6" still says which column it is;
- kept units stay in their original order; a gap between them is marked with an ellipsis;
- passages with nothing relevant are left out of the prompt (their numbers are not reused);
- when no unit of any passage shares a term with the question (e.g. a Chinese question over English
  pages), the passages are cut to the budget from their start instead: better some evidence than none.

Plain lexical overlap, no model: it runs in well under a millisecond per passage and cannot drop the
sentence that literally names the question's metric and year, which is what a small model needs to copy.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from weaverbird_common.docs.chunker import count_tokens, split_sentences
from weaverbird_common.docs.page_blocks import PIPE_ROW_RE
from weaverbird_common.glossary import components, concepts
from weaverbird_common.questions import CJK_CLASS, CJK_RUN_RE

from weaverbird_generator.prompt import Passage

GAP = "…"  # marks text left out between kept units
# A unit must score at least this share of the best unit's score to be worth its tokens.
MIN_RELATIVE_SCORE = 0.2
# Prose lines longer than this are split into sentences; shorter lines (bullets, PDF table rows) stay whole.
_LONG_LINE_TOKENS = 40
# A kept line with a figure may bring the nearest line above it naming two or more years (a PDF table's
# column header), looked for this many lines back.
_HEADER_LOOKBACK = 12
_HEADER_MAX_TOKENS = 24

_STOP_WORDS = frozenset(
    """a an and are as at be by did do does for from had has have how in is it its of on or than that the
    their them there these this those to was were what when where which who whom why will with would
    company company's companies total amount value figure report reported fiscal year years fy""".split()
)
_WORD = re.compile(r"[a-z][a-z'&-]*[a-z]|[a-z]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_PIPE_SEPARATOR = re.compile(r"^\s*\|[\s:|-]+\|\s*$")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(f"[A-Za-z{CJK_CLASS}]")


def _stem(word: str) -> str:
    """Crude prefix stem: "revenues"/"revenue", "operating"/"operations" meet; no dictionary needed."""
    word = word.removesuffix("'s")
    return word[:6] if len(word) > 6 else word


def terms(text: str) -> set[str]:
    """Stemmed content words, numbers (FY2024 gives 2024), Chinese character bigrams, and the financial
    concepts of `text` in either language (weaverbird_common.glossary: 净利润 and "net income" give
    §net_income)."""
    lowered = text.lower()
    out = {_stem(w) for w in _WORD.findall(lowered) if w not in _STOP_WORDS and len(w) > 1}
    out.update(_NUMBER.findall(lowered))
    for run in CJK_RUN_RE.findall(text):
        out.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            out.add(run)
    out.update(concepts(text))
    return out


@dataclass(slots=True)
class _Unit:
    passage: int  # index into the passages
    position: int  # order inside the passage
    text: str
    terms: set[str]
    tokens: int
    inherited: frozenset[str] = frozenset()  # the header's terms: half weight
    header: int | None = None  # position of the unit that labels this one's columns
    labels_only: bool = False  # a table's header row: kept only with a row it labels
    score: float = 0.0


def _is_year_header(line: str) -> bool:
    """A short line naming two or more different years, not a sentence: "2018 2017 2016", "Fiscal 2024 2023"."""
    return (
        len(set(_YEAR.findall(line))) >= 2
        and count_tokens(line) <= _HEADER_MAX_TOKENS
        and not line.rstrip().endswith((".", "。", ";", "；"))
    )


def _units(index: int, text: str) -> list[_Unit]:
    """Sentences, list lines and table rows of one passage, in order; table rows know their header row."""
    units: list[_Unit] = []
    table_header: int | None = None
    year_line: int | None = None
    year_line_age = 0

    def add(piece: str, header: int | None = None, labels_only: bool = False) -> int:
        own = terms(piece)
        # A row is about what its header says: "| Total | 1,284.6 |" under "| Segment | FY2024 revenue |".
        inherited = frozenset(units[header].terms - own) if header is not None else frozenset()
        units.append(_Unit(index, len(units), piece, own, count_tokens(piece), inherited, header, labels_only))
        return len(units) - 1

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            table_header = None
            continue
        year_line_age += 1
        if PIPE_ROW_RE.match(line):
            if _PIPE_SEPARATOR.match(line):
                continue
            if table_header is None:
                table_header = add(line, labels_only=True)
            else:
                add(line, table_header)
            continue
        table_header = None
        if _is_year_header(line):
            year_line, year_line_age = add(line, labels_only=True), 0
            continue
        header = year_line if year_line is not None and year_line_age <= _HEADER_LOOKBACK else None
        if units and not _LETTER.search(line) and not units[-1].labels_only:
            # PDF text often puts a row's "$" and figures on lines of their own under its label: they
            # belong to that label's unit, or the label would be kept without its figures.
            last = units[-1]
            last.text = f"{last.text} {line}"
            last.terms |= terms(line)
            last.tokens = count_tokens(last.text)
            if last.header is None and header is not None:
                last.header = header
                last.inherited = frozenset(units[header].terms - last.terms)
            continue
        if count_tokens(line) <= _LONG_LINE_TOKENS:
            add(line, header if _DIGIT.search(line) else None)
        else:
            for sentence in split_sentences(line):
                if sentence.strip():
                    add(sentence.strip())
    return units


def _score(units: list[_Unit], question_terms: set[str], titles: Sequence[str]) -> None:
    """IDF-weighted overlap with the question; a unit holding a figure gets a small edge (answers are figures).

    Question terms already in a passage's title (company, year) do not count inside that passage: the
    title is shown with the passage anyway, and otherwise the cover sentence naming the company and year
    outscores the line with the metric the question asks for (see _asked for when they do count).
    """
    n = len(units)
    df = {t: sum(1 for u in units if t in u.terms or t in u.inherited) for t in question_terms}
    weight = {t: math.log(1 + n / (1 + df[t])) for t in question_terms if df[t]}
    in_passage: list[set[str]] = [set() for _ in titles]
    for u in units:
        in_passage[u.passage] |= u.terms | u.inherited
    asked = [_asked(question_terms, terms(title), held) for title, held in zip(titles, in_passage, strict=True)]
    for u in units:
        overlap = sum(
            w * (1.0 if t in u.terms else 0.5 if t in u.inherited else 0.0)
            for t, w in weight.items()
            if t in asked[u.passage]
        )
        u.score = 0.0 if u.labels_only else overlap * (1.15 if overlap and _DIGIT.search(u.text) else 1.0)


def _asked(question_terms: set[str], title_terms: set[str], passage_terms: set[str]) -> set[str]:
    """The question terms that count inside one passage: those its title does not already show.

    Except when the title restates the question (a news headline: "德必集团：目前70%-80%的项目都属于旧楼
    改造" for "德必集团目前多少项目属于旧楼改造？"): then what is left ("多少") occurs nowhere in the text,
    every unit would score nothing and the passage that answers would be left out of the prompt, so all
    the question's terms count there. A filing's title ("3M_2018_10K") holds too few of them for that.
    """
    shown = question_terms & title_terms
    rest = question_terms - shown
    if not rest:
        return question_terms
    if not rest & passage_terms and 2 * len(shown) >= len(question_terms):
        return question_terms
    return rest


def _render(units: Sequence[_Unit]) -> str:
    """Kept units in passage order; a gap between non-adjacent units becomes an ellipsis."""
    parts: list[str] = []
    previous: int | None = None
    for u in sorted(units, key=lambda u: u.position):
        if previous is not None:
            parts.append("\n" if u.position == previous + 1 else "\n…\n")
        parts.append(u.text)
        previous = u.position
    return "".join(parts)


def _leading(text: str, budget: int) -> str:
    """The start of `text` within `budget` tokens, cut after a line or sentence, else after a word."""
    if count_tokens(text) <= budget:
        return text
    kept: list[str] = []
    used = 0
    for piece in re.split(r"(?<=\n)|(?<=[.!?。！？])\s+", text):
        cost = count_tokens(piece)
        if used + cost > budget:
            break
        kept.append(piece)
        used += cost
    if not kept:  # the first sentence alone is over budget: its first words
        for word in re.findall(r"\S+\s*", text):
            if used + count_tokens(word) > budget:
                break
            kept.append(word)
            used += count_tokens(word)
    return "".join(kept).strip() + " " + GAP


def _starts(passages: Sequence[Passage], budget_tokens: int) -> list[Passage]:
    """Each passage cut to its start, the budget shared evenly: the fallback when selection finds nothing."""
    share = max(budget_tokens // len(passages), 1)
    return [replace(p, text=_leading(p.text, share)) for p in passages]


def focus(question: str, passages: Sequence[Passage], budget_tokens: int) -> list[Passage]:
    """Passages cut to what bears on `question`, `budget_tokens` of text in all; numbers/sources unchanged.

    `budget_tokens <= 0` means no focusing: the passages are returned as given.
    """
    if budget_tokens <= 0 or not passages:
        return list(passages)
    if sum(count_tokens(p.text) for p in passages) <= budget_tokens:
        return list(passages)
    per_passage = [_units(i, p.text) for i, p in enumerate(passages)]
    units = [u for group in per_passage for u in group]
    # A ratio's line items count as asked: "quick ratio" needs the current assets and liabilities rows.
    asked = terms(question)
    _score(units, asked | components(asked), [p.title for p in passages])
    best = max((u.score for u in units), default=0.0)
    if best <= 0:
        return _starts(passages, budget_tokens)

    chosen: set[tuple[int, int]] = set()
    used = 0

    def take(u: _Unit) -> bool:
        nonlocal used
        group = per_passage[u.passage]
        new = [u] + ([group[u.header]] if u.header is not None else [])
        new = [x for x in new if (x.passage, x.position) not in chosen]
        cost = sum(x.tokens for x in new)
        if used + cost > budget_tokens:
            return False
        chosen.update((x.passage, x.position) for x in new)
        used += cost
        return True

    floor = best * MIN_RELATIVE_SCORE
    # Each passage's best unit first, in rank order, so every relevant passage stays citable; then the
    # remaining budget goes to the best units anywhere (ties: the better-ranked passage, then shorter).
    for group in per_passage:
        top = max(group, key=lambda u: (u.score, -u.tokens), default=None)
        if top is not None and top.score >= floor:
            take(top)
    for u in sorted(units, key=lambda u: (-u.score, u.passage, u.tokens)):
        if u.score < floor:
            break
        if (u.passage, u.position) not in chosen:
            take(u)

    if not chosen:  # even the best unit is longer than the whole budget
        return _starts(passages, budget_tokens)
    out: list[Passage] = []
    for i, p in enumerate(passages):
        kept = [u for u in per_passage[i] if (i, u.position) in chosen]
        if kept:
            out.append(replace(p, text=_render(kept)))
    return out
