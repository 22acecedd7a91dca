"""Facts to and from the retriever's Fact message; its fields are named as Fact.payload()'s keys."""

from __future__ import annotations

from typing import Any

from weaverbird.v1 import retriever_pb2

from weaverbird_common.facts.model import Fact

_FIELDS = tuple(f.name for f in retriever_pb2.Fact.DESCRIPTOR.fields)


def to_proto(fact: Fact) -> retriever_pb2.Fact:
    payload = fact.payload()
    return retriever_pb2.Fact(**{name: payload[name] for name in _FIELDS if payload.get(name) is not None})


def from_proto(message: retriever_pb2.Fact) -> Fact:
    return Fact.from_payload(proto_payload(message))


def proto_payload(message: retriever_pb2.Fact) -> dict[str, Any]:
    """The message's fields as a flat payload (Fact.payload()'s keys)."""
    return {name: getattr(message, name) for name in _FIELDS}
