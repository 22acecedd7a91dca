"""`weaverbird eval facts`' TAT-QA arithmetic check on a project-written table: a right, a wrong and a passed-on
question are counted as such, for the row reader alone and as routed (router, then the table path)."""

from __future__ import annotations

import json
from pathlib import Path

from weaverbird_eval.facts import tatqa_arithmetic

TABLE = [
    ["", "2019", "2018"],
    ["Net sales", "1,200", "1,000"],
    ["Cost of sales", "700", "650"],
    ["Total", "1,900", "1,650"],
]


def _question(uid: str, text: str, answer: float) -> dict:
    return {"uid": uid, "question": text, "answer": answer, "answer_type": "arithmetic", "answer_from": "table",
            "derivation": "", "scale": ""}  # fmt: skip


def _data(tmp_path: Path) -> Path:
    questions = [
        _question("q1", "What was the change in net sales between 2018 and 2019?", 200),
        _question("q2", "What was the percentage change in cost of sales from 2018 to 2019?", 99.0),  # gold is wrong
        _question("q3", "What is the dividend per share in 2019?", 1.5),  # no row names it
        # One cell: the reader answers it, the served table path leaves a lookup of one figure to the passages.
        _question("q4", "What were net sales in 2019?", 1200),
    ]
    contexts = [{"table": {"uid": "t1", "table": TABLE}, "paragraphs": [], "questions": questions}]
    (tmp_path / "tatqa").mkdir()
    (tmp_path / "tatqa" / "tatqa_dataset_dev.json").write_text(json.dumps(contexts), encoding="utf-8")
    return tmp_path


def test_right_wrong_and_passed_on_are_counted(tmp_path: Path) -> None:
    counts = tatqa_arithmetic(_data(tmp_path))
    assert counts == {
        "questions": 4,
        "answered": 3,
        "right": 2,
        "wrong": 1,
        "passed_on": 1,
        "routed_answered": 2,
        "routed_right": 1,
        "routed_wrong": 1,
    }
