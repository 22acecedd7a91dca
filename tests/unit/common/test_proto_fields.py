"""message_from: a proto message filled from a plain object's same-named attributes."""

from __future__ import annotations

from dataclasses import dataclass

from weaverbird.v1 import orchestrator_pb2
from weaverbird_common.proto_fields import message_from


@dataclass(frozen=True)
class _Stage:
    stage: str
    round: int
    ms: float
    detail: str
    sub_questions: tuple[str, ...]
    passed: bool
    extra: str = "not a proto field"


def test_fields_are_taken_by_name_sequences_included() -> None:
    message = message_from(orchestrator_pb2.StageEvent, _Stage("plan", 2, 1.5, "d", ("a", "b"), True))
    assert message == orchestrator_pb2.StageEvent(
        stage="plan", round=2, ms=1.5, detail="d", sub_questions=["a", "b"], passed=True
    )


def test_an_override_wins_and_a_missing_attribute_leaves_its_field_unset() -> None:
    @dataclass(frozen=True)
    class Partial:
        json: str
        valid: bool

    message = message_from(orchestrator_pb2.StructuredAnswer, Partial('{"a": 1}', True), valid=False)
    assert message.json == '{"a": 1}'
    assert message.valid is False
    assert list(message.keys) == []
