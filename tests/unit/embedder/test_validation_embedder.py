"""Embedder edge checks: kind, batch size and every text, each refusal naming the field."""

from __future__ import annotations

import pytest
from weaverbird.v1 import embedder_pb2
from weaverbird_common.errors import InvalidArgument
from weaverbird_embedder.validation import validate_embed

Req = embedder_pb2.EmbedRequest


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        (Req(texts=["x"]), "kind must be EMBED_KIND_QUERY or EMBED_KIND_PASSAGE, got 0"),
        (Req(texts=["x"], kind=99), "got 99"),
        (Req(kind=1), "texts must not be empty"),
        (Req(texts=["x"] * 5, kind=1), "texts has 5"),
        (Req(texts=["ok", " \t"], kind=2), "texts[1] must not be empty"),
        (Req(texts=["y" * 11], kind=2), "texts[0] has 11 characters"),
    ],
)
def test_bad_requests_name_the_field(request_: embedder_pb2.EmbedRequest, fragment: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        validate_embed(request_, max_batch=4, max_text_chars=10)
    assert fragment in str(err.value)


def test_a_good_request_gives_its_kind() -> None:
    assert validate_embed(Req(texts=["营业收入", "revenue"], kind=1), max_batch=4, max_text_chars=10) == "query"
