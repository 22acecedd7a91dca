"""Conversions between retriever protos and store records; nothing else."""

from __future__ import annotations

from collections.abc import Mapping

from weaverbird.v1 import common_pb2, retriever_pb2

from weaverbird_retriever import provenance
from weaverbird_retriever.stores import ChunkRecord, Hit, point_id
from weaverbird_retriever.stores.base import SearchMode

_ORIGIN_NAMES = {common_pb2.ORIGIN_LOCAL: "local", common_pb2.ORIGIN_WEB: "web"}
_ORIGIN_VALUES = {v: k for k, v in _ORIGIN_NAMES.items()}

# Payload fields stored as-is (strings and ints); origin is stored by name so filters read naturally.
_PLAIN_FIELDS = (
    "document_id",
    "title",
    "source",
    "page",
    "language",
    "company",
    "year",
    "quarter",
    "published_date",
    "chunk_index",
    "heading",
    "doc_type",
)


def payload_to_dict(payload: common_pb2.ChunkPayload) -> dict[str, str | int | float | list[str]]:
    out: dict[str, str | int | float | list[str]] = {name: getattr(payload, name) for name in _PLAIN_FIELDS}
    out["origin"] = _ORIGIN_NAMES.get(payload.origin, "local")
    out["aliases"] = list(payload.aliases)
    return out


def dict_to_payload(data: Mapping[str, object]) -> common_pb2.ChunkPayload:
    payload = common_pb2.ChunkPayload()
    for name in _PLAIN_FIELDS:
        value = data.get(name)
        if value is not None and value != "":
            setattr(payload, name, type(getattr(payload, name))(value))
    payload.origin = _ORIGIN_VALUES.get(str(data.get("origin", "local")), common_pb2.ORIGIN_LOCAL)
    aliases = data.get("aliases")
    if isinstance(aliases, list):
        payload.aliases.extend(str(a) for a in aliases)
    return payload


def chunk_to_record(chunk: retriever_pb2.Chunk) -> ChunkRecord:
    payload = payload_to_dict(chunk.payload)
    if chunk.HasField("provenance"):
        payload.update(provenance.to_payload(chunk.provenance))
    chunk_id = chunk.id or point_id(chunk.payload.document_id, chunk.payload.chunk_index)
    return ChunkRecord(id=chunk_id, vector=list(chunk.vector), text=chunk.text, payload=payload)


def filter_to_dict(flt: common_pb2.PayloadFilter) -> dict[str, str | int]:
    out: dict[str, str | int] = {}
    for name in ("document_id", "company", "year", "quarter", "language", "doc_type"):
        if flt.HasField(name):
            out[name] = getattr(flt, name)
    if flt.HasField("origin"):
        out["origin"] = _ORIGIN_NAMES.get(flt.origin, "local")
    return out


def hit_to_proto(hit: Hit, term_coverage: float | None = None) -> retriever_pb2.SearchHit:
    return retriever_pb2.SearchHit(
        id=hit.id,
        score=hit.score,
        text=hit.text,
        payload=dict_to_payload(hit.payload),
        rank_score=hit.rank_score,
        term_coverage=term_coverage,
    )


MODES: dict[int, SearchMode] = {
    retriever_pb2.SEARCH_MODE_DENSE: "dense",
    retriever_pb2.SEARCH_MODE_LEXICAL: "lexical",
    retriever_pb2.SEARCH_MODE_HYBRID: "hybrid",
}
MODE_VALUES = {name: value for value, name in MODES.items()}
