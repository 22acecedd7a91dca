"""Follow-up rewriting: the user's last question made standalone from the conversation.

The conversation goes in as "user: ..." lines (tasks/common.history_text) with the follow-up set apart
below it. Only the user's turns: on the tune half of the project's follow-up pairs, Qwen2.5-Coder-1.5B's
rewrites passed the orchestrator's checks 21 times of 24 this way and 19 of 24 with the answers included
(it then dropped the company more often, and copied a date from an answer). The orchestrator checks the
output and falls back to its rules (tasks/followup.py in the orchestrator).
"""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, history_text, task_messages

FOCUS = False
MAX_TOKENS = 80

_SYSTEM = {
    "en": (
        "You rewrite a follow-up question so that it can be understood without the conversation. "
        "Take the company, the period (year or quarter) and the metric it leaves out from the conversation; "
        "keep everything the follow-up itself says. Do not answer it. "
        "Output only the rewritten question, in English, on one line."
    ),
    "zh": (
        "你负责改写追问，使其脱离对话也能看懂。从对话中补全追问省略的公司、期间（年份或季度）和指标；"
        "追问本身说到的内容保持不变。不要回答问题。只输出改写后的一个中文问题，占一行。"
    ),
}

_LABELS = {
    "en": ("Conversation", "Follow-up question", "Rewritten question:"),
    "zh": ("对话", "追问", "改写后的问题："),
}


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    conversation, follow_up, rewritten = _LABELS[request.language]
    # Only what the user asked: answers are full of figures and years the model would carry over.
    asked = [t for t in request.history if t.role == "user"]
    user = (
        f"{conversation}:\n{history_text(asked) or '-'}\n\n"
        f"{follow_up}: {' '.join(neutralise(request.question).split())}\n\n{rewritten}"
    )
    if request.instruction:
        user += f"\n\n{neutralise(request.instruction).strip()}"
    return task_messages(_SYSTEM[request.language], request.examples, user)
