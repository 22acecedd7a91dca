"""`weaverbird train`: data from a tiny KB -> train -> save -> load in the serving code -> rerank / embed,
on tiny models the test builds (nothing downloaded), and the leakage gate before any training."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fixtures.tiny_models import MAX_POSITIONS, build_tiny_bi_encoder, build_tiny_cross_encoder, reranker_settings
from weaverbird_cli.__main__ import main
from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.rerank import build_reranker
from weaverbird_orchestrator.settings import OrchestratorSettings

PROSE = [
    "Revenue grew in every region during the year. Growth was strongest in cloud services. "
    "The company opened two new data centers. Operating margin improved by two points.",
    "The board declared a cash dividend of 0.50 per share. The dividend was paid in June. "
    "Share repurchases continued under the existing program. No new debt was issued in the year.",
]
EVALUATION_QUESTION = "What was the total revenue in 2019?"


def _context(uid: str, revenue: int, prose: str) -> dict:
    table = [
        ["", "Years ended December 31,", ""],
        ["", "2019", "2018"],
        ["Total revenue", str(revenue), "90"],
        ["Net income", "12", "9"],
        ["Cost of sales", "50", "45"],
    ]
    return {
        "table": {"uid": uid, "table": table},
        "paragraphs": [{"order": 1, "text": prose}],
        "questions": [{"question": EVALUATION_QUESTION}],
    }


@pytest.fixture(scope="module")
def shared_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ../shared/data look-alike: two TAT-QA reports, their question an evaluation question."""
    data = tmp_path_factory.mktemp("data")
    (data / "tatqa").mkdir()
    contexts = [_context("aaaa1111-x", 120, PROSE[0]), _context("bbbb2222-y", 300, PROSE[1])]
    (data / "tatqa" / "tatqa_dataset_dev.json").write_text(json.dumps(contexts), encoding="utf-8")
    return data


