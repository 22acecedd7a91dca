"""Task classification by the model (compared with the rules in the orchestrator's task router; first version)."""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns, information_block

FOCUS = False
MAX_TOKENS = 4

_SYSTEM = {
    "en": "Classify the financial question. Answer with one word: lookup, calculation, extraction or analysis.",
    "zh": "对金融问题分类。只回答一个词：lookup、calculation、extraction 或 analysis。",
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
