"""Follow-up rewriting: the last question made standalone from the conversation (first version)."""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns, information_block

FOCUS = False
MAX_TOKENS = 80

_SYSTEM = {
    "en": "Rewrite the user's last question as one standalone question, using the conversation to fill in what it leaves out (company, year, metric). Output only the question.",
    "zh": "根据对话，把用户的最后一个问题改写成一个独立完整的问题，补全省略的公司、年份和指标。只输出问题。",
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
