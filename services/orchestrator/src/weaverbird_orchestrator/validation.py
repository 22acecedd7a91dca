"""Checks of AskRequest fields the flow does not own; each failure is an InvalidArgument naming the field.

`QuestionFlow.params` validates the question, K, J, c, temperature and max_tokens (it fills in the
deployment defaults they are checked against); this covers the rest before the flow starts.
"""

from __future__ import annotations

from weaverbird.v1 import common_pb2, orchestrator_pb2
from weaverbird_common.validation import (
    MAX_ID_CHARS,
    check_choice,
    check_count,
    check_int,
    check_payload_filter,
    check_text,
)

# A turn is a question or an answer; answers run to max_answer_tokens (~4 characters each).
MAX_TURN_CHARS = 8_000
MAX_JSON_KEYS = 32
MAX_JSON_KEY_CHARS = 100
MAX_ROUNDS = 5
ROLES = ("user", "assistant")


def validate_ask(request: orchestrator_pb2.AskRequest, *, max_history_turns: int = 20) -> None:
    check_text(request.conversation_id, "conversation_id", max_chars=MAX_ID_CHARS)
    if request.HasField("filter"):
        check_payload_filter(request.filter)
    check_count(request.history, "history", maximum=max_history_turns)
    for i, turn in enumerate(request.history):
        check_choice(turn.role, f"history[{i}].role", ROLES)
        check_text(turn.text, f"history[{i}].text", max_chars=MAX_TURN_CHARS, required=True)
    # Proto3 enums are open: a newer client's value arrives as a bare number.
    check_int(request.task, "task", minimum=0, maximum=max(common_pb2.Task.values()))
    check_count(request.json_keys, "json_keys", maximum=MAX_JSON_KEYS)
    for i, key in enumerate(request.json_keys):
        check_text(key, f"json_keys[{i}]", max_chars=MAX_JSON_KEY_CHARS, required=True)
    if request.HasField("max_rounds"):
        check_int(request.max_rounds, "max_rounds", minimum=0, maximum=MAX_ROUNDS)
