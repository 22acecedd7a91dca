"""Chart data: categories and series copied from the passages; code picks the chart type and checks values.

The model only copies: labels, and each figure as written with its passage number. The orchestrator
(tasks/chart.py) reads the figures (scale words included), puts them on one scale, checks each against the
passage it cites and chooses bar / line / pie from the question or the data.
"""

from __future__ import annotations

from weaverbird_generator.tasks.common import TaskRequest, copy_rules, json_messages

FOCUS = False  # a chart needs every row of a table, not only the rows that share words with the question
MAX_TOKENS = 400

_SHAPE = '{"title": "<title>", "categories": ["<label>", ...], "series": [{"name": "<name>", "values": ["<figure>", ...], "passage": <number>}]}'  # noqa: E501

_SYSTEM = {
    "en": copy_rules(
        "You copy the data for a chart from the numbered passages in <information>.",
        [
            f"Output one JSON object and nothing else: {_SHAPE}",
            "categories: the labels of the chart (periods, items, segments), in the order of the passage.",
            "values: one per category, taken from that category's own row and column, copied exactly as written "
            "with its unit.",
            '"passage": the number of the passage the values come from.',
            "Use only figures written in the passages. Never compute or invent one.",
        ],
        "en",
    ),
    "zh": copy_rules(
        "你从 <information> 中带编号的资料里抄写图表数据。",
        [
            f"只输出一个 JSON 对象，不要其他内容：{_SHAPE}",
            "categories：图表的标签（时期、项目、板块），按资料中的顺序。",
            "values：每个标签一个值，取该标签所在的行和列，按资料原文照抄，带上单位。",
            '"passage"：这些值所在资料的编号。',
            "只使用资料中写出的数字，不要计算或编造。",
        ],
        "zh",
    ),
}


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    return json_messages(_SYSTEM, request)
