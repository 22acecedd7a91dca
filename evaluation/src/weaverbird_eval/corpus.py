"""Chunks an evaluation corpus with the system's own chunker, remembering which unit each chunk is from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from weaverbird_common.docs.chunker import chunk_document, embedding_text
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.docs.metadata import metadata_from_filename

from weaverbird_eval.datasets import EvalSet


@dataclass
class Chunks:
    texts: list[str]  # what gets embedded and BM25-indexed: title / heading above the chunk text
    unit_ids: list[str]  # unit of each chunk, parallel to texts
    # company / year / quarter payload of each chunk, as the ingester derives it from a file name
    # (FinanceBench's "3M_2022_10K"); empty where the title carries none (TAT-QA, Fin-Eva).
    metadata: list[dict[str, Any]]


def unit_metadata(title: str) -> dict[str, Any]:
    meta = metadata_from_filename(title)
    found = {"company": meta.company, "year": meta.year, "quarter": meta.quarter}
    return {k: v for k, v in found.items() if v}


def chunk_units(evalset: EvalSet) -> Chunks:
    texts: list[str] = []
    unit_ids: list[str] = []
    metadata: list[dict[str, Any]] = []
    for unit in evalset.units:
        doc = Document(unit.id, unit.title, unit.id, [Page(None, unit.text)], evalset.language, "", None, None, "")
        meta = unit_metadata(unit.title)
        for chunk in chunk_document(doc):
            texts.append(embedding_text(doc, chunk))
            unit_ids.append(unit.id)
            metadata.append(meta)
    return Chunks(texts, unit_ids, metadata)
