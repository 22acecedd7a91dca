"""The form a question asks its answer to take, said to the model in one line (plain logic, no gRPC).

A yes/no question ("Did the risk decrease ...?", "是否...？") is answered with yes or no first, the figures
after: the small model otherwise answers "The risk decreased by $7 million [2]", which a reader has to turn
into the answer. A question asking for a name ("Which segment ...?") is answered with the name: the model
otherwise restates the question around an amount (name_answer.py withholds such an echo). Other questions
get no line. The line goes to the generator as the request's instruction, after the question.
"""

from __future__ import annotations

import re

from weaverbird_orchestrator.name_answer import asks_for_name

_FIRST_SENTENCE = re.compile(r"^[^?？.。!！]*[?？.。!！]?")
# The auxiliary that opens a yes/no question, at the start or after a leading clause ("Looking at VaR, did").
_YES_NO = re.compile(
    r"(?:^|[,;:]\s+)(?:did|does|do|is|are|was|were|has|have|had|can|could|will|would|should)\s+(?!you\b)", re.I
)
# "Did it increase or decrease?" offers two answers: it is no yes/no question.
_CHOICE = re.compile(r"\bor\b|\bwhich\b|\bwhat\b|\bhow\b|\bwhen\b|\bwhere\b|\bwho\b", re.I)
_ZH_YES_NO = re.compile(r"是否|吗[?？]?$|有没有|是不是")
_ZH_CHOICE = re.compile(r"还是|哪|什么|多少|几")

FORMS = {
    ("yes_no", "en"): "The question asks yes or no: begin the answer with Yes or No, then say what shows it.",
    ("yes_no", "zh"): "这是一个是非问题：请先回答“是”或“否”，再说明依据。",
    ("name", "en"): "The question asks for a name: name the item as the passages name it; an amount alone does not "
    "answer it.",
}


def asks_yes_no(question: str, language: str) -> bool:
    """The question's first sentence is a yes/no question that offers no choice."""
    match = _FIRST_SENTENCE.match(question.strip())
    first = match.group().strip() if match else ""
    if language == "zh":
        return bool(_ZH_YES_NO.search(first)) and not _ZH_CHOICE.search(first)
    return bool(_YES_NO.search(first)) and not _CHOICE.search(first)


def form_instruction(question: str, language: str) -> str:
    """The line telling the model the answer's form, or "" when the question asks for none in particular."""
    if asks_yes_no(question, language):
        return FORMS[("yes_no", "zh" if language == "zh" else "en")]
    if language != "zh" and asks_for_name(question):
        return FORMS[("name", "en")]
    return ""
