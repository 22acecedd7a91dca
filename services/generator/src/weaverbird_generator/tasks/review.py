"""PEER review: the draft checked against the passages by the model (first version)."""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns, information_block

FOCUS = True
MAX_TOKENS = 120

_SYSTEM = {
    "en": "Review the draft answer against the numbered passages in <information>. Check: every claim is cited, every number appears in a cited passage, the question is answered. Output PASS, or FAIL followed by what to fix.",
    "zh": "根据 <information> 中的资料审查答案草稿：每个论断都有引用，每个数字都出现在被引用的资料中，问题得到回答。输出 PASS，或 FAIL 加上需要修改的内容。",
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
