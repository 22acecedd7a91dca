"""The figures step of a calculation: the model copies each figure the question needs, with the passage
it is in, and writes the formula over their letters; the orchestrator checks and computes
(weaverbird_common.calc_format defines the format both sides use). The model never writes the
result: a 1.5B model copies figures well and does arithmetic badly. Placeholders only, never a figure."""

from __future__ import annotations

from weaverbird_common.calc_format import figure_line, formula_line, missing_line

from weaverbird_generator.tasks.common import TaskRequest, grounded_request, task_messages

FOCUS = True
MAX_TOKENS = 160

_SYSTEM = {
    "en": (
        "You prepare a calculation from the numbered passages in <information>. Do not compute anything.\n"
        "For each figure the question needs, write one line:\n"
        f"{figure_line('A', '<what it is>', '<the figure exactly as written in the passage>', '<passage number>')}\n"
        "Use the letters A, B, C in order. Then write one last line:\n"
        f"{formula_line('<the calculation with the letters, e.g. (A - B) / B * 100 for a change in percent>')}\n"
        f"Write nothing else. If a figure is not in the passages, write only: {missing_line('<what>')}"
    ),
    "zh": (
        "你根据 <information> 中带编号的资料准备计算，不要自己计算结果。\n"
        "问题需要的每个数字写一行：\n"
        f"{figure_line('A', '<指标名称>', '<资料中原样写出的数字及单位>', '<资料编号>')}\n"
        "依次使用字母 A、B、C。最后写一行：\n"
        f"{formula_line('<用字母写的算式，例如变化百分比写 (A - B) / B * 100>')}\n"
        f"不要写其他内容。如果资料中没有所需数字，只写：{missing_line('<缺少什么>')}"
    ),
}


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    return task_messages(_SYSTEM[request.language], request.examples, grounded_request(request))
