"""Retrieval systems under evaluation: the retriever's own store (Qdrant Edge with a dense and a lexical
vector per chunk, exactly the services' components) in each search mode, with or without the filters
the orchestrator reads from a question through the KB catalog, and a bm25s baseline. Each ranks chunk
indices for a batch of queries.

Names: `<backend>` dense only; `lexical-<backend>` BM25 leg only (the dense vectors are stored but unused);
`hybrid-<backend>[-rrf]` both legs fused in the store; `filtered-<backend>` dense with catalog filters;
`served-<backend>` hybrid with catalog filters, the retriever's default lexical and figure weights, and
passages about another year than the question's ranked last (weaverbird_common.periods): what the served
path does (`-noperiod` leaves that step out). A last `-fig<w>` sets the figure prior's weight
(stores.figures; `served-use-fig0`: the served path without it); `-spaced` before it stores the earlier,
spaced-only number density (stores.figures.spaced_number_density: 0 for unspaced Chinese).
Hybrid legs are fused by DBSF (the retriever's default); `-rrf` fuses by reciprocal rank instead, and a
`-lex<w>` suffix weighs the lexical leg w against the dense leg's 1 in the system's fusion (DBSF: w copies
of the lexical prefetch; `-rrf-lex<w>`: Qdrant's weighted RRF). `-noconcepts` (before any `-lex`) searches
hybrid questions without their glossary concepts, `-noperiod` without the period step."""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import Any, Protocol
from unittest import mock

import numpy as np
from tqdm import tqdm
from weaverbird_common.encoders import EmbeddingBackend, build_backend
from weaverbird_common.periods import prefer_period
from weaverbird_common.questions import alias_map, filters_from_question, search_filters
from weaverbird_retriever.catalog import read_catalog
from weaverbird_retriever.settings import RetrieverSettings
from weaverbird_retriever.stores import ChunkRecord, open_store, point_id
from weaverbird_retriever.stores import base as store_base
from weaverbird_retriever.stores.base import FusionKind, SearchMode, SearchOptions
from weaverbird_retriever.stores.figures import density_field, spaced_number_density

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

    With `filters=True` it searches as the orchestrator does with metadata filters: company / year /
    quarter read from the question, companies matched against the KB's catalog (the retriever's facets
    over what ingest stored: names and aliases, no hand-kept list), narrow the search first, and the
    unfiltered results fill the ranking after them, so a wrong guess never hides the KB."""

    def __init__(
        self,
        backend_name: str,
        cache: Path | None = None,
        filters: bool = False,
        mode: SearchMode = "dense",
        fusion: FusionKind = "dbsf",
        lexical_weight: float = 1.0,
        period: bool = False,
        concepts: bool = True,
        figure_weight: float = 0.0,
        density: Callable[[str], float] | None = None,
        model_path: str | None = None,
    ) -> None:
        # model_path: a sentence-transformers directory (a trained encoder) for that backend.
        self.backend: EmbeddingBackend = build_backend(backend_name, model_path)
        self.name = backend_name
        self.backend_name = backend_name  # cache key: every mode and filter setting shares embeddings
        self.filters = filters
        self.period = period  # passages about another year than the question's go last, as served
        self._texts: Sequence[str] = ()
        self.mode: SearchMode = mode
        self.fusion: FusionKind = fusion
        self.lexical_weight = lexical_weight
        self.concepts = concepts
        self.figure_weight = figure_weight
        self.density = density  # None: the store's own number density
        self._companies: list[str] = []
        self._aliases: dict[str, str] = {}
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
        self._texts = texts
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
        # Another density reader replaces the one the store calls at upsert, for this index only.
        reader = partial(density_field, density=self.density) if self.density else None
        with mock.patch.object(store_base, "density_field", reader) if reader else nullcontext():
            for start in range(0, len(records), 1000):
                self._store.upsert(records[start : start + 1000])
        self._store.optimize()  # build HNSW now, as the retriever does after a bulk load
        catalog = read_catalog(self._store, 1000)
        self._companies = [c.company for c in catalog.companies]
        self._aliases = alias_map({c.company: list(c.aliases) for c in catalog.companies})

    def search(self, queries: Sequence[str], depth: int) -> list[Ranking]:
        assert self._store is not None, "index() first"
        vectors = self.embed_queries(queries)
        out = []
        for query, vector in zip(queries, vectors, strict=True):
            options = SearchOptions(
                mode=self.mode,
                text=query,
                fusion=self.fusion,
                prefetch=max(50, depth),
                lexical_weight=self.lexical_weight,
                concepts=self.concepts,
                figure_weight=self.figure_weight,
            )
            if self.mode != "dense" and not query.strip():
                options = SearchOptions()
            ranking = [(self._ids[h.id], h.rank_score) for h in self._store.search(vector, depth, None, options)]
            found = filters_from_question(query, self._companies, aliases=self._aliases) if self.filters else {}
            if narrowing := search_filters(found):
                hits = self._store.search(vector, depth, narrowing, options)
                narrowed = [(self._ids[h.id], h.rank_score) for h in hits]
                seen = {i for i, _ in narrowed}
                ranking = (narrowed + [(i, s) for i, s in ranking if i not in seen])[:depth]
            if self.period and isinstance(found.get("year"), int):
                ranking = prefer_period(ranking, found["year"], lambda item: self._texts[item[0]])
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


def build_system(name: str, model_path: str | None = None) -> System:
    """A system by name (see the module docstring); `model_path` is the model directory of a
    `sentence-transformers` backend ("served-sentence-transformers" with a trained encoder)."""
    if name == "bm25":
        return Bm25System()
    fusion: FusionKind = "dbsf"
    base, weight, figures = name, 1.0, 0.0
    if name.startswith("served-"):  # the served configuration: the retriever's default weights
        weight = float(RetrieverSettings.model_fields["lexical_weight"].default)
        figures = float(RetrieverSettings.model_fields["figure_weight"].default)
    if match := re.search(r"-fig(\d+(?:\.\d+)?)$", base):
        figures, base = float(match.group(1)), base[: match.start()]
    density = spaced_number_density if base.endswith("-spaced") else None
    base = base.removesuffix("-spaced")
    if match := re.search(r"-lex(\d+(?:\.\d+)?)$", base):
        weight, base = float(match.group(1)), base[: match.start()]
    if base.endswith("-rrf"):
        fusion, base = "rrf", base.removesuffix("-rrf")
    prefix, _, backend = base.partition("-")
    settings: dict[str, tuple[SearchMode, bool]] = {
        "lexical": ("lexical", False),
        "hybrid": ("hybrid", False),
        "filtered": ("dense", True),
        "served": ("hybrid", True),
    }
    concepts = not backend.endswith("-noconcepts")
    backend = backend.removesuffix("-noconcepts")
    period = prefix == "served" and not backend.endswith("-noperiod")
    backend = backend.removesuffix("-noperiod")
    if backend and prefix in settings:
        mode, filters = settings[prefix]
        system = DenseSystem(
            backend,
            filters=filters,
            mode=mode,
            fusion=fusion,
            lexical_weight=weight,
            period=period,
            concepts=concepts,
            figure_weight=figures,
            density=density,
            model_path=model_path,
        )
    else:
        system = DenseSystem(name, model_path=model_path)
    system.name = name
    return system
