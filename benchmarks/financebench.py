"""Loads the FinanceBench page corpus and questions from ../shared/data (read by path, never copied)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.docs.metadata import metadata_from_filename

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    doc_name: str
    evidence_pages: tuple[int, ...]  # 1-based, like our Page.number


def page_documents(data_dir: Path, limit_pages: int | None = None) -> Iterator[Document]:
    """One Document per filing, pages numbered pypdf index + 1 as the PDF loader numbers them."""
    pages: dict[str, list[Page]] = defaultdict(list)
    with (data_dir / "financebench" / "pages.jsonl").open() as fh:
        for n, line in enumerate(fh):
            if limit_pages is not None and n >= limit_pages:
                break
            row = json.loads(line)
            if row["text"].strip():
                pages[row["doc_name"]].append(Page(row["page_num"] + 1, row["text"]))
    for doc_name, doc_pages in sorted(pages.items()):
        meta = metadata_from_filename(doc_name)
        yield Document(
            document_id=document_id_for(f"{doc_name}.pdf"),
            title=doc_name,
            source=f"{doc_name}.pdf",
            pages=sorted(doc_pages, key=lambda p: p.number or 0),
            language="en",
            company=meta.company,
            year=meta.year,
            quarter=meta.quarter,
            published=meta.published,
        )


def questions(data_dir: Path) -> list[Question]:
    out = []
    with (data_dir / "financebench" / "questions.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            out.append(
                Question(
                    id=row["financebench_id"],
                    question=row["question"],
                    doc_name=row["doc_name"],
                    evidence_pages=tuple(e["evidence_page_num"] + 1 for e in row["evidence"]),
                )
            )
    return out
