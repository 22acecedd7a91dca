"""Loads the FinanceBench page corpus and questions from ../shared/data (read by path, never copied)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    doc_name: str
    company: str
    evidence_pages: tuple[int, ...]  # 1-based, like our Page.number


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
                    company=row["company"],
                    evidence_pages=tuple(e["evidence_page_num"] + 1 for e in row["evidence"]),
                )
            )
    return out
