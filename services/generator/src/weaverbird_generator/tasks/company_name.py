"""A company's usual name in the other language: "亚马逊" -> "Amazon", "Tencent" -> "腾讯".

The knowledge base files English filings under English names and Chinese ones under Chinese names; a
user asks in either language. No offline list of companies' names in both languages exists in the
project's package sources (PyPI's Chinese market packages fetch them from the web at run time), so the
model, which has read both, is the general source. The request's language is the language wanted; the
orchestrator matches the reply against its catalog, so a wrong or invented name only fails to match.
Worked turns use companies far from any evaluation set.
"""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import Example, TaskRequest, task_messages

FOCUS = False
MAX_TOKENS = 16

_SYSTEM = (
    "You give the name a company is usually known by in another language. Reply with the name only, "
    "without a legal form, on one line. If you do not know the company, reply with the name unchanged."
)
_TARGET = {"en": "English", "zh": "Chinese"}

EXAMPLES = {
    "en": (Example("Name: 可口可乐\nEnglish name:", "Coca-Cola"), Example("Name: 丰田汽车\nEnglish name:", "Toyota")),
    "zh": (Example("Name: Coca-Cola\nChinese name:", "可口可乐"), Example("Name: Toyota\nChinese name:", "丰田汽车")),
}


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    name = " ".join(neutralise(request.question).split())
    examples = request.examples or EXAMPLES[request.language]
    return task_messages(_SYSTEM, examples, f"Name: {name}\n{_TARGET[request.language]} name:")
