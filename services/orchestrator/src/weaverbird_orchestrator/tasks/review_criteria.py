"""The PEER review's automatic criteria, in code: every claim cited, every figure supported, the question
answered. Plain functions over the draft, its passages and the sub-questions; no model, never raises.

- cited: each sentence that makes a claim (a figure, or a statement of some length that is neither a
  lead-in ending in ":" nor the insufficient-information sentence) carries a marker [n] of a passage
  that exists. A marker at the start of the next sentence ("... 2022. [1] Next ...") counts for the
  sentence before it, as readers take it.
- supported: numeric_check.check_answer, as served (every figure in a passage the answer cites; in any
  passage given when it cites none), and, stricter, sentence by sentence: a sentence's figures are in a
  passage that sentence cites. A right figure with the wrong marker is re-pointed first
  (numeric_check.recite), as the flow does, and a claim with figures but no marker gets the marker of
  the first passage holding all its figures (cite_figures): only markers change, never words.
- answered: not a refusal (the insufficient-information sentence with nothing cited beside it), and
  each sub-question covered: the answer uses a term that sub-question does not share with all the others
  (its metric, its year), or any of its terms when it has none of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from weaverbird_common.periods import YEAR_NUMBER_RE
from weaverbird_common.questions import CJK_RE, CJK_RUN_RE
from weaverbird_common.wire_texts import says_insufficient

from weaverbird_orchestrator.citations import cited_numbers
from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.numeric_check import answer_figures, check_answer, recite

CITED = "cited"
SUPPORTED = "supported"
ANSWERED = "answered"
MODEL = "model"

# A sentence ends at . ! ? ; followed by space or the end (not inside 12.4), at 。！？；, or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_SENTENCE_END_KEPT = re.compile(r"((?<=[.!?;])\s+|(?<=[。！？；])|\n+)")
_CLOSING = re.compile(r"^(.*?)([.。!！?？;；:：]*)$", re.DOTALL)
_MARKER_RUN = re.compile(r"^(?:\s*[\[【]\s*\d+(?:\s*[,，、]\s*\d+)*\s*[\]】])+")
_MARKERS = re.compile(r"[\[【]\s*\d+(?:\s*[,，、]\s*\d+)*\s*[\]】]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'&-]*")
_YEAR = YEAR_NUMBER_RE
_MIN_CLAIM_WORDS = 4
_MIN_CLAIM_CJK = 6
_STEM = 5  # "margins" ~ "margin", "improving" ~ "improved": terms compare on their first letters

_STOP_WORDS = frozenset(
    """a an and are as at be been by can could did do does for from had has have how in into is it its of on
    or than that the their them there these this those to was were what when where which who whom why will
    with would about based data during per versus company company's companies fiscal year years fy total
    amount value figure report reported reports annual quarter""".split()
)
# Question words and particles of Chinese questions: they say nothing about what was asked.
_ZH_STOP = re.compile(r"多少|什么|哪些|哪个|如何|怎样|怎么|为什么|是否|分别|请问|了|的|是|吗|呢|在|和|与|及|年|月")


@dataclass(frozen=True)
class Review:
    """The criteria's verdict on one draft; `answer` is the draft with any re-pointed markers."""

    answer: str
    failed: tuple[str, ...]  # names of the failed criteria, in CITED, SUPPORTED, ANSWERED order
    uncited: tuple[str, ...] = ()  # claim sentences without a marker
    bad_markers: tuple[int, ...] = ()  # markers naming no passage
    unsupported: tuple[str, ...] = ()  # figures in no cited passage
    refused: bool = False
    uncovered: tuple[str, ...] = ()  # sub-questions the answer does not touch
    claims: int = 0
    cited_claims: int = 0
    recited: bool = False
    cited_by_code: int = 0  # claims that got their marker from cite_figures
    notes: tuple[str, ...] = ()  # e.g. the model's own verdict when it was asked

    @property
    def passed(self) -> bool:
        return not self.failed


def passage_sources(passages: Sequence[Passage]) -> list[str]:
    """What the numeric check reads per passage, as the flow builds it (title and heading carry units)."""
    return [f"{p.title}\n{p.heading}\n{p.text}" for p in passages]


def sentences(answer: str) -> list[str]:
    """The answer's sentences, each with the markers that follow it (a marker run opening a sentence
    belongs to the one before)."""
    out: list[str] = []
    for piece in _SENTENCE_END.split(answer):
        piece = piece.strip()
        if not piece:
            continue
        lead = _MARKER_RUN.match(piece)
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group(0).strip()}"
            piece = piece[lead.end() :].strip()
            if not piece:
                continue
        out.append(piece)
    return out


def is_claim(sentence: str) -> bool:
    """A sentence stating something a passage should back: a figure, or a statement of some length."""
    bare = _MARKERS.sub(" ", sentence).strip(" *#-•\t")
    if not bare or says_insufficient(bare) or bare.endswith((":", "：")):
        return False
    if answer_figures(bare):
        return True
    return len(_WORD.findall(bare)) >= _MIN_CLAIM_WORDS or len(CJK_RE.findall(bare)) >= _MIN_CLAIM_CJK


