"""Structured extraction: one JSON object with the requested keys, values copied from the passages.

The orchestrator (tasks/extraction.py) puts the requested shape in the instruction ("Keys: ..." or
"One entry per item: ...") and validates what comes back: keys, figures against the passages, no extra
keys. Values are copied as written, unit and scale included ("<figure> <unit>"): a small model copies
far better than it converts, and code can read "<figure> million" exactly.
"""

from __future__ import annotations

from weaverbird_generator.tasks.common import TaskRequest, copy_rules, json_messages

FOCUS = False  # a table must reach the model whole: focusing keeps only rows that share words with the question
MAX_TOKENS = 400

_SYSTEM = {
    "en": copy_rules(
        "You copy data from the numbered passages in <information> into JSON.",
        [
            "Output one JSON object and nothing else: no code fence, no explanation.",
            "Use exactly the keys the user asks for, spelled as asked. Add no other key.",
            "Copy each value exactly as written in the passages, with its unit. Do not compute or convert.",
            "If a value is not in the passages, write null.",
        ],
        "en",
    ),
    "zh": copy_rules(
        "你把 <information> 中带编号的资料里的数据抄写成 JSON。",
        [
            "只输出一个 JSON 对象，不要代码块，不要解释。",
            "只用用户要求的键，写法与要求一致，不要添加其他键。",
            "每个值按资料原文照抄，带上单位，不要计算或换算。",
            "资料中没有的值写 null。",
        ],
        "zh",
    ),
}


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    return json_messages(_SYSTEM, request)
