"""Chart data: the chart's type, categories and series from the passages (first version)."""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns, information_block

FOCUS = True
MAX_TOKENS = 300

_SYSTEM = {
    "en": 'Extract the data for a chart from the numbered passages in <information>. Output one JSON object: {"type": "bar"|"line"|"pie", "title": ..., "categories": [...], "series": [{"name": ..., "values": [...], "passages": [...]}], "unit": ...}. Use only figures written in the passages. Output only the JSON.',
    "zh": '从 <information> 中带编号的资料里提取图表数据。输出一个 JSON 对象：{"type": "bar"|"line"|"pie", "title": ..., "categories": [...], "series": [{"name": ..., "values": [...], "passages": [...]}], "unit": ...}。只使用资料中的数字。只输出 JSON。',
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