def refused(answer: str) -> bool:
    """The insufficient-information sentence with no cited claim beside it (a partial answer that says
    what is missing is not a refusal)."""
    if not says_insufficient(answer):
        return False
    return not any(is_claim(s) and cited_numbers(s) for s in sentences(answer))


def terms(text: str) -> set[str]:
    """What a text is about: content words (cut to their first letters), years, and Chinese character
    pairs once question words are removed."""
    found = {w.lower()[:_STEM] for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in _STOP_WORDS}
    found |= set(_YEAR.findall(text))
    for run in CJK_RUN_RE.findall(_ZH_STOP.sub(" ", text)):
        found |= {run[i : i + 2] for i in range(len(run) - 1)} or {run}
    return found


def uncovered(answer: str, sub_questions: Sequence[str]) -> list[str]:
    """Sub-questions the answer does not touch (see the module docstring)."""
    if not sub_questions:
        return []
    per_question = [terms(q) for q in sub_questions]
    shared = set.intersection(*per_question) if len(per_question) > 1 else set()
    said = terms(answer)
    missing = []
    for question, own in zip(sub_questions, per_question, strict=True):
        wanted = (own - shared) or own
        if wanted and not wanted & said:
            missing.append(question)
    return missing


def cite_figures(answer: str, sources: Sequence[str]) -> tuple[str, int]:
    """The answer with a marker added to each claim that states figures but cites nothing (and is not
    followed by a marker run), pointing at the first passage holding all its figures; and how many got
    one. Sentences whose figures no single passage holds are left as written."""
    parts = _SENTENCE_END_KEPT.split(answer)
    added = 0
    for i in range(0, len(parts), 2):
        piece = parts[i]
        following = parts[i + 2] if i + 2 < len(parts) else ""
        if not piece.strip() or cited_numbers(piece) or _MARKER_RUN.match(following.strip()):
            continue
        if not is_claim(piece) or not answer_figures(piece):
            continue
        holder = next((n for n, s in enumerate(sources, 1) if check_answer(piece, [s]).result == "supported"), 0)
        if not holder:
            continue
        body, closing = _CLOSING.match(piece.rstrip()).groups()  # type: ignore[union-attr]
        gap = "" if CJK_RE.search(body) else " "
        parts[i] = f"{body}{gap}[{holder}]{closing}{piece[len(piece.rstrip()) :]}"
        added += 1
    return "".join(parts), added


def _unsupported(answer: str, sources: Sequence[str]) -> tuple[str, ...]:
    """Figures of the answer in no passage it cites, then figures of a citing sentence in no passage
    that sentence cites (a marker run opening a sentence counts for the one before)."""
    found = list(check_answer(answer, sources).unsupported)
    for sentence in sentences(answer):
        if any(1 <= n <= len(sources) for n in cited_numbers(sentence)):
            found += [f for f in check_answer(sentence, sources).unsupported if f not in found]
    return tuple(found)


def review(answer: str, passages: Sequence[Passage], sub_questions: Sequence[str]) -> Review:
    """Checks a draft against the three criteria; never raises."""
    sources = passage_sources(passages)
    answer, cited_by_code = cite_figures(answer, sources)
    recited = False
    if _unsupported(answer, sources):
        fixed = recite(answer, sources)
        if fixed is not None:
            answer, recited = fixed, True
    claims = [s for s in sentences(answer) if is_claim(s)]
    uncited = tuple(s for s in claims if not cited_numbers(s))
    bad = tuple(sorted(n for n in cited_numbers(answer) if not 1 <= n <= len(passages)))
    unsupported = _unsupported(answer, sources)
    was_refused = refused(answer)
    missing = () if was_refused else tuple(uncovered(answer, sub_questions))
    failed = []
    if uncited or bad:
        failed.append(CITED)
    if unsupported:
        failed.append(SUPPORTED)
    if was_refused or missing or not answer.strip():
        failed.append(ANSWERED)
    return Review(
        answer=answer,
        failed=tuple(failed),
        uncited=uncited,
        bad_markers=bad,
        unsupported=unsupported,
        refused=was_refused,
        uncovered=missing,
        claims=len(claims),
        cited_claims=len(claims) - len(uncited),
        recited=recited,
        cited_by_code=cited_by_code,
    )


def describe(result: Review) -> str:
    """One line for the review stage: what failed, with the evidence."""
    repaired = []
    if result.recited:
        repaired.append("citations re-pointed to the passages holding the figures")
    if result.cited_by_code:
        repaired.append(f"{result.cited_by_code} uncited figures given the passage holding them")
    if result.passed:
        return "passed" + (f" ({'; '.join(repaired)})" if repaired else "")
    parts = []
    if result.uncited:
        parts.append(f"{len(result.uncited)} of {result.claims} claims cite no passage")
    if result.bad_markers:
        parts.append("cites passages that do not exist: " + ", ".join(f"[{n}]" for n in result.bad_markers))
    if result.unsupported:
        parts.append("figures in no cited passage: " + ", ".join(result.unsupported))
    if result.refused:
        parts.append("refused (insufficient information)")
    elif not result.answer.strip():
        parts.append("empty answer")
    if result.uncovered:
        parts.append("not covered: " + " | ".join(result.uncovered))
    parts.extend(result.notes)
    return "failed: " + "; ".join(parts) + (f" ({'; '.join(repaired)})" if repaired else "")
