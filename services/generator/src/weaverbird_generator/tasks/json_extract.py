"""Structured extraction: one JSON object with the requested keys (first version)."""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns, information_block

FOCUS = True
MAX_TOKENS = 300

_SYSTEM = {
    "en": "Extract what the user asks from the numbered passages in <information> as one JSON object with exactly the requested keys. Use only values written in the passages; use null when a value is missing. Output only the JSON.",
    "zh": "根据 <information> 中带编号的资料，按用户要求的键提取为一个 JSON 对象。只使用资料中写出的值，缺失的值写 null。只输出 JSON。",
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
