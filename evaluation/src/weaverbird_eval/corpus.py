"""Chunks an evaluation corpus with the system's own chunker, remembering which unit each chunk is from."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from weaverbird_common.docs.chunker import chunk_document, embedding_text
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.docs.entities import document_entities
from weaverbird_common.docs.metadata import metadata_from_filename

from weaverbird_eval.datasets import EvalSet


@dataclass
class Chunks:
    texts: list[str]  # what gets embedded and BM25-indexed: title / heading above the chunk text
    unit_ids: list[str]  # unit of each chunk, parallel to texts
    # Catalog payload of each chunk (company, aliases, year, quarter, doc_type, date), as the ingester reads it
    # from the document's name and first pages (FinanceBench's "3M_2022_10K" and its cover page);
    # empty where units have no document title (Fin-Eva).
    metadata: list[dict[str, Any]]


def unit_metadata(title: str, text: str = "") -> dict[str, Any]:
    """What the ingester would store for a document named `title` whose text is `text`."""
    found = document_entities(text, title)
    fields = {
        "company": found.company,
        "aliases": list(found.aliases),
        "year": found.year,
        "quarter": found.quarter,
        "doc_type": found.doc_type,
        # As the loader dates it: the file name's "dated-YYYY-MM-DD", else the latest date of the first pages.
        "published_date": metadata_from_filename(title).published or found.dated,
    }
    return {k: v for k, v in fields.items() if v}


def corpus_catalog(metadata: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """{company: its aliases} over a corpus's chunk metadata or payloads: the KB's own catalog, for
    `questions.alias_map` and `filters_from_question`, as the retriever's Catalog RPC reports it."""
    catalog: dict[str, set[str]] = defaultdict(set)
    for meta in metadata:
        if company := meta.get("company"):
            catalog[company].update(meta.get("aliases") or ())
    return {company: sorted(aliases) for company, aliases in sorted(catalog.items())}


def _texts(evalset: EvalSet) -> dict[str, str]:
    """Each titled document's text, as the ingester reads it whole: its units in page order ("DOC#p3"),
    else corpus order."""
    by_title: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for order, unit in enumerate(evalset.units):
        if unit.title:
            page = re.search(r"#p(\d+)$", unit.id)
            by_title[unit.title].append((int(page.group(1)) if page else order, unit.text))
    return {title: "\n".join(part for _, part in sorted(parts)) for title, parts in by_title.items()}


def chunk_units(evalset: EvalSet) -> Chunks:
    texts: list[str] = []
    unit_ids: list[str] = []
    metadata: list[dict[str, Any]] = []
    per_title = {title: unit_metadata(title, text) for title, text in _texts(evalset).items()}
    for unit in evalset.units:
        doc = Document(unit.id, unit.title, unit.id, [Page(None, unit.text)], evalset.language, "", None, None, "")
        meta = per_title.get(unit.title, {})
        for chunk in chunk_document(doc):
            texts.append(embedding_text(doc, chunk))
            unit_ids.append(unit.id)
            metadata.append(meta)
    return Chunks(texts, unit_ids, metadata)
