"""Chunks an evaluation corpus with the system's own chunker, remembering which unit each chunk is from."""

from __future__ import annotations

from dataclasses import dataclass

from weaverbird_common.docs.chunker import chunk_document, embedding_text
from weaverbird_common.docs.documents import Document, Page

from weaverbird_eval.datasets import EvalSet


@dataclass
class Chunks:
    texts: list[str]  # what gets embedded and BM25-indexed: title / heading above the chunk text
    unit_ids: list[str]  # unit of each chunk, parallel to texts


def chunk_units(evalset: EvalSet) -> Chunks:
    texts: list[str] = []
    unit_ids: list[str] = []
    for unit in evalset.units:
        doc = Document(unit.id, unit.title, unit.id, [Page(None, unit.text)], evalset.language, "", None, None, "")
        for chunk in chunk_document(doc):
            texts.append(embedding_text(doc, chunk))
            unit_ids.append(unit.id)
    return Chunks(texts, unit_ids)
