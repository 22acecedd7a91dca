"""`weaverbird eval route` on the tiny data: each question with its document and without it."""

from __future__ import annotations

import json
from pathlib import Path

from weaverbird_eval import cli


def test_route_eval_asks_each_question_with_and_without_its_document(tiny_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli.main(["route", "--data", str(tiny_data), "--datasets", "financebench", "--out", str(out)]) == 0
    [report] = json.loads((out / "route.json").read_text())
    cases = report["cases"]
    assert len(cases) == 2 * 3 and sum(c["out_of_kb"] for c in cases) == 3
    by = {(c["query_id"], c["out_of_kb"]): c for c in cases}
    # With its filing the question's company is in the catalog; without it no chunk names ACME at all.
    assert by[("fb-1", False)]["covered"]
    assert not by[("fb-1", True)]["covered"] and "ACME" in by[("fb-1", True)]["reason"]
    rows = {r["design"]: r for r in report["rows"]}
    assert set(rows) >= {"coverage", "cosine (default c)", "coverage+cosine (c tuned on held-out)"}
    assert rows["coverage"]["answerable_local"] == 1.0 and rows["coverage"]["out_of_kb_web"] == 1.0
    assert "| financebench | coverage |" in (out / "route.md").read_text()
