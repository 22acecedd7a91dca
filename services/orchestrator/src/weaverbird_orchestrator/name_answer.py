"""Does an answer name what a "which / who / what kind" question asks for? (plain logic, no gRPC)

"What was the largest liability in American Express's balance sheet in 2022?" asks for a name; the small
model, unable to find it, restates the question around a figure it found ("The largest liability ... in
2022 was $37,350 [3]"). Every figure is in a passage, so the numeric check passes it, yet it answers
nothing and looks like an answer. Such an echo is caught here: a name question whose answer, once its
figures, citations and filler words are set aside, holds no word the question does not already hold.

Only English is read: Chinese answers are rarely such echoes in the evaluations, and words are not
spaced. A question that offers its choices ("Among operations, investing, and financing activities,
which ...", "A or B") is left alone: the right answer names one of them, words the question holds. A
superlative asks for a name only when it ranks items, not a measure: "the largest liability" (a name)
against "the highest revenue" (a figure, a line item the concept map knows).

A second emptiness, whatever the question and in either language: an answer that announces a list and
stops, its items only citation markers ("Pfizer acquired three main companies in this report: [1] [2]
[3].", "... operates in multiple geographies, including [1].", "主要客户如下：[1]"). The markers point at
passages; the answer itself names none of the items.
"""

from __future__ import annotations

import re

from weaverbird_common.finance.concepts import concepts_in_text

from weaverbird_orchestrator.citations import without_citations

_WHICH = re.compile(r"^\W*(?:which|who|whom|whose)\b|\bwhich (?:one|of|type|kind|company|segment|region)\b", re.I)
_WHAT_KIND = re.compile(
    r"\bwhat (?:(?:is|was|are|were) the )?(?:type|types|kind|kinds|sort|industry|industries|sector|sectors"
    r"|region|regions|segment|segments|category|categories|product|products|nature|name|names)\b",
    re.I,
)
_SUPERLATIVE = re.compile(
    r"\bwhat (?:is|was|are|were) (?:(?:the|its|their) )?(?:single )?(?:largest|biggest|highest|lowest|smallest|main"
    r"|primary|major|key|most significant) (?P<noun>[a-z][a-z\s-]{2,40}?)"
    r"(?=\s+(?:in|of|for|on|at|as|during|among|that|to)\b|[?,.]|$)",
    re.I,
)
# Words that measure rather than name: "the largest amount", "the highest percentage".
_MEASURES = re.compile(
    r"\b(?:amount|value|figure|number|total|sum|percentage|percent|share|rate|ratio|margin|price|cost|growth|increase"
    r"|decrease|change)s?\b",
    re.I,
)
# A list of choices in the question: "A, B, and C", "A or B" (not a list of periods: "FY2023, FY2022 and FY2021").
_CHOICES = re.compile(r"\w+,\s+\w+[\w\s]*,?\s+(?:and|or)\s+\w+|\b\w+ or \w+\b", re.I)
_PERIOD = re.compile(r"\b(?:FY\s*'?\d{2,4}|(?:19|20)\d{2}|Q[1-4]|H[12])\b", re.I)

_FIGURE = re.compile(r"[$€£¥]?\d[\d,.]*%?|\[\d+(?:\s*[,-]\s*\d+)*\]")
_WORD = re.compile(r"[a-z][a-z&'-]*")
# Words any answer uses around a figure: they name nothing.
_FILLER = frozenset(
    """a an the of in on at to for from by with as and or but not no nor is are was were be been being has have
    had do does did it its this that these those there their they which who whom whose what when where how
    during fiscal year years quarter quarters fy q1 q2 q3 q4 h1 h2 ended ending end close as-of approximately
    about around roughly nearly some total amount amounts million millions billion billions thousand usd us
    dollar dollars percent per cent respectively reported stated shown listed following according based
    provided information passage passages context document filing report company company's also then than
    while whereas compared prior same period made done make do""".split()
)


def _stem(word: str) -> str:
    """A crude stem: enough to read "liabilities" as "liability" and "operating" as "operations"."""
    word = word.strip("'-").removesuffix("'s")
    return word[:5]


def _content(text: str) -> set[str]:
    text = _FIGURE.sub(" ", text.lower().replace("’", "'"))
    return {_stem(w) for w in _WORD.findall(text) if w not in _FILLER and len(w.strip("'-")) > 1}


# "Which year ...?" asks for a period, whose digits an answer holds: no name question.
_ASKS_PERIOD = re.compile(
    r"\b(?:which|what) (?:of the )?(?:fiscal |financial )?(?:years?'?|fy|quarters?|periods?|months?|dates?)(?![a-z])"
    r"|^\W*when\b",
    re.I,
)


def asks_for_name(question: str) -> bool:
    """The question asks for a name (an item, a kind, a party), not a figure, and offers no choices."""
    if _CHOICES.search(_PERIOD.sub("", question)) or re.search(r"[\u4e00-\u9fff]", question):
        return False
    if _ASKS_PERIOD.search(question):
        return False
    if _WHICH.search(question):
        return True
    kind = _WHAT_KIND.search(question)
    if kind is not None:
        # "What was the product percentage of revenue?" asks a measure of the kind, not its name.
        after = " ".join(question[kind.end() :].split()[:3])
        return not _MEASURES.search(after) and not concepts_in_text(after)
    match = _SUPERLATIVE.search(question)
    if match is None:
        return False
    noun = match.group("noun")
    return not _MEASURES.search(noun) and not concepts_in_text(noun)


def names_nothing(answer: str, question: str) -> bool:
    """The answer holds no word the question does not (figures, citations and filler set aside)."""
    return not (_content(answer) - _content(question))


def echoes_name_question(answer: str, question: str) -> bool:
    """A name question answered by restating it around figures: an answer that answers nothing."""
    return asks_for_name(question) and bool(answer.strip()) and names_nothing(answer, question)


# The end of a lead-in: a colon, or a word that introduces items ("including", "as follows", 如下, 包括).
_LEAD_IN_END = re.compile(
    r"(?:[:：]|\b(?:including|includes|include|such as|as follows|the following|following|namely)"
    r"|如下|包括|包含|分别为|分别是|有以下)\s*$",
    re.I,
)
# A sentence end inside the answer (not a decimal point): the lead-in is then not all the answer says.
_INNER_END = re.compile(r"[.!?](?=\s)|[。！？；]")


def lists_nothing(answer: str) -> bool:
    """The whole answer is one lead-in whose items are only citation markers (or nothing)."""
    body = without_citations(answer).strip()
    body = re.sub(r"[\s.。!！;；]+$", "", body)  # the closing stop after the markers
    return bool(body) and bool(_LEAD_IN_END.search(body)) and not _INNER_END.search(body)
