"""Generator edge checks: NaN sampling, out-of-range numbers and oversized passages are refused by field."""

from __future__ import annotations

import math

import pytest
from weaverbird.v1 import generator_pb2
from weaverbird_common.errors import InvalidArgument
from weaverbird_generator.validation import validate_generate

Req = generator_pb2.GenerateRequest
P = generator_pb2.ContextPassage
S = generator_pb2.SamplingParams


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        (Req(question=" "), "question must not be empty"),
        (Req(question="x" * 101), "question has 101 characters"),
        (Req(question="q", passages=[P(number=1)] * 4), "passages has 4"),
        (Req(question="q", passages=[P(number=0)]), "passages[0].number"),
        (Req(question="q", passages=[P(number=1, text="t" * 60_000)]), "passages[0].text"),
        (Req(question="q", language="fr"), "language must be one of"),
        (Req(question="q", sampling=S(temperature=math.nan)), "sampling.temperature must be a finite number"),
        (Req(question="q", sampling=S(temperature=math.inf)), "sampling.temperature"),
        (Req(question="q", sampling=S(top_p=1.5)), "sampling.top_p"),
        (Req(question="q", sampling=S(max_tokens=-1)), "sampling.max_tokens"),
        (Req(question="q", sampling=S(seed=-7)), "sampling.seed"),
        (Req(question="q", sampling=S(seed=2**40)), "sampling.seed"),
    ],
)
def test_bad_requests_name_the_field(request_: generator_pb2.GenerateRequest, fragment: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        validate_generate(request_, max_question_chars=100, max_passages=3)
    assert fragment in str(err.value)


def test_a_good_request_passes() -> None:
    validate_generate(
        Req(question="Revenue?", passages=[P(number=1, text="Revenue was 5.")], sampling=S(max_tokens=8, seed=3)),
        max_question_chars=100,
        max_passages=3,
    )
