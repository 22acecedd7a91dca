"""Real SEC filings: PDFs ingested through the ingester are cited with the right document and page."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_cli import commands
from weaverbird_cli.stack import LocalStack

pytestmark = pytest.mark.integration

FILINGS = ("PEPSICO_2023_8K_dated-2023-05-05", "FOOTLOCKER_2022_8K_dated-2022-05-20", "AMCOR_2023Q4_EARNINGS")


def test_pdf_filings_are_cited_by_document_and_page(stack: LocalStack, shared_data: Path) -> None:
    pdfs = [shared_data / "financebench" / "pdfs" / f"{name}.pdf" for name in FILINGS]
    assert commands.ingest([str(p) for p in pdfs], stack.config.addr("ingester"), quiet=True) == 0

    questions = [
        json.loads(line)
        for line in (shared_data / "financebench" / "questions.jsonl").read_text().splitlines()
        if json.loads(line)["doc_name"] in FILINGS
    ]
    assert questions
    with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
        stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
        found = 0
        for q in questions:
            evidence = {(q["doc_name"] + ".pdf", e["evidence_page_num"] + 1) for e in q["evidence"]}
            reply = stub.Retrieve(orchestrator_pb2.AskRequest(question=q["question"], top_k=5), timeout=30)
            cited = {(Path(p.source).name, p.page) for p in reply.passages}
            # Pages are numbered as printed by PDF viewers: the evidence page index + 1.
            found += bool(cited & evidence)
        # Recall@5 on these four: 3/4 with USE alone, 2/4 with the served hybrid search (the Amcor EBITDA
        # page drops from 3rd to 6th). Over all 102 FinanceBench questions hybrid + catalog filters lift
        # R@5 from 0.343 to 0.402 (docs/results/retrieval.md), so this small set only guards against a collapse.
        assert found >= len(questions) - 2, f"{found} of {len(questions)} questions retrieved their evidence page"

        pepsico = next(q for q in questions if q["doc_name"].startswith("PEPSICO"))
        answer = stub.Ask(orchestrator_pb2.AskRequest(question=pepsico["question"]), timeout=300)
    filing = "PEPSICO_2023_8K_dated-2023-05-05.pdf"
    assert Path(answer.citations[0].source).name == filing
    evidence_page = pepsico["evidence"][0]["evidence_page_num"] + 1
    assert evidence_page in {c.page for c in answer.citations if Path(c.source).name == filing}
