"""`weaverbird train export`: a tiny cross-encoder the test builds -> ONNX fp32 and int8 -> loaded by the
onnxruntime backend (no torch) -> the same ranking as the torch model -> served by the reranking stage,
reading passages under their title and heading exactly as training formatted them."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fixtures.tiny_models import MAX_POSITIONS, build_tiny_cross_encoder, reranker_settings
from weaverbird_cli.__main__ import main
from weaverbird_common.docs.chunker import titled_text
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.encoders.onnx_cross_encoder import INT8_FILE, OnnxCrossEncoder
from weaverbird_common.training.passages import document_passages
from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.rerank import build_reranker, rerank_passages
from weaverbird_orchestrator.settings import OrchestratorSettings

QUESTION = "what was the company's total revenue in fiscal year 2022?"
TEXTS = [
    "the board of directors appointed a new general counsel.",
    "total revenue in fiscal 2022 was 394 billion.",
    "cash dividend per share increased to 0.92.",
    "net income decreased 3% to 99.8 billion in fiscal 2022, the company said in its annual report.",
    "profit",
    "revenue",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = build_tiny_cross_encoder(tmp_path_factory.mktemp("ce") / "model", seed=3)
    assert main(["train", "export", "--model", str(model)]) == 0
    return model


def _torch_scores(model: Path, texts: list[str]) -> np.ndarray:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model), local_files_only=True)
    net = AutoModelForSequenceClassification.from_pretrained(str(model), local_files_only=True).eval()
    scores = []
    for text in texts:  # one pair at a time: no padding in the reference
        batch = tokenizer(QUESTION, text, truncation=True, max_length=MAX_POSITIONS, return_tensors="pt")
        with torch.no_grad():
            scores.append(float(net(**batch).logits[0, 0]))
    return np.array(scores)


def _pairs_in_order(reference: np.ndarray, other: np.ndarray, margin: float) -> bool:
    """Every two texts the reference tells apart by more than `margin` keep their order in `other`."""
    return all(
        (reference[i] - reference[j]) * (other[i] - other[j]) > 0
        for i, j in itertools.combinations(range(len(reference)), 2)
        if abs(reference[i] - reference[j]) > margin
    )


def test_export_writes_fp32_and_int8_models_and_the_tokenizer(exported: Path) -> None:
    files = {p.name for p in (exported / "onnx").iterdir()}
    assert {"model.onnx", INT8_FILE, "tokenizer.json", "onnx.json"} <= files
    assert (exported / "onnx" / INT8_FILE).stat().st_size < (exported / "onnx" / "model.onnx").stat().st_size
    import onnx

    ops = {node.op_type for node in onnx.load(str(exported / "onnx" / INT8_FILE)).graph.node}
    assert {"Attention", "MatMulInteger"} <= ops or {"QAttention"} <= ops  # fused, then quantised
    assert "model.fused.onnx" not in files  # the intermediate is not left behind


def test_onnx_scores_match_torch_and_int8_keeps_the_ranking(exported: Path) -> None:
    reference = _torch_scores(exported, TEXTS)
    spread = float(reference.max() - reference.min())
    assert spread > 0.1, "random model scores too alike to order"
    # Batched with padding (batch_size 4 over 6 texts): the mask path must give each pair's own score.
    fp32 = np.array(OnnxCrossEncoder(exported, "fp32", MAX_POSITIONS, batch_size=4).score(QUESTION, TEXTS))
    np.testing.assert_allclose(fp32, reference, atol=1e-4)
    int8 = np.array(OnnxCrossEncoder(exported, "int8", MAX_POSITIONS, batch_size=4).score(QUESTION, TEXTS))
    assert not np.allclose(int8, reference, atol=1e-6)  # it is the quantised model
    assert _pairs_in_order(reference, int8, margin=0.1 * spread)
    assert int(np.argmax(int8)) == int(np.argmax(reference))


def test_long_pairs_are_cut_to_the_model_and_the_setting(exported: Path) -> None:
    model = OnnxCrossEncoder(exported, "fp32", max_length=10_000)
    assert model.max_length == MAX_POSITIONS  # the position table's size bounds the setting
    long = " ".join(["total revenue"] * 200)
    assert len(model.score(QUESTION, [long, long + " profit"])) == 2


def test_a_passed_deadline_stops_after_the_first_batch(exported: Path) -> None:
    model = OnnxCrossEncoder(exported, "int8", MAX_POSITIONS, batch_size=2)
    assert len(model.score(QUESTION, TEXTS, deadline=0.0)) == 2
    assert len(model.score(QUESTION, TEXTS)) == len(TEXTS)


def _settings(model: Path, **extra: Any) -> OrchestratorSettings:
    return reranker_settings(model, "onnx_cross_encoder", reranker_onnx_variant="fp32", **extra)


def _passages() -> list[Passage]:
    return [
        Passage(f"p{i}", text, 0.9 - 0.1 * i, f"d{i}", "acme 10-k 2022", "acme.pdf", 1, "local", heading="results")
        for i, text in enumerate(TEXTS)
    ]


def test_the_rerank_stage_serves_it_on_titled_passages(exported: Path) -> None:
    reranker = build_reranker(_settings(exported, reranker_batch_size=4))
    assert reranker.name.endswith(":fp32")
    passages = _passages()
    # The served input is the training input: title / heading above the text, by the one shared function.
    reference = _torch_scores(exported, [titled_text(p.title, p.heading, p.text) for p in passages])
    ranked = asyncio.run(rerank_passages(reranker, QUESTION, passages, candidates=4))
    head = [passages[i].id for i in np.argsort(-reference[:4], kind="stable")]
    assert [r.passage.id for r in ranked] == [*head, "p4", "p5"]  # candidates bound: the tail is not scored
    assert ranked[-1].rerank_score is None and ranked[0].rerank_score == pytest.approx(reference[:4].max(), abs=1e-4)
    assert [r.passage.score for r in ranked[:4]] != [r.rerank_score for r in ranked[:4]]  # cosines kept apart


def test_the_time_budget_leaves_unscored_candidates_in_retrieval_order(
    exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reranker = build_reranker(_settings(exported, reranker_batch_size=2, reranker_budget_ms=5))
    clock = itertools.count(start=100.0, step=1.0)  # every reading a second later: the budget is gone at once
    monkeypatch.setattr("time.perf_counter", lambda: next(clock))
    ranked = reranker.rerank(QUESTION, _passages())
    assert [r.rerank_score is None for r in ranked] == [False, False, True, True, True, True]
    assert [r.passage.id for r in ranked[2:]] == ["p2", "p3", "p4", "p5"]
    assert {r.passage.id for r in ranked[:2]} == {"p0", "p1"}


def test_training_positives_are_formatted_as_the_served_reranker_reads_them(exported: Path) -> None:
    page = Page(3, "## Results\n\nTotal revenue was 394 billion in the year.")
    doc = Document("d1", "ACME 10-K 2022", "acme.pdf", [page], "en", "ACME", 2022, None, "")
    (trained_on,) = document_passages([doc])
    served = Passage("x", trained_on.body, 0.5, "d1", doc.title, "acme.pdf", 3, "local", heading=trained_on.heading)
    reranker = build_reranker(_settings(exported))
    assert reranker.passage_text(served) == trained_on.text != served.text  # type: ignore[attr-defined]
    assert doc.title in trained_on.text
