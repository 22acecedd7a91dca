"""The figures step of a calculation: the model copies the cited figures and a formula; code computes (first version)."""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns, information_block

FOCUS = True
MAX_TOKENS = 200

_SYSTEM = {
    "en": 'Extract the figures the question needs from the numbered passages in <information>. Write one JSON object per line: {"label": ..., "text": figure as written, "passage": number}, then a last line: {"formula": expression over the labels}. Use only figures written in the passages.',
    "zh": '从 <information> 中带编号的资料里提取问题所需的数字。每行写一个 JSON 对象：{"label": ..., "text": 原文中的数字, "passage": 编号}，最后一行写 {"formula": 用标签写的算式}。只使用资料中写出的数字。',
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
