"""`weaverbird kb list / show` lines: origin, time, and for a web page the question and score that found it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from weaverbird.v1 import retriever_pb2
from weaverbird_cli import render
from weaverbird_cli.__main__ import main


def _web_page() -> retriever_pb2.DocumentSummary:
    doc = retriever_pb2.DocumentSummary(
        document_id="0123456789abcdef",
        title="Aurora FY2025",
        source="https://example.com/a.html",
        company="AURORA",
        aliases=["ATP"],
        year=2025,
        language="en",
        chunks=4,
        provenance=retriever_pb2.DocumentProvenance(
            origin=retriever_pb2.DOCUMENT_ORIGIN_WEB, question="What was Aurora's revenue?", best_score=0.5731
        ),
    )
    doc.provenance.added_at.FromDatetime(datetime(2026, 3, 1, 12, 5, tzinfo=UTC))
    return doc


def test_list_line_names_origin_time_and_provenance() -> None:
    line = render.document_line(_web_page())
    assert line.startswith("0123456789abcdef  2026-03-01 12:05 UTC")
    assert "Aurora FY2025" in line and "AURORA 2025 en; 4 chunks" in line
    assert line.endswith('web: "What was Aurora\'s revenue?" (score 0.573)')
    local = retriever_pb2.DocumentSummary(document_id="x", source="notes.md", provenance={"origin": 1})
    assert render.document_line(local).endswith("notes.md  [-; 0 chunks]  local")
    assert "  -  " in render.document_line(local)  # no time recorded


def test_details_list_every_known_field_then_the_text() -> None:
    text = render.document_details(_web_page(), "Aurora Tidal Power reported ...")
    assert "company:    AURORA (also ATP)" in text and "best score: 0.573" in text
    assert "question:   What was Aurora's revenue?" in text and "added:      2026-03-01 12:05 UTC" in text
    assert "quarter" not in text and "found" not in text  # unknown fields are left out
    assert text.endswith("\n\nAurora Tidal Power reported ...")


def test_a_bad_since_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["kb", "list", "--since", "yesterday"])
    assert exit_.value.code == 2
    assert "not an ISO 8601 date or time" in capsys.readouterr().err
