from __future__ import annotations

from pathlib import Path

import pytest
from weaverbird_eval import datasets


def test_financebench_units_are_pages_and_relevance_names_the_evidence_page(tiny_data: Path) -> None:
    s = datasets.financebench(tiny_data)
    ids = {u.id for u in s.units}
    assert "ACME_2022_10K#p5" in ids  # page_num 4 is the fifth page, numbered as citations number it
    assert "BOLT_2023_10K#p4" not in ids  # empty scans are not units
    by_id = {q.id: q for q in s.queries}
    assert by_id["fb-1"].relevant == {"ACME_2022_10K#p5"}
    assert by_id["fb-1"].extra["answer"] == "$1577 million"


def test_financebench_cut_keeps_every_evidence_page(tiny_data: Path) -> None:
    s = datasets.financebench(tiny_data, max_pages=3)
    assert {u.id for u in s.units} == {"ACME_2022_10K#p5", "ACME_2022_10K#p6", "BOLT_2023_10K#p3"}
    assert len(s.queries) == 3
    assert "3 of 4 pages" in s.note


def test_tatqa_relevance_adds_the_table_when_the_answer_comes_from_it(tiny_data: Path) -> None:
    s = datasets.tatqa(tiny_data)
    rel = {q.id: q.relevant for q in s.queries}
    assert rel == {"q-text": {"t-1#p2"}, "q-table": {"t-1#table"}, "q-both": {"t-1#p1", "t-1#table"}}
    table = next(u for u in s.units if u.id == "t-1#table")
    assert "Total sales | 1,496.5 | 1,202.9" in table.text


def test_fineva_shares_contexts_and_skips_rows_without_one(tiny_data: Path) -> None:
    s = datasets.fineva(tiny_data)
    assert s.language == "zh"
    assert len(s.units) == 3  # two product rows share one context
    assert len(s.queries) == 4
    shared = [q.relevant for q in s.queries if q.id.startswith("financial_product_analysis")]
    assert shared[0] == shared[1]


def test_unknown_dataset_is_a_clear_error(tiny_data: Path) -> None:
    with pytest.raises(ValueError, match="unknown dataset"):
        datasets.load("nope", tiny_data)


def test_held_out_split_is_stable_and_roughly_half() -> None:
    ids = [f"q{i}" for i in range(400)]
    first = [datasets.is_held_out(i) for i in ids]
    assert first == [datasets.is_held_out(i) for i in ids]
    assert 150 < sum(first) < 250


def test_fresh_questions_are_well_formed() -> None:
    # The project's own retrieval questions: unique ids, a filing each, patterns that compile.
    import json
    import re

    from weaverbird_eval.datasets import FRESH_QUESTIONS

    rows = [json.loads(line) for line in FRESH_QUESTIONS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 20 and len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert row["question"].strip() and row["doc_name"] and row["page_has"]
        for pattern in row["page_has"]:
            re.compile(pattern)


def test_fresh_gold_pages_are_the_pages_holding_every_pattern(tiny_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    fresh = tiny_data / "fresh.jsonl"
    fresh.write_text(
        json.dumps(
            {"id": "f1", "question": "ACME capex?", "doc_name": "ACME_2022_10K", "page_has": ["capital", "warehouse"]}
        )
        + "\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(datasets, "FRESH_QUESTIONS", fresh)
    evalset = datasets.load("financebench-fresh", tiny_data)
    assert [q.relevant for q in evalset.queries] == [frozenset({"ACME_2022_10K#p6"})]
    assert evalset.corpus_label == f"financebench-{len(evalset.units)}"  # shares the corpus's cached vectors
    fresh.write_text(fresh.read_text().replace("warehouse", "no such words"), encoding="utf-8")
    with pytest.raises(ValueError, match="no page"):
        datasets.load("financebench-fresh", tiny_data)
