"""`weaverbird eval route` on the tiny data: each question with its document and without it."""

from __future__ import annotations

import json
from pathlib import Path

from weaverbird_eval import cli


def test_route_eval_asks_each_question_with_and_without_its_document(tiny_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli.main(["route", "--data", str(tiny_data), "--datasets", "financebench", "--out", str(out)]) == 0
    [report] = json.loads((out / "route.json").read_text())
    cases = [c for c in report["cases"] if not c["comparative"]]
    assert len(cases) == 2 * 3 and sum(c["out_of_kb"] for c in cases) == 3
    by = {(c["query_id"], c["out_of_kb"]): c for c in cases}
    # Each question also asked a year earlier, answerable from its filing's comparative column: ACME's 2022
    # report writes "fiscal 2021" and Bolt's 2023 report "2022", so the served rule keeps them local.
    comparative = {c["query_id"]: c for c in report["cases"] if c["comparative"]}
    assert set(comparative) == {"fb-1", "fb-2", "fb-3"}
    assert all(c["covered"] and not c["out_of_kb"] for c in comparative.values())
    # With its filing the question's company is in the catalog; without it no chunk names ACME at all.
    assert by[("fb-1", False)]["covered"]
    assert not by[("fb-1", True)]["covered"] and "ACME" in by[("fb-1", True)]["reason"]
    rows = {r["design"]: r for r in report["rows"]}
    assert set(rows) >= {"coverage", "cosine (default c)", "coverage+cosine (c tuned on held-out)"}
    assert rows["coverage"]["answerable_local"] == 1.0 and rows["coverage"]["out_of_kb_web"] == 1.0
    served = rows["period: year Y from the Y+1 filing (served)"]
    assert served["answerable_local"] == 1.0 and served["out_of_kb_web"] == 1.0  # both directions
    assert "| financebench | coverage |" in (out / "route.md").read_text()
    assert all(0.0 <= c["term_coverage"] <= 1.0 for c in cases)
    assert "Minimum term coverage chosen on the held-out halves of financebench" in (out / "route.md").read_text()


def test_the_term_threshold_is_the_largest_that_keeps_nine_in_ten_local_on_every_tuning_half() -> None:
    from weaverbird_eval.route import Case, RouteReport, term_threshold

    def report(name: str, answerable: list[float], held_out: bool = True) -> RouteReport:
        cases = [Case(f"{name}{i}", False, 0.5, True, "", held_out, term_coverage=t) for i, t in enumerate(answerable)]
        cases += [Case(f"{name}x", True, 0.5, True, "", held_out, term_coverage=0.05)]
        return RouteReport(name, "use", cases=cases)

    # Ten answerable questions each: A keeps nine of ten local up to 0.90, B only up to 0.30.
    a = report("A", [0.3, *[0.9] * 9])
    b = report("B", [0.2, *[0.3] * 9])
    chosen, lines = term_threshold([a, b])
    assert chosen == 0.3
    assert term_threshold([a])[0] == 0.9  # A alone allows more
    # The dev half (not held out) reports; it did not choose.
    assert "Minimum term coverage chosen on the held-out halves of A, B: **0.30**" in lines[0]


def test_the_left_out_catalog_dates_a_company_only_when_every_remaining_document_is_dated() -> None:
    from weaverbird_eval.route import _Catalog

    metadata = [
        {"company": "PEPSICO", "year": 2023, "published_date": "2023-05-30"},
        {"company": "PEPSICO", "year": 2023, "published_date": "2023-05-05"},
        {"company": "AMCOR", "year": 2023, "published_date": "2023-08-15"},
        {"company": "AMCOR", "year": 2023},
    ]
    catalog = _Catalog(metadata, ["pep-8k-0530", "pep-8k-0505", "amcor-10k", "amcor-release"])
    assert catalog.latest(None) == {"PEPSICO": "2023-05-30"}
    assert catalog.latest("pep-8k-0530") == {"PEPSICO": "2023-05-05"}  # its own filing left out
    assert catalog.latest("amcor-release") == {"PEPSICO": "2023-05-30", "AMCOR": "2023-08-15"}


def test_each_case_keeps_its_signals_apart(tiny_data: Path, tmp_path: Path) -> None:
    # Every design reads its own field: a share of terms is a float in [0, 1], the company flag a bool.
    out = tmp_path / "out"
    assert cli.main(["route", "--data", str(tiny_data), "--datasets", "financebench", "--out", str(out)]) == 0
    [report] = json.loads((out / "route.json").read_text())
    for case in report["cases"]:
        assert isinstance(case["term_coverage"], float) and isinstance(case["names_company"], bool)
        assert all(isinstance(case[k], bool) for k in case if k.startswith("covered"))
