"""Task classification by the model, compared with the orchestrator's rules (tasks/router.py) in
README's "Questions beyond one lookup". One word out; the orchestrator parses it."""

from __future__ import annotations

from weaverbird_generator.prompt import neutralise
from weaverbird_generator.tasks.common import TaskRequest, example_turns

FOCUS = False
MAX_TOKENS = 4

_SYSTEM = (
    "Classify the user's financial question. Reply with exactly one word:\n"
    "lookup - one fact or figure stated in a document\n"
    "calculation - a comparison, change, growth rate, ratio, average or other arithmetic over figures\n"
    "extraction - the answer is wanted as JSON or key-value data\n"
    "analysis - an analysis, trend or report, or a chart / plot"
)
_SYSTEM_BY_LANGUAGE = {"en": _SYSTEM, "zh": _SYSTEM + "\nThe question may be in Chinese; still reply in English."}


def build_messages(request: TaskRequest) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": _SYSTEM_BY_LANGUAGE[request.language]},
        *example_turns(request.examples),
        {"role": "user", "content": neutralise(request.question).strip()},
    ]
