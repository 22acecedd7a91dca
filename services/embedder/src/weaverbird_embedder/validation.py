"""Checks of embedder requests at the gRPC edge; each failure is an InvalidArgument naming the field."""

from __future__ import annotations

from weaverbird.v1 import embedder_pb2
from weaverbird_common.validation import check_count, check_enum, check_text

from weaverbird_embedder.batcher import Kind

KINDS: dict[int, Kind] = {
    embedder_pb2.EMBED_KIND_QUERY: "query",
    embedder_pb2.EMBED_KIND_PASSAGE: "passage",
}
_KIND_NAMES = {embedder_pb2.EMBED_KIND_QUERY: "EMBED_KIND_QUERY", embedder_pb2.EMBED_KIND_PASSAGE: "EMBED_KIND_PASSAGE"}


def validate_embed(request: embedder_pb2.EmbedRequest, *, max_batch: int, max_text_chars: int) -> Kind:
    """The request's kind, once kind, batch size and every text are within the limits."""
    check_enum(request.kind, "kind", _KIND_NAMES)
    check_count(request.texts, "texts", minimum=1, maximum=max_batch)
    for i, text in enumerate(request.texts):
        check_text(text, f"texts[{i}]", max_chars=max_text_chars, required=True)
    return KINDS[request.kind]
