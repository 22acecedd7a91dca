"""Sparse lexical (BM25) vectors of chunk and query text, English and Chinese alike.

Term weights come from Qdrant's own BM25 model (qdrant-edge-py's `Bm25`: Snowball-stemmed English
words, English stop words dropped, TF saturation k=1.2, b=0.75), so every store backend indexes
the same vectors and the IDF half of BM25 is kept by the store (sparse vectors with the IDF
modifier), where it stays right as the knowledge base grows. Chinese has no spaces between words,
so runs of CJK characters are segmented with jieba first (search mode: words and their sub-words,
so 营业收入 also matches 收入) and handed to the same model as space-separated words.

Wordings differ between questions and filings ("capital expenditure" vs "Purchases of property, plant
and equipment"; 净利润 vs "net income"), so each chunk also carries one term per financial concept it
mentions (weaverbird_common.glossary), and a hybrid question searches for its concepts too, plus, at
half weight, the line items of any ratio it names. Literal look-ups (lexical mode: the coverage gate's
"does any chunk mention this name?") search the words alone.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import qdrant_edge as qe
from weaverbird_common.glossary import components, concepts, document_concepts
from weaverbird_common.questions import FRAMING_WORDS_EN, FRAMING_WORDS_ZH

# Name of the sparse vector in every collection; the dense vector stays the unnamed default one.
LEXICAL_VECTOR = "lexical"

_CJK_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# Concept terms are spelled as one made-up word ("glossaryconceptnetincome") that no text holds.
_CONCEPT_PREFIX = "glossaryconcept"
COMPONENT_WEIGHT = 0.5  # a ratio's line items count half as much as what the question names itself


@dataclass(frozen=True, slots=True)
class SparseVector:
    """Non-zero dimensions (token hashes) and their weights."""

    indices: list[int]
    values: list[float]


class LexicalEncoder:
    """Turns text into BM25 document or query vectors; thread-safe, built once per process."""

    def __init__(self) -> None:
        self._bm25 = qe.Bm25(qe.Bm25Config(language="english"))
        # The same analysis with Qdrant's Chinese stop words too (根据, 什么, 多少, 的 ...) and a question's
        # framing words (请问, 新闻资讯, "according"), for term coverage only: neither says anything about
        # whether a passage answers the question.
        stop = qe.StopwordsSet(
            languages={qe.Language.English, qe.Language.Chinese}, custom=set(FRAMING_WORDS_ZH | FRAMING_WORDS_EN)
        )
        self._content = qe.Bm25(qe.Bm25Config(language="english", stopwords=stop))
        self._cut_lock = threading.Lock()
        self._cut = None

    def document(self, text: str) -> SparseVector:
        """Term-frequency weights of a chunk and its concepts (IDF is applied by the store at query time)."""
        return _plain(self._bm25.embed_document(f"{self._segment(text)} {_concept_words(document_concepts(text))}"))

    def query(self, text: str, expand: bool = False) -> SparseVector:
        """Each distinct query term with weight 1; with `expand`, its concepts too, and the line items of
        the ratios it names at COMPONENT_WEIGHT."""
        if not expand:
            return _plain(self._bm25.embed_query(self._segment(text)))
        found = concepts(text)
        vector = _plain(self._bm25.embed_query(f"{self._segment(text)} {_concept_words(found)}"))
        parts = _concept_words(components(found))
        if parts:
            extra = self._bm25.embed_query(parts)
            have = set(vector.indices)
            for index, value in zip(extra.indices, extra.values, strict=True):
                if index not in have:
                    vector.indices.append(index)
                    vector.values.append(value * COMPONENT_WEIGHT)
        return vector

    def terms(self, text: str) -> frozenset[int]:
        """The distinct content terms of `text`: as the lexical leg reads a query (stemmed, English stop
        words dropped, Chinese segmented, no concepts), Chinese stop words and framing words dropped too."""
        return frozenset(self._content.embed_query(self._segment(text)).indices)

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


def term_coverage(query_terms: frozenset[int], text_terms: frozenset[int]) -> float:
    """Share of the query's terms the text holds; 1.0 for a query without terms (nothing is missing)."""
    return len(query_terms & text_terms) / len(query_terms) if query_terms else 1.0


def _concept_words(found: set[str]) -> str:
    return " ".join(sorted(_CONCEPT_PREFIX + c.removeprefix("§").replace("_", "") for c in found))


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
