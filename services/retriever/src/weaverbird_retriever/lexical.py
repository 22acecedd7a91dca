"""Sparse lexical (BM25) vectors of chunk and query text, English and Chinese alike.

Term weights come from Qdrant's own BM25 model (qdrant-edge-py's `Bm25`: Snowball-stemmed English
words, English stop words dropped, TF saturation k=1.2, b=0.75), so every store backend indexes
the same vectors and the IDF half of BM25 is kept by the store (sparse vectors with the IDF
modifier), where it stays right as the knowledge base grows. Chinese has no spaces between words,
so runs of CJK characters are segmented with jieba first (search mode: words and their sub-words,
so 营业收入 also matches 收入) and handed to the same model as space-separated words.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import qdrant_edge as qe

# Name of the sparse vector in every collection; the dense vector stays the unnamed default one.
LEXICAL_VECTOR = "lexical"

_CJK_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


@dataclass(frozen=True, slots=True)
class SparseVector:
    """Non-zero dimensions (token hashes) and their weights."""

    indices: list[int]
    values: list[float]


class LexicalEncoder:
    """Turns text into BM25 document or query vectors; thread-safe, built once per process."""

    def __init__(self) -> None:
        self._bm25 = qe.Bm25(qe.Bm25Config(language="english"))
        self._cut_lock = threading.Lock()
        self._cut = None

    def document(self, text: str) -> SparseVector:
        """Term-frequency weights of a chunk (IDF is applied by the store at query time)."""
        return _plain(self._bm25.embed_document(self._segment(text)))

    def query(self, text: str) -> SparseVector:
        """Each distinct query term with weight 1."""
        return _plain(self._bm25.embed_query(self._segment(text)))

    def _segment(self, text: str) -> str:
        if not _CJK_RUN.search(text):
            return text
        cut = self._jieba()
        return _CJK_RUN.sub(lambda m: " " + " ".join(cut(m.group())) + " ", text)

    def _jieba(self):  # jieba has no type hints
        # jieba loads its dictionary (about a second) on first use; English-only deployments never pay it.
        with self._cut_lock:
            if self._cut is None:
                import jieba

                jieba.setLogLevel(60)  # its start-up banner is not an error
                jieba.initialize()
                self._cut = jieba.lcut_for_search
        return self._cut


def _plain(vector: qe.SparseVector) -> SparseVector:
    return SparseVector(indices=list(vector.indices), values=list(vector.values))


_ENCODER: LexicalEncoder | None = None
_ENCODER_LOCK = threading.Lock()


def encoder() -> LexicalEncoder:
    """The process-wide encoder (its tokenizer tables are built once)."""
    global _ENCODER
    with _ENCODER_LOCK:
        if _ENCODER is None:
            _ENCODER = LexicalEncoder()
        return _ENCODER
