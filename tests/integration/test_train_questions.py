"""`weaverbird train questions` against a real llama.cpp server (SmolLM2), then `train data --generated`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from weaverbird_cli.__main__ import main
from weaverbird_generator.llama_server import LlamaServer
from weaverbird_generator.model_files import ModelNotAvailable, ensure_model

pytestmark = pytest.mark.integration

PROSE = [
    "Revenue grew in every region during the year, and growth was strongest in cloud services, where the "
    "company opened two new data centers. Operating margin improved because hardware costs fell sharply.",
    "The board declared a cash dividend per share that was paid in June. Share repurchases continued under "
    "the existing program, and no new debt was issued in the year because operating cash flow was strong.",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    try:
        model = ensure_model("smollm2", tmp_path_factory.mktemp("models"))
    except ModelNotAvailable as e:
        pytest.skip(str(e))
    with LlamaServer(model, port=0, ctx_size=2048, n_threads=2) as srv:
        yield srv


@pytest.fixture
def shared_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "tatqa").mkdir(parents=True)
    contexts = [
        {
            "table": {"uid": f"{i}aaa-bbbb", "table": [["", "2019", "2018"], ["Total revenue", "120", "90"]]},
            "paragraphs": [{"order": 1, "text": text}],
            "questions": [{"question": "What was the total revenue in 2019?"}],
        }
        for i, text in enumerate(PROSE)
    ]
    (data / "tatqa" / "tatqa_dataset_dev.json").write_text(json.dumps(contexts), encoding="utf-8")
    return data


def test_questions_are_written_resumed_and_turned_into_pairs(
    server: LlamaServer, shared_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "generated.jsonl"
    argv = ["train", "--data", str(shared_data), "questions", "--llm-url", server.base_url, "--sources", "tatqa"]
    argv += ["--count", "5", "--out", str(out)]
    assert main(argv) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # Only the two prose chunks are long enough to ask about; the model wrote something for each.
    assert sorted(r["passage_id"].split(":")[0] for r in records) == ["tatqa-0aaa-bbbb", "tatqa-1aaa-bbbb"]
    assert all(r["written"] and r["model"] for r in records)
    assert all(r["query"] is None or r["query"].endswith("?") for r in records)
    assert main(argv) == 0  # a second run finds every sampled passage done and asks nothing
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(records)

    pairs = tmp_path / "pairs.jsonl"
    data_argv = ["train", "--data", str(shared_data), "data", "--sources", "tatqa", "--generated", str(out)]
    assert main([*data_argv, "--out", str(pairs)]) == 0
    made = [json.loads(line) for line in pairs.read_text(encoding="utf-8").splitlines()]
    generated = [p for p in made if p["kind"] == "generated"]
    kept = {r["query"] for r in records if r["query"]}
    assert {p["query"] for p in generated} <= kept
    assert all(p["negatives"] and p["provenance"]["model"] for p in generated)
