"""The small knowledge base the hybrid-search tests share: six chunks in two languages, opened on
Qdrant Edge or qdrant-client local mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from weaverbird_retriever.stores import ChunkRecord, VectorStore, open_store, point_id

DIM = 16

DOCS = [
    # (text, company, year, language)
    ("Net sales of the Aurora segment rose to 812 million dollars.", "AURORA", 2023, "en"),
    ("Aurora paid a quarterly dividend and repurchased shares.", "AURORA", 2022, "en"),
    ("Borealis reported operating income growth in its freight unit.", "BOREALIS", 2023, "en"),
    ("Borealis capital expenditures were funded by operating cash flow.", "BOREALIS", 2022, "en"),
    ("青松新能源2024年营业收入同比增长，归母净利润下降。", "QINGSONG", 2024, "zh"),
    ("华岳银行不良贷款率保持稳定，拨备覆盖率上升。", "HUAYUE", 2024, "zh"),
]
QUARTERS = {1: 2}  # DOCS index -> fiscal quarter: Aurora's 2022 chunk is from a 10-Q


def random_vectors(n: int) -> np.ndarray:
    # Random dense vectors: whatever the lexical leg finds, the dense leg cannot find on its own.
    return np.random.default_rng(7).standard_normal((n, DIM)).astype(np.float32)


def open_hybrid_kb(kind: str, tmp_path: Path) -> VectorStore:
    """DOCS stored with their payload in a fresh "edge" or "local" store; the caller closes it."""
    path = str(tmp_path) if kind == "edge" else ":memory:"
    s = open_store(kind, path=path, url=None, api_key=None, collection="kb")
    s.ensure_collection(DIM)
    vectors = random_vectors(len(DOCS))
    s.upsert(
        [
            ChunkRecord(
                point_id(f"doc-{i}", 0),
                vectors[i],
                text,
                {
                    "document_id": f"doc-{i}",
                    "company": company,
                    "year": year,
                    "language": lang,
                    "aliases": [company.title(), company[:3]],
                    "doc_type": "10K" if lang == "en" else "ANNUAL",
                    **({"quarter": QUARTERS[i]} if i in QUARTERS else {}),
                },
            )
            for i, (text, company, year, lang) in enumerate(DOCS)
        ]
    )
    return s


def texts_of(hits: list) -> list[str]:
    return [h.text for h in hits]
