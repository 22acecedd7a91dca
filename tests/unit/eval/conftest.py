"""A tiny copy of the shared data layout (FinanceBench, TAT-QA, Fin-Eva files) written by the tests."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

PAGES = [
    ("ACME_2022_10K", 0, "ACME Corp annual report 2022. Table of contents."),
    ("ACME_2022_10K", 4, "Net revenue for fiscal 2022 was $1,577 million, up 8% from fiscal 2021."),
    ("ACME_2022_10K", 5, "Capital expenditures were $212 million, mainly for new warehouses in Ohio."),
    ("BOLT_2023_10K", 2, "Bolt Inc. reported operating margin of 14.2% in 2023, compared with 12.0% in 2022."),
    ("BOLT_2023_10K", 3, ""),  # an empty scan, as in the real file
]
QUESTIONS = [
    ("fb-1", "What was ACME's net revenue in fiscal 2022?", "$1577 million", [("ACME_2022_10K", 4)]),
    ("fb-2", "What were ACME's capital expenditures in 2022?", "$212 million", [("ACME_2022_10K", 5)]),
    ("fb-3", "What was Bolt's operating margin in 2023?", "14.2%", [("BOLT_2023_10K", 2)]),
]


@pytest.fixture
def tiny_data(tmp_path: Path) -> Path:
    fb = tmp_path / "financebench"
    fb.mkdir()
    with (fb / "pages.jsonl").open("w") as fh:
        for doc, page, text in PAGES:
            fh.write(json.dumps({"doc_name": doc, "page_num": page, "text": text}) + "\n")
    with (fb / "questions.jsonl").open("w") as fh:
        for qid, question, answer, evidence in QUESTIONS:
            row = {
                "financebench_id": qid,
                "question": question,
                "answer": answer,
                "doc_name": evidence[0][0],
                "evidence": [{"doc_name": d, "evidence_page_num": p, "evidence_text": ""} for d, p in evidence],
            }
            fh.write(json.dumps(row) + "\n")
    tat = tmp_path / "tatqa"
    tat.mkdir()
    context = {
        "table": {"uid": "t-1", "table": [["", "2019", "2018"], ["Total sales", "1,496.5", "1,202.9"]]},
        "paragraphs": [
            {"uid": "p1", "order": 1, "text": "Substantially all of our contracts are fixed-price contracts."},
            {"uid": "p2", "order": 2, "text": "Cost-plus contracts pay allowable costs plus a fee."},
        ],
        "questions": [
            {
                "uid": "q-text",
                "question": "What do cost-plus contracts pay?",
                "answer_from": "text",
                "rel_paragraphs": ["2"],
            },
            {
                "uid": "q-table",
                "question": "What were total sales in 2019?",
                "answer_from": "table",
                "rel_paragraphs": [],
            },
            {"uid": "q-both", "question": "Change in sales?", "answer_from": "table-text", "rel_paragraphs": ["1"]},
        ],
    }
    (tat / "tatqa_dataset_dev.json").write_text(json.dumps([context]))
    fe = tmp_path / "fineva"
    fe.mkdir()
    rows = {
        "financial_event_interpretation.csv": [
            ("1", "贵州茅台2023年实现营业收入1476.9亿元，同比增长18%。", "贵州茅台2023年的营业收入是多少？"),
            ("2", "宁德时代宣布在匈牙利建设电池工厂，总投资73亿欧元。", "宁德时代在哪里建设新工厂？"),
        ],
        "financial_product_analysis.csv": [
            ("1", "该货币基金七日年化收益率为2.1%，申购费率为零。", "这只货币基金的七日年化收益率是多少？"),
            ("2", "该货币基金七日年化收益率为2.1%，申购费率为零。", "申购这只基金要付费吗？"),  # shared context
        ],
        "financial_document_extraction.csv": [("1", "", "无上下文的问题会被跳过")],
    }
    for name, items in rows.items():
        with (fe / name).open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["id", "context", "question", "A", "B", "C", "D", "answer"])
            for rid, ctx, q in items:
                writer.writerow([rid, ctx, q, "", "", "", "", ""])
    return tmp_path


@pytest.fixture(autouse=True)
def eval_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Embedding caches of the tests go to a temporary folder, never to the repository's var/."""
    path = tmp_path_factory.mktemp("eval-cache")
    monkeypatch.setenv("WEAVERBIRD_EVAL_CACHE", str(path))
    return path