@pytest.fixture(scope="module")
def pairs_file(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("train") / "pairs.jsonl"
    assert main(["train", "--data", str(shared_data), "data", "--sources", "tatqa", "--out", str(out)]) == 0
    return out


def _train_argv(data: Path, kind: str, pairs: Path, base: Path, out: Path, *options: str) -> list[str]:
    """`weaverbird train --data DATA KIND --pairs PAIRS --base BASE --out OUT OPTIONS...`."""
    return ["train", "--data", str(data), kind, "--pairs", str(pairs), "--base", str(base), "--out", str(out), *options]


def _model_dir(out: Path, kind: str) -> Path:
    (directory,) = out.glob(f"weaverbird-{kind}-*")
    return directory


def test_train_data_writes_pairs_without_evaluation_questions(pairs_file: Path) -> None:
    rows = [json.loads(line) for line in pairs_file.read_text(encoding="utf-8").splitlines()]
    assert rows and {r["kind"] for r in rows} == {"table-row"}  # one chunk per report: no prose-only passage
    assert all(r["negatives"] and r["provenance"]["document_id"].startswith("tatqa-") for r in rows)
    assert EVALUATION_QUESTION.lower() not in {r["query"].lower() for r in rows}
    stats = json.loads(pairs_file.with_suffix(".stats.json").read_text(encoding="utf-8"))
    assert stats["pairs"] == len(rows) and stats["evaluation_questions_checked"] >= 1


def test_trained_reranker_is_saved_with_a_card_and_served_by_the_reranking_stage(
    pairs_file: Path, shared_data: Path, tmp_path: Path
) -> None:
    base = build_tiny_cross_encoder(tmp_path / "base")
    out = tmp_path / "models"
    options = ["--max-length", str(MAX_POSITIONS), "--batch-size", "2", "--epochs", "2", "--export-onnx"]
    argv = _train_argv(shared_data, "reranker", pairs_file, base, out, *options)
    assert main(argv) == 0
    model = _model_dir(out, "reranker")
    assert {"model.onnx", "model.int8.onnx", "tokenizer.json"} <= {p.name for p in (model / "onnx").iterdir()}
    card = json.loads((model / "training.json").read_text(encoding="utf-8"))
    assert card["steps"] > 0 and card["base"] == str(base) and card["pairs_used"] > 0
    assert "loss" in (model / "MODEL_CARD.md").read_text(encoding="utf-8")

    def settings(path: Path) -> OrchestratorSettings:
        return reranker_settings(path, "cross_encoder")

    passages = [Passage(f"p{i}", text, 0.5, "d", "t", "s", 1, "local") for i, text in enumerate(PROSE)]
    question = "what was the total revenue in 2019?"
    trained, untrained = build_reranker(settings(model)), build_reranker(settings(base))
    ranked = trained.rerank(question, passages)
    assert sorted(r.passage.id for r in ranked) == ["p0", "p1"]
    assert trained.score_texts(question, PROSE) != untrained.score_texts(question, PROSE)  # weights moved
    onnx = build_reranker(settings(model).model_copy(update={"reranker": "onnx_cross_encoder"}))
    served = onnx.rerank(question, passages)
    assert [r.passage.id for r in served] == [r.passage.id for r in ranked]  # the int8 export ranks as trained


def test_trained_encoder_is_served_by_the_embedder_backend(pairs_file: Path, shared_data: Path, tmp_path: Path) -> None:
    from weaverbird_common.encoders.sentence_transformers_backend import SentenceTransformersBackend

    base = build_tiny_bi_encoder(tmp_path / "base")
    out = tmp_path / "models"
    argv = _train_argv(shared_data, "encoder", pairs_file, base, out, "--max-length", "32", "--batch-size", "4")
    assert main(argv) == 0
    model = _model_dir(out, "encoder")
    assert json.loads((model / "training.json").read_text(encoding="utf-8"))["hard_negatives_per_query"] == 1
    vectors = SentenceTransformersBackend(str(model)).embed(PROSE, "passage")
    assert vectors.shape[0] == 2 and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_training_refuses_data_holding_a_planted_evaluation_question(
    pairs_file: Path, shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = pairs_file.read_text(encoding="utf-8").splitlines()
    planted = json.loads(rows[0])
    planted["query"] = "What was the total revenue in 2019 ?"  # a near copy of the TAT-QA question
    leaky = tmp_path / "leaky.jsonl"
    leaky.write_text("\n".join([*rows, json.dumps(planted)]) + "\n", encoding="utf-8")
    base = build_tiny_cross_encoder(tmp_path / "base")
    out = tmp_path / "models"
    argv = _train_argv(shared_data, "reranker", leaky, base, out, "--max-length", str(MAX_POSITIONS))
    assert main(argv) == 2
    assert "evaluation questions or near copies" in capsys.readouterr().err
    assert not out.exists()


def test_the_time_budget_stops_training_and_the_card_says_how_far_it_got() -> None:
    import torch
    from weaverbird_cli.train.loop import run

    weight = torch.nn.Parameter(torch.ones(1))
    batches = [[object()]] * 5
    full = run([weight], batches, lambda _: (weight - 3) ** 2, lr=0.1, epochs=1, seed=0)
    assert full["steps"] == 5 and full["loss_last"] < full["loss_first"]
    cut = run([weight], batches, lambda _: (weight - 3) ** 2, lr=0.1, epochs=1, seed=0, max_seconds=0)
    assert cut["steps"] == 0 and cut["steps_planned"] == 5 and cut["loss_last"] is None


def test_a_fresh_scoring_head_learns_at_its_own_rate() -> None:
    import torch
    from weaverbird_cli.train.loop import TrainOptions, parameter_groups, run

    model = torch.nn.ModuleDict({"body": torch.nn.Linear(1, 1), "classifier": torch.nn.Linear(1, 1)})
    options = TrainOptions(batch_size=1, max_length=8, lr=1e-5, head_lr=1e-2)
    body, head = parameter_groups(model, options)
    assert (body["lr"], head["lr"]) == (1e-5, 1e-2) and len(head["params"]) == 2
    # Without head_lr (the encoder's case) every parameter is in one group at `lr`.
    assert len(parameter_groups(model, TrainOptions(batch_size=1, max_length=8, lr=1e-5))) == 4
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x = torch.ones(1, 1)
    loss = lambda _: model["classifier"](model["body"](x)).sum()  # noqa: E731
    run(parameter_groups(model, options), [[object()]] * 3, loss, lr=1e-5, epochs=1, seed=0)
    moved = {n: float((p.detach() - before[n]).abs().max()) for n, p in model.named_parameters()}
    assert moved["classifier.weight"] > 100 * moved["body.weight"] > 0


def test_the_project_question_sets_are_held_out_without_importing_the_evaluation_package(
    shared_data: Path, tmp_path: Path
) -> None:
    from weaverbird_cli.train.sources import evaluation_questions

    own = tmp_path / "sets"
    own.mkdir()
    (own / "held.jsonl").write_text(json.dumps({"question": "How much cash did ACME hold?"}) + "\n", encoding="utf-8")
    assert "How much cash did ACME hold?" in evaluation_questions(shared_data, extra_dirs=(own,))
    found = evaluation_questions(shared_data)  # default: the evaluation package's data folder, found as files
    assert len(found) > len(evaluation_questions(shared_data, extra_dirs=()))


def test_financebench_without_the_evaluation_package_fails_with_a_clear_error(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "weaverbird_eval.financebench_kb", None)  # import now fails
    out = tmp_path / "pairs.jsonl"
    argv = ["train", "--data", str(shared_data), "data", "--sources", "financebench", "--out", str(out)]
    assert main(argv) == 2
    assert "pip install -e evaluation" in capsys.readouterr().err and not out.exists()


def test_train_questions_without_a_reachable_model_server_fails_clearly(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "generated.jsonl"
    argv = ["train", "--data", str(shared_data), "questions", "--llm-url", f"http://127.0.0.1:{port}"]
    assert main([*argv, "--sources", "tatqa", "--count", "2", "--out", str(out)]) == 2
    assert "run again to resume" in capsys.readouterr().err
