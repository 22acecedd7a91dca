"""Task classification by the model, the alternative to the orchestrator's rules (tasks/router.py there).
One word out; the orchestrator parses it and falls back to its rules when it names no task.

Measured with Qwen2.5-Coder-1.5B on the dev half of the project's labelled set (78 questions,
`python -m weaverbird_eval.task_routing`): a system prompt alone got 38 of 78 (most lookups called
calculations, every JSON request a lookup); the same four definitions led by the output asked for
("extraction" first: JSON or a template names the output) and eight worked questions as earlier turns
got 72; twelve turns (a lookup of an amount and a Chinese "评估" analysis added) 75. Two more turns or a
"Question: ... Kind:" frame changed nothing. The turns use invented companies and years only: the
reply is one word, but no prompt carries an amount a model could copy.
"""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import Example, TaskRequest, task_messages

FOCUS = False
MAX_TOKENS = 4

_SYSTEM = (
    "You sort financial questions by the kind of answer they want. Reply with one word:\n"
    "extraction - the user wants JSON, a {key: value} template, key-value pairs or structured data\n"
    "analysis - the user wants a chart, plot, graph or visual, or an analysis, assessment or trend\n"
    "calculation - the user wants two or more figures compared or combined: a difference, change, growth, "
    "ratio, sum or average\n"
    "lookup - anything else: one fact, figure, name or date stated in a document"
)

# Worked questions, shown as earlier turns (the 1.5B model follows turns better than definitions).
EXAMPLES = (
    Example("What net cash did Tolverne Mills generate from investing activities in 2022?", "lookup"),
    Example("泊岚电气2024年上半年的营业收入是多少？", "lookup"),
    Example("评估泊岚电气的现金流状况。", "analysis"),
    Example("Give Tolverne Mills' segment assets as key-value pairs.", "extraction"),
    Example("What was Tolverne Mills' operating profit in 2021?", "lookup"),
    Example("Extract Tolverne Mills' revenue and net income as JSON.", "extraction"),
    Example("How much did Tolverne Mills' operating profit grow from 2020 to 2021?", "calculation"),
    Example("Plot Tolverne Mills' quarterly revenue as a bar chart.", "analysis"),
    Example("泊岚电气的董事长是谁？", "lookup"),
    Example("以{客户名称: 销售额}的格式列出泊岚电气前五名客户。", "extraction"),
    Example("泊岚电气2023年净利润比2022年减少了多少？", "calculation"),
    Example("分析泊岚电气近三年的毛利率走势，并画折线图。", "analysis"),
)


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    """The same English instructions for both languages (the reply is an English word either way);
    the request's own examples, when it brings any, replace the built-in ones."""
    return task_messages(_SYSTEM, request.examples or EXAMPLES, neutralise(request.question).strip())
