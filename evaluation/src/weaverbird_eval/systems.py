"""Retrieval systems under evaluation: the dense path (an embedder backend + Qdrant Edge, exactly the
services' components) and BM25 baselines. Each ranks chunk indices for a batch of queries."""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from tqdm import tqdm
from weaverbird_common.questions import filters_from_question
from weaverbird_embedder.backends import EmbeddingBackend, build_backend
from weaverbird_retriever.stores import ChunkRecord, open_store, point_id

from weaverbird_eval.cache import cache_dir

Ranking = list[tuple[int, float]]  # (chunk index, score), best first
Metadata = Sequence[dict[str, Any]]  # payload filter fields per chunk (company, year, quarter)



class System(Protocol):
    name: str

    def index(self, texts: Sequence[str], language: str, label: str, metadata: Metadata | None = None) -> None: ...

    def search(self, queries: Sequence[str], depth: int) -> list[Ranking]: ...

    def close(self) -> None: ...


# ---------------------------------------------------------------------------------------------
# Dense: embedder backend + the retriever's Qdrant Edge store
# ---------------------------------------------------------------------------------------------


class DenseSystem:
    """Embeds chunks as passages (cached on disk per model and corpus), loads them into a fresh Edge
    collection, and searches it with query embeddings: the services' own code without the gRPC hops.

    With `filters=True` (system name `filtered-<backend>`) it searches as the orchestrator does with
    metadata filters: company / year / quarter taken from the question narrow the search first, and
    the unfiltered results fill the ranking after them, so a wrong guess never hides the KB."""

    def __init__(self, backend_name: str, cache: Path | None = None, filters: bool = False) -> None:
        self.backend: EmbeddingBackend = build_backend(backend_name)
        self.name = backend_name
        self.backend_name = backend_name  # cache key: filtered and plain runs share embeddings
        self.filters = filters
        self._companies: list[str] = []
        self._cache = cache or cache_dir()
        self._dir = Path(tempfile.mkdtemp(prefix="weaverbird-eval-"))
        self._store = None
        self._ids: dict[str, int] = {}
        self.passages = np.zeros((0, self.backend.dimension), np.float32)

    def embed_passages(self, texts: Sequence[str], label: str) -> np.ndarray:
        digest = hashlib.sha1("\x00".join([self.backend.model_id, *texts]).encode()).hexdigest()[:16]
        path = self._cache / f"{label}-{self.backend_name}-{digest}.npy"
        if path.exists():
            return np.load(path)
        step = self.backend.max_batch_size
        parts = [
            self.backend.embed(list(texts[i : i + step]), "passage")
            for i in tqdm(range(0, len(texts), step), desc=f"embed {label} ({self.name})", unit="batch")
        ]
        vectors = np.concatenate(parts).astype(np.float32)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
        return vectors

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        step = self.backend.max_batch_size
        return np.concatenate(
            [self.backend.embed(list(queries[i : i + step]), "query") for i in range(0, len(queries), step)]
        )

    def index(self, texts: Sequence[str], language: str, label: str, metadata: Metadata | None = None) -> None:
        metadata = metadata or [{} for _ in texts]
        self._companies = sorted({m["company"] for m in metadata if m.get("company")})
        self.passages = self.embed_passages(texts, label)
        if self._store is not None:
            self._store.close()
        shutil.rmtree(self._dir, ignore_errors=True)
        self._store = open_store("edge", path=str(self._dir), url=None, api_key=None, collection=label)
        self._store.ensure_collection(self.backend.dimension)
        self._ids = {}
        records = []
        for i, (text, vector, meta) in enumerate(zip(texts, self.passages, metadata, strict=True)):
            pid = point_id(label, i)
            self._ids[pid] = i
            records.append(ChunkRecord(pid, vector, text, {"document_id": label, "chunk_index": i, **meta}))
        for start in range(0, len(records), 1000):
            self._store.upsert(records[start : start + 1000])
        self._store.optimize()  # build HNSW now, as the retriever does after a bulk load

    def search(self, queries: Sequence[str], depth: int) -> list[Ranking]:
        assert self._store is not None, "index() first"
        vectors = self.embed_queries(queries)
        out = []
        for query, vector in zip(queries, vectors, strict=True):
            ranking = [(self._ids[h.id], h.score) for h in self._store.search(vector, depth)]
            found = filters_from_question(query, self._companies) if self.filters else {}
            if found:
                narrowed = [(self._ids[h.id], h.score) for h in self._store.search(vector, depth, found)]
                seen = {i for i, _ in narrowed}
                ranking = (narrowed + [(i, s) for i, s in ranking if i not in seen])[:depth]
            out.append(ranking)
        return out

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        shutil.rmtree(self._dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# BM25 (bm25s) with language-aware tokenisation
# ---------------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+", re.UNICODE)


class Tokenizer:
    """English: words, English stop words removed, Snowball-stemmed. Chinese: jieba's search-mode
    segmentation (words plus their sub-words), punctuation dropped, Latin words lower-cased."""

    def __init__(self, language: str) -> None:
        self.language = language
        if language == "zh":
            import jieba

            jieba.setLogLevel(60)  # its start-up banner is not an error
            self._cut = jieba.lcut_for_search
        else:
            import Stemmer
            from bm25s.stopwords import STOPWORDS_EN

            self._stem = Stemmer.Stemmer("english").stemWords
            self._stop = set(STOPWORDS_EN)

    def __call__(self, text: str) -> list[str]:
        if self.language == "zh":
            return [t.lower() for t in self._cut(text) if _WORD.fullmatch(t)]
        words = [w for w in _WORD.findall(text.lower()) if w not in self._stop]
        return self._stem(words)


class Bm25System:
    name = "bm25"

    def __init__(self) -> None:
        self._retriever = None
        self._tokenize: Tokenizer | None = None
        self._size = 0

    def index(self, texts: Sequence[str], language: str, label: str, metadata: Metadata | None = None) -> None:
        import bm25s

        self._tokenize = Tokenizer(language)
        corpus = [self._tokenize(t) or ["<empty>"] for t in tqdm(texts, desc=f"tokenise {label} (bm25)", unit="chunk")]
        self._retriever = bm25s.BM25()  # Lucene variant, k1=1.5, b=0.75
        self._retriever.index(corpus, show_progress=False)
        self._size = len(texts)

    def search(self, queries: Sequence[str], depth: int) -> list[Ranking]:
        assert self._retriever is not None and self._tokenize is not None, "index() first"
        out: list[Ranking] = []
        vocab = self._retriever.vocab_dict
        for q in queries:
            tokens = [t for t in self._tokenize(q) if t in vocab]
            if not tokens:  # nothing in common with the corpus: BM25 ranks nothing
                out.append([])
                continue
            docs, scores = self._retriever.retrieve([tokens], k=min(depth, self._size), show_progress=False)
            out.append([(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0])
        return out

    def close(self) -> None:
        self._retriever = None


# ---------------------------------------------------------------------------------------------
# Hybrid: BM25 and one embedder fused by reciprocal rank
# ---------------------------------------------------------------------------------------------

RRF_K = 60  # the constant of Cormack et al. (2009), also Qdrant's default for its RRF fusion


def reciprocal_rank_fusion(rankings: Sequence[Ranking], depth: int, k: int = RRF_K) -> Ranking:
    """Sum of 1 / (k + rank) over the input rankings; scores of different systems are never mixed."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, (index, _) in enumerate(ranking, start=1):
            fused[index] = fused.get(index, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:depth]


class HybridSystem:
    """`hybrid-<backend>`: what Qdrant's prefetch + RRF query would return for a sparse BM25 and a
    dense leg. Measured here to price a hybrid retriever before building one into the service."""

    def __init__(self, backend_name: str) -> None:
        self.name = f"hybrid-{backend_name}"
        self._bm25 = Bm25System()
        self._dense = DenseSystem(backend_name)
        self.backend = self._dense.backend

    def index(self, texts: Sequence[str], language: str, label: str, metadata: Metadata | None = None) -> None:
        self._bm25.index(texts, language, label)
        self._dense.index(texts, language, label, metadata)

    def search(self, queries: Sequence[str], depth: int) -> list[Ranking]:
        sparse = self._bm25.search(queries, depth)
        dense = self._dense.search(queries, depth)
        return [reciprocal_rank_fusion([s, d], depth) for s, d in zip(sparse, dense, strict=True)]

    def close(self) -> None:
        self._bm25.close()
        self._dense.close()


def build_system(name: str) -> System:
    if name == "bm25":
        return Bm25System()
    if name.startswith("hybrid-"):
        return HybridSystem(name.removeprefix("hybrid-"))
    if name.startswith("filtered-"):
        system = DenseSystem(name.removeprefix("filtered-"), filters=True)
        system.name = name
        return system
    return DenseSystem(name)
