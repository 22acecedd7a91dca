"""Checks of generator requests at the gRPC edge; each failure is an InvalidArgument naming the field."""

from __future__ import annotations

from weaverbird.v1 import generator_pb2
from weaverbird_common.validation import (
    MAX_LABEL_CHARS,
    check_choice,
    check_count,
    check_int,
    check_number,
    check_text,
)

from weaverbird_generator.tasks import TASKS

# One passage is a retrieved chunk (~250-400 tokens) or a web passage; this bounds it far above that.
MAX_PASSAGE_TEXT_CHARS = 50_000
LANGUAGES = ("", "en", "zh")
# Citation numbers are 1..J in practice; this only keeps them readable in the prompt.
MAX_PASSAGE_NUMBER = 10_000
# llama.cpp and TGI take a 32-bit unsigned seed.
MAX_SEED = 2**32 - 1
TASK_NAMES = ("", *TASKS)
MAX_EXAMPLES = 16
MAX_TURNS = 20
MAX_INSTRUCTION_CHARS = 4_000
ROLES = ("user", "assistant")


def validate_generate(request: generator_pb2.GenerateRequest, *, max_question_chars: int, max_passages: int) -> None:
    """Question, passages, language and sampling of a request, before any prompt is built."""
    check_text(request.question, "question", max_chars=max_question_chars, required=True)
    check_count(request.passages, "passages", maximum=max_passages)
    for i, p in enumerate(request.passages):
        field = f"passages[{i}]"
        check_int(p.number, f"{field}.number", minimum=1, maximum=MAX_PASSAGE_NUMBER)
        check_text(p.title, f"{field}.title", max_chars=MAX_LABEL_CHARS)
        check_text(p.source, f"{field}.source", max_chars=MAX_LABEL_CHARS)
        check_text(p.text, f"{field}.text", max_chars=MAX_PASSAGE_TEXT_CHARS)
    check_choice(request.language, "language", LANGUAGES)
    check_choice(request.task, "task", TASK_NAMES)
    check_count(request.examples, "examples", maximum=MAX_EXAMPLES)
    for i, e in enumerate(request.examples):
        check_text(e.question, f"examples[{i}].question", max_chars=max_question_chars, required=True)
        check_text(e.answer, f"examples[{i}].answer", max_chars=MAX_INSTRUCTION_CHARS, required=True)
    check_text(request.instruction, "instruction", max_chars=MAX_INSTRUCTION_CHARS)
    check_count(request.history, "history", maximum=MAX_TURNS)
    for i, t in enumerate(request.history):
        check_choice(t.role, f"history[{i}].role", ROLES)
        check_text(t.text, f"history[{i}].text", max_chars=MAX_INSTRUCTION_CHARS)
    s = request.sampling
    check_int(s.max_tokens, "sampling.max_tokens", minimum=0, maximum=2**31 - 1)
    check_number(s.temperature, "sampling.temperature", minimum=0.0, maximum=2.0)
    check_number(s.top_p, "sampling.top_p", minimum=0.0, maximum=1.0)
    check_int(s.seed, "sampling.seed", minimum=0, maximum=MAX_SEED)
