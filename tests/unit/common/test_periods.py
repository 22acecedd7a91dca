"""Passages about another fiscal year go after the rest."""

from __future__ import annotations

from weaverbird_common.periods import prefer_period, years_named


def test_years_named_reads_filing_forms_and_skips_money() -> None:
    assert years_named("For fiscal 2025 it expects ...") == {2025}
    assert years_named("FY24 revenue and FY 2023, 2022年 营收") == {2024, 2023, 2022}
    assert years_named("$2024 million, 2,024 units, 20245 shares, 2024.5") == set()


def test_prefer_period_moves_only_passages_about_other_years() -> None:
    passages = [
        "For fiscal 2025 the company expects revenue of <figure>.",  # outlook: another year only
        "Revenue for fiscal year 2024 was <figure>, up from fiscal 2023.",
        "Gross margin is revenue less cost of sales.",  # no year: stays where it was
        "2022 and 2021 comparatives",
    ]
    ranked = prefer_period(passages, 2024, lambda p: p)
    assert ranked == [passages[1], passages[2], passages[0], passages[3]]
    assert prefer_period(passages, 2025, lambda p: p)[0] == passages[0]
