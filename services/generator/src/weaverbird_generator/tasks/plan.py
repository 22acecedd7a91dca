"""PEER plan: sub-questions of an analytical question (first version)."""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns, information_block

FOCUS = False
MAX_TOKENS = 120

_SYSTEM = {
    "en": "Split the analytical question into at most 3 short sub-questions that can each be answered by looking up one fact. Output one sub-question per line, nothing else.",
    "zh": "把分析性问题拆成最多 3 个简短的子问题，每个子问题只需查找一个事实即可回答。每行一个子问题，不要输出其他内容。",
}


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    info = information_block(request.passages, request.language)
    user = f"{info}\n\n{neutralise(request.question).strip()}"
    if request.instruction:
        user += f"\n\n{neutralise(request.instruction).strip()}"
    return [
        {"role": "system", "content": _SYSTEM[request.language]},
        *example_turns(request.examples),
        {"role": "user", "content": user},
    ]
