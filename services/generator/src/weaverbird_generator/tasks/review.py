"""PEER review: the model's verdict on a draft answer (the draft comes in the request's instruction).

The orchestrator checks citations, figures and refusals in code first (tasks/peer.py); this verdict is
an optional extra opinion. Measured on Qwen2.5-Coder-1.5B over nine invented drafts (two right, seven
with a planted fault: a figure in no passage, the wrong passage cited, half the question left out, a
refusal): the first version's "Output PASS, or FAIL ..." got FAIL for all nine, right ones included; a
YES/NO form got 4 of 9; this wording, PASS stated first with its condition, got 7 of 9 (both right drafts
passed; the two faults it passed were the half-answered drafts, which the code's coverage check catches).
It adds little to the code's checks, so the orchestrator asks it only when configured, and never lets it
pass what the code failed.
"""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, information_block, task_messages

FOCUS = True
MAX_TOKENS = 60

_SYSTEM = {
    "en": (
        "Check the draft answer against the numbered passages in <information>. Reply PASS when its numbers "
        "appear in the passages it cites and it answers the question; otherwise reply FAIL and say what is "
        "wrong. One line."
    ),
    "zh": (
        "根据 <information> 中带编号的资料检查答案草稿。如果草稿中的数字都出现在所引用的资料中并且回答了问题，"
        "回复 PASS；否则回复 FAIL 并说明问题。只写一行。"
    ),
}
_LABELS = {"en": ("Question", "Draft"), "zh": ("问题", "答案草稿")}


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    question, draft = _LABELS[request.language]
    info = information_block(request.passages, request.language)
    user = (
        f"{info}\n\n{question}: {neutralise(request.question).strip()}\n\n"
        f"{draft}: {neutralise(request.instruction).strip()}"
    )
    return task_messages(_SYSTEM[request.language], request.examples, user)
