"""PEER plan: an analytical question split into sub-questions that each look up one fact.

Measured on Qwen2.5-Coder-1.5B over eleven invented questions (never the evaluation's). In Chinese, the
rule alone lost the company and the year ("原因是什么？"), and asking for them, or ending the user turn
with a "子问题：" cue, made it answer instead, with made-up figures; one worked turn written with
placeholders (<公司>, <指标>: nothing it could copy as a fact) made it list sub-questions that keep the
company and the year, without copying the placeholders. In English the rule alone keeps them, and the
same worked turn made it copy the turn's shape (last year's figure for a one-year question), so English
has no turn. It still asks for the comparison itself as a last line now and then, and may list more
than three: the orchestrator keeps the first few and drops lines that are not questions (tasks/peer.py).
"""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns

FOCUS = False
MAX_TOKENS = 120

_SYSTEM = {
    "en": (
        "Split the analytical question into at most three short sub-questions, each answered by looking up one "
        "fact. Output one sub-question per line, nothing else."
    ),
    "zh": (
        "把分析性问题拆成最多三个简短的子问题，每个子问题只需查找一个事实即可回答。每行一个子问题，不要输出其他内容。"
    ),
}

# Chinese only: one worked turn showing the shape (sub-questions keep the company and the period).
# In English the rule alone does that, and the turn made the model copy its "this year / last year".
_FORMAT = {
    "zh": (
        "<公司>本年的<指标>比上年高了多少？为什么？",
        "<公司>本年的<指标>是多少？\n<公司>上年的<指标>是多少？\n<公司><指标>变化的原因是什么？",
    ),
}


def _format_turns(language: str) -> list[dict[str, str]]:
    if language not in _FORMAT:
        return []
    asked, listed = _FORMAT[language]
    return [{"role": "user", "content": asked}, {"role": "assistant", "content": listed}]


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    user = neutralise(request.question).strip()
    if request.instruction:
        user += f"\n\n{neutralise(request.instruction).strip()}"
    return [
        {"role": "system", "content": _SYSTEM[request.language]},
        *_format_turns(request.language),
        *example_turns(request.examples),
        {"role": "user", "content": user},
    ]
