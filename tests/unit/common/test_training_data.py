"""Training pairs from a tiny KB: questions, hard negatives, provenance, determinism and the leakage gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.training.build import build_pairs, read_pairs, write_pairs
from weaverbird_common.training.leakage import EvaluationGuard, LeakageError, normalise

PROSE = (
    "The company sells industrial adhesives to customers in forty countries. "
    "Demand for adhesives rose in the second half of the year as automotive production recovered. "
    "Management expects capital spending to stay near the level of the prior year. "
    "The board approved a new share repurchase program in March."
)


def _filing(company: str, revenue: int) -> Document:
    table = (
        "Consolidated Statements of Operations (in millions)\n\n"
        "| | 2022 | 2021 |\n|---|---|---|\n"
        f"| Total revenue | {revenue} | {revenue - 10} |\n| Net income | 12 | 9 |\n| Cost of sales | 50 | 45 |\n"
    )
    pages = [Page(1, f"{company} annual report\n\n{PROSE}"), Page(2, table), Page(3, PROSE.replace("March", "May"))]
    return Document(f"doc-{company}", f"{company}_2022_10K", f"{company}.pdf", pages, "en", company, 2022, None, "")


KB = [_filing("ACME", 120), _filing("GLOBEX", 300)]


def test_pairs_hold_table_questions_in_both_languages_with_hard_negatives_and_provenance() -> None:
    pairs, stats = build_pairs(KB, EvaluationGuard(["Who audits Initech?"]), seed=3)
    rows = [p for p in pairs if p.kind == "table-row"]
    assert {p.language for p in rows} == {"en", "zh"}
    acme = [p for p in rows if p.provenance["document_id"] == "doc-ACME" and p.language == "en"]
    assert acme and all("ACME" in p.query for p in acme)
    assert all(
        "Total revenue" in p.positive or "Net income" in p.positive or "Cost of sales" in p.positive for p in acme
    )
    for p in pairs:
        assert p.negatives and p.positive not in p.negatives
        assert p.provenance["seed"] == 3 and p.provenance["positive"]
        assert all(n["passage_id"] != p.provenance["positive"] for n in p.provenance["negatives"])
    whys = {n["why"] for p in rows for n in p.provenance["negatives"]}
    assert "other company, same line item" in whys
    assert len({normalise(p.query) for p in pairs}) == len(pairs)  # deduplicated
    assert stats["pairs"] == len(pairs) and stats["documents"] == 2


def test_same_seed_same_pairs_other_seed_other_questions() -> None:
    guard = EvaluationGuard([])
    first, _ = build_pairs(KB, guard, seed=5)
    again, _ = build_pairs(KB, guard, seed=5)
    other, _ = build_pairs(KB, guard, seed=6)
    assert [p.to_json() for p in first] == [p.to_json() for p in again]
    assert [p.query for p in first] != [p.query for p in other]


def test_an_evaluation_question_generated_from_the_kb_is_dropped_not_trained_on() -> None:
    pairs, _ = build_pairs(KB, EvaluationGuard([]), seed=5)
    planted = pairs[0].query
    kept, stats = build_pairs(KB, EvaluationGuard([planted.upper() + " "]), seed=5)
    assert stats["dropped: evaluation near copy"] >= 1
    assert normalise(planted) not in {normalise(p.query) for p in kept}


def test_guard_flags_exact_and_near_copies_but_not_another_company_or_year() -> None:
    guard = EvaluationGuard(["What were Netflix's total revenues for 2017?"])
    assert guard.leak("what were netflix's total revenues for 2017") is not None
    assert guard.leak("What were the total revenues of Netflix for 2017?") is not None  # reworded
    assert guard.leak("What were Adobe's total revenues for 2019?") is None
    with pytest.raises(LeakageError, match="1 training queries"):
        guard.check(["What was ACME's net income in FY2022?", "Netflix total revenues for 2017?"])


def test_the_gate_fails_on_a_data_file_holding_a_planted_evaluation_question(tmp_path: Path) -> None:
    pairs, _ = build_pairs(KB, EvaluationGuard([]), seed=5)
    path = tmp_path / "pairs.jsonl"
    write_pairs(pairs, path)
    assert len(read_pairs(path, EvaluationGuard(["What were Netflix's total revenues for 2017?"]))) == len(pairs)
    with pytest.raises(LeakageError):
        read_pairs(path, EvaluationGuard([pairs[-1].query]))
