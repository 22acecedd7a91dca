"""Passages about another fiscal year go after the rest."""

from __future__ import annotations

from weaverbird_common.periods import (
    PERIOD_TOKEN_RE,
    QUARTER_RE,
    YEAR_NUMBER_RE,
    YEAR_RE,
    asked_periods,
    full_year,
    prefer_period,
    quarter_number,
    with_year_digits,
    years_named,
)


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


def test_asked_periods_reads_a_quarters_year_once_in_either_language() -> None:
    years, quarters = asked_periods("Revenue in 2Q23 versus Q4 FY2022?")
    assert sorted(years) == [2022, 2023] and sorted(quarters) == [2, 4]
    assert asked_periods("2023年第三季度 营收, fiscal 21") == ([2021, 2023], [3])
    assert asked_periods("$2024 million in 10年期国债") == ([], [])
    assert asked_periods(with_year_digits("二〇二二年 second quarter")) == ([2022], [2])


def test_year_and_quarter_readers_share_one_reading() -> None:
    assert [m.group("y") or m.group("y2") for m in YEAR_RE.finditer("FY'21 to 2023, not 2,024 or $2025")] == [
        "21",
        "2023",
    ]
    assert [quarter_number(w) for w in ("3", "third", "3rd", "三")] == [3, 3, 3, 3]
    assert full_year("1989") is None and full_year("1998") == 1998 and full_year("21") == 2021
    assert QUARTER_RE.fullmatch("second fiscal quarter") and not QUARTER_RE.search("Q5")


def test_a_period_token_is_never_a_name() -> None:
    assert all(PERIOD_TOKEN_RE.match(t) for t in ("FY2023", "Q3'23", "H1 2023", "'23", "2023Q4", "FY 2023"))
    assert not any(PERIOD_TOKEN_RE.match(t) for t in ("3M", "Q3", "AMD"))


def test_a_year_number_is_never_part_of_a_longer_number() -> None:
    assert YEAR_NUMBER_RE.findall("FY2023 vs 2022.5, not 20245 or 12023") == ["2023", "2022"]


def test_the_report_year_is_the_as_of_year_when_a_later_year_is_a_horizon() -> None:
    from weaverbird_common.periods import report_year

    question = "As of FY 2021, how much did Verizon expect to pay for its retirees in 2024?"
    assert report_year(question, asked_periods(question)[0]) == 2021
    assert report_year("As of May 26, 2023, what may it borrow?", [2023]) == 2023
    # Without "as of" the latest year's report answers (it holds the earlier year as a comparative).
    assert report_year("Revenue between FY2021 and FY2022?", [2021, 2022]) == 2022
    assert report_year("Nothing here", []) is None


def test_a_companys_earlier_documents_are_left_out_beside_its_later_ones() -> None:
    from weaverbird_common.periods import within_period

    docs = [("A", 2018), ("A", 2022), ("", 0), ("B", 2019), ("A", 2023)]
    # B has nothing that reaches 2022: its 2019 report is what the KB has, and stays.
    assert within_period(docs, 2022, lambda d: d) == [("A", 2022), ("", 0), ("B", 2019), ("A", 2023)]
    assert within_period(docs[:1], 2022, lambda d: d) == [("A", 2018)]
