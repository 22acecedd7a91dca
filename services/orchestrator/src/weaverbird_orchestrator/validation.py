"""Checks of AskRequest fields the flow does not own; each failure is an InvalidArgument naming the field.

`QuestionFlow.params` validates the question, K, J, c, temperature and max_tokens (it fills in the
deployment defaults they are checked against); this covers the rest before the flow starts.
"""

from __future__ import annotations

from weaverbird.v1 import orchestrator_pb2
from weaverbird_common.validation import MAX_ID_CHARS, check_payload_filter, check_text


def validate_ask(request: orchestrator_pb2.AskRequest) -> None:
    check_text(request.conversation_id, "conversation_id", max_chars=MAX_ID_CHARS)
    if request.HasField("filter"):
        check_payload_filter(request.filter)
