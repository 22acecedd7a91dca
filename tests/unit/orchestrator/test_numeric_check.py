"""The numeric check: every figure of an answer must appear in a passage it cites, in any written form."""

from __future__ import annotations

import pytest
from weaverbird_orchestrator.numeric_check import answer_figures, check_answer

# Fictional figures, written for these tests.
EN_TABLE = "Larkspur Freight, consolidated results (in millions of USD)\nNet revenue 1,284.6\nOperating loss (37.2)"
EN_NOTE = "Larkspur Freight's net revenue was 1,284.6 million dollars; gross margin was 12.5 percent."
ZH_NOTE = "云杉物流2024年营业收入为51.37亿元，同比增长8.4%，净亏损为-3,120万元。"


def _texts(answer: str) -> list[str]:
    return [f.text for f in answer_figures(answer)]


# --- extraction -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "raw", "scale"),
    [
        ("1,284.6", 1284.6, 1.0),
        ("1284.6", 1284.6, 1.0),
        ("USD 1,284.6 million", 1284.6, 1e6),
        ("$5.1bn", 5.1, 1e9),
        ("US$ 5.1 billion", 5.1, 1e9),
        ("RMB 3.2m", 3.2, 1e6),
        ("750K", 750.0, 1e3),
        ("(1,234)", -1234.0, 1.0),
        ("-1,234", -1234.0, 1.0),
        ("−1,234", -1234.0, 1.0),  # the Unicode minus sign
        ("12.5%", 12.5, 1.0),
        ("12.5 percent", 12.5, 1.0),
        ("51.37亿", 51.37, 1e8),
        ("3,120万", 3120.0, 1e4),
        ("2.5千万", 2.5, 1e7),
        ("8百万", 8.0, 1e6),
        ("５１．３７亿", 51.37, 1e8),  # full-width digits and point
        ("１２．５％", 12.5, 1.0),
    ],
)
def test_figures_are_read_with_their_scale_and_sign(written: str, raw: float, scale: float) -> None:
    (figure,) = answer_figures(f"The figure was {written} [1].")
    assert figure.text == written
    assert figure.raw == pytest.approx(raw)
    assert figure.scale == scale


def test_percent_is_recognised_in_every_spelling() -> None:
    spellings = "up 12.5%, 12.5 percent, 12.5 per cent, 3个百分点, 0.2 percentage points"
    assert all(f.percent for f in answer_figures(spellings))
    assert not answer_figures("revenue 12.5 million")[0].percent


@pytest.mark.parametrize(
    "answer",
    [
        "Revenue rose in 2024 [1].",
        "Revenue rose in FY2024 and FY24 [1][2].",
        "In Q3 2024 and 3Q24 the bank grew [1, 2].",
        "营业收入在2024年第3季度增长【1】。",
        "See the 10-K and the S-1 filings [3].",
        "As of December 31, 2024 and 31 Dec 2023 [1].",
        "截至2024年12月31日【2】。",
        "The 2nd half and the 1st quarter [1].",
        "Source: https://x.example/2024/report-123 [1]",
        "Filed on 2024-03-15 [1].",
        "Filed on 05/05/2023 and 3/15/24 [1].",
        "1. Revenue grew [1].\n2) Margins fell [2].\n3、利润增长[3]。",
    ],
)
def test_years_markers_ordinals_dates_and_names_are_not_figures(answer: str) -> None:
    assert answer_figures(answer) == []


def test_an_ordinal_at_a_line_start_is_skipped_but_a_decimal_is_not() -> None:
    assert _texts("1. Revenue was 1.5 billion [1].\n1.5 billion again.") == ["1.5 billion", "1.5 billion"]


def test_a_year_with_a_unit_or_a_separator_is_a_figure() -> None:
    assert _texts("Revenue was 2,024 and 2024 million, 1999.5 and 2010% [1]; in 2024 [2].") == [
        "2,024",
        "2024 million",
        "1999.5",
        "2010%",
    ]


def test_a_range_is_two_positive_figures() -> None:
    assert [f.raw for f in answer_figures("margins of 12-15% [1]")] == [12.0, 15.0]


# --- support ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Net revenue was 1,284.6 [1].",
        "Net revenue was 1284.6 [1].",
        "Net revenue was USD 1,284.6 million [1].",  # the raw figure under a table header "in millions"
        "Net revenue was USD 1,284.60 million [1].",
        "Net revenue was USD 1.2846 billion [1].",  # the table's unit applied
        "Net revenue was about USD 1.28 billion [1].",  # rounded to the shown precision
        "Net revenue was about USD 1.3 billion [1].",
        "The operating loss was USD 37.2 million [1].",  # (37.2): the sign is in the words
        "The operating loss was (37.2) [1].",
        "The operating loss was -37.2 [1].",
    ],
)
def test_english_figures_supported_by_a_table_in_millions(answer: str) -> None:
    check = check_answer(answer, [EN_TABLE])
    assert check.unsupported == (), check
    assert check.result == "supported" and check.cited


@pytest.mark.parametrize(
    "answer",
    [
        "Net revenue was 1.28 billion dollars and gross margin 12.5% [1].",
        "Gross margin was 12.5 percent [1].",
        "Net revenue was 1,285 million [1].",  # rounded to millions
    ],
)
def test_english_figures_supported_in_other_forms(answer: str) -> None:
    assert check_answer(answer, [EN_NOTE]).result == "supported"


@pytest.mark.parametrize(
    ("answer", "unsupported"),
    [
        ("Net revenue was 1.2 billion [1].", ("1.2 billion",)),  # not 1,284.6 million at that precision
        ("Net revenue was 1.27 billion [1].", ("1.27 billion",)),
        ("Net revenue was 1,284.7 million [1].", ("1,284.7 million",)),
        ("Gross margin was 12.4% and net margin 5.1% [1].", ("12.4%", "5.1%")),
        ("Revenue was USD 5.1 billion [1].", ("USD 5.1 billion",)),  # the old prompt example, copied
    ],
)
def test_english_figures_not_in_the_passage_are_reported_as_written(answer: str, unsupported: tuple[str, ...]) -> None:
    check = check_answer(answer, [EN_NOTE])
    assert check.unsupported == unsupported
    assert check.result == "unsupported"


@pytest.mark.parametrize(
    "answer",
    [
        "云杉物流2024年营业收入为51.37亿元【1】。",
        "云杉物流2024年营业收入为５１．３７亿元［１］。",
        "营业收入约51.4亿元，同比增长8.4%[1]。",
        "营业收入为5,137百万元[1]。",
        "Revenue was RMB 5.137 billion, up 8.4 percent [1].",
        "净亏损为3,120万元[1]。",
        "净亏损为3120万元[1]。",
        "The net loss was RMB 31.2 million [1].",
        "净亏损为0.312亿元[1]。",
        "营业收入约51亿元[1]。",  # 51.37 rounded to the precision shown
    ],
)
def test_chinese_figures_match_across_scale_words_and_languages(answer: str) -> None:
    check = check_answer(answer, [ZH_NOTE])
    assert check.unsupported == (), check
    assert check.result == "supported"


@pytest.mark.parametrize(
    ("answer", "unsupported"),
    [
        ("营业收入为51.5亿元[1]。", ("51.5亿",)),  # 51.37 does not round to 51.5
        ("营业收入为52.1亿元，同比增长8.4%[1]。", ("52.1亿",)),
        ("同比增长9.4%【1】。", ("9.4%",)),
        ("营业收入为５２亿元【１】。", ("５２亿",)),
    ],
)
def test_chinese_figures_not_in_the_passage(answer: str, unsupported: tuple[str, ...]) -> None:
    assert check_answer(answer, [ZH_NOTE]).unsupported == unsupported


def test_rounding_is_allowed_only_to_the_precision_shown() -> None:
    passages = ["Revenue was 1,284.6 million."]
    assert check_answer("Revenue was 1 billion [1].", passages).result == "supported"  # 1.2846 rounds to 1
    assert check_answer("Revenue was 1.0 billion [1].", passages).result == "unsupported"
    assert check_answer("Revenue was 1.285 billion [1].", passages).result == "supported"
    assert check_answer("Revenue was 1.284 billion [1].", passages).result == "unsupported"


def test_only_the_cited_passages_count() -> None:
    passages = ["Revenue was 1,284.6 million.", "Headcount was 4,512."]
    check = check_answer("Revenue was 1,284.6 million and headcount 4,512 [1].", passages)
    assert check.unsupported == ("4,512",) and check.cited
    assert check_answer("Revenue was 1,284.6 million [1] and headcount 4,512 [2].", passages).result == "supported"
    assert check_answer("Headcount was 4,512【2】。", passages).result == "supported"


def test_an_answer_citing_nothing_is_checked_against_every_passage_and_says_so() -> None:
    passages = ["Revenue was 1,284.6 million.", "Headcount was 4,512."]
    check = check_answer("Revenue was 1,284.6 million and headcount 4,512.", passages)
    assert check.result == "supported" and not check.cited
    # A marker beyond the passages given cites nothing either.
    check = check_answer("Headcount was 4,513 [7].", passages)
    assert check.unsupported == ("4,513",) and not check.cited


def test_no_numbers_and_repeated_figures() -> None:
    assert check_answer("The provided information is insufficient to answer this question.", []).result == (
        "no_numbers"
    )
    assert check_answer("Revenue grew in 2024 [1].", ["Revenue grew."]).checked == ()
    check = check_answer("It was 7.1% [1]; yes, 7.1% [1].", ["It was 7.2%."])
    assert check.checked == ("7.1%", "7.1%") and check.unsupported == ("7.1%",)


def test_a_percent_matches_the_same_number_in_a_table_without_the_sign() -> None:
    assert check_answer("Gross margin was 41.3% [1].", ["Gross margin (%) | 41.3 | 39.8"]).result == "supported"


def test_a_chinese_table_unit_scales_bare_figures() -> None:
    passage = "单位：万元\n营业收入 | 513,700"
    assert check_answer("营业收入为51.37亿元[1]。", [passage]).result == "supported"
    assert check_answer("营业收入为513,700万元[1]。", [passage]).result == "supported"
    assert check_answer("营业收入为51.37亿元[1]。", ["单位：千万元\n营业收入 | 513.7"]).result == "supported"


def test_a_bullet_dash_is_not_a_minus() -> None:
    (figure,) = answer_figures("Highlights:\n- 12.5% growth [1]")
    assert figure.text == "12.5%" and figure.raw == 12.5


BLUEFIN = (
    "Bluefin Logistics Q2 2024\n- Revenue: USD 612.4 million, up 6.7% from USD 574.0 million.\n"
    "| Segment | Revenue |\n| Freight | 401.0 |\n| Total | 612.4 |"
)


def test_a_named_scale_must_agree_with_the_scale_the_passage_states() -> None:
    # A hundredfold error: the digits are in the passage, the amount is not.
    assert check_answer("营业收入是612.4亿美元[1]。", [BLUEFIN]).unsupported == ("612.4亿",)
    assert check_answer("Revenue was USD 612.4 billion [1].", [BLUEFIN]).result == "unsupported"
    # The same amount in other words, or the digits without a scale, still pass.
    for answer in ("营业收入是6.124亿美元[1]。", "Revenue was USD 612.4 million [1].", "Revenue was 612.4 [1]."):
        assert check_answer(answer, [BLUEFIN]).result == "supported", answer


def test_a_table_cell_takes_the_scale_its_header_states() -> None:
    table = "Revenue (USD million) | 588.9 | 612.4"
    assert check_answer("Revenue was USD 612.4 million [1].", [table]).result == "supported"
    assert check_answer("营业收入是612.4亿美元[1]。", [table]).result == "unsupported"
    thousands = "CONSOLIDATED BALANCE SHEETS (In thousands)\nAccounts payable 303,062"
    assert check_answer("Accounts payable was $303,062 million [1].", [thousands]).result == "unsupported"
    assert check_answer("Accounts payable was $303.1 million [1].", [thousands]).result == "supported"


def test_digits_alone_still_match_when_the_passage_leaves_the_scale_open() -> None:
    # A chunk cut below its table's header keeps no unit: the digits are all it has.
    assert check_answer("Net revenue was USD 1,284.6 million [1].", ["Net revenue 1,284.6 1,102.9"]).result == (
        "supported"
    )


def test_a_percentage_is_not_supported_by_an_amount_with_the_same_digits() -> None:
    # A sales table in millions holds 966 and 1,119: "966%" is not a figure of it.
    sales = "(Dollars in Millions)\nOther  U.S. 376 446  Worldwide 966 1,119 (13.6)%"
    assert check_answer("The gross margin was 966% [1].", [sales]).unsupported == ("966%",)
    assert check_answer("Other sales were USD 966 million [1].", [sales]).result == "supported"
    assert check_answer("Sales fell 13.6% [1].", [sales]).result == "supported"
    # A table that leaves its percentages bare says so in its unit; one with no unit leaves the digits open.
    margins = "(in millions, except per share data and percentages)\nGross margin 41.3 39.8"
    assert check_answer("Gross margin was 41.3% [1].", [margins]).result == "supported"
    assert check_answer("Gross margin was 41.3% [1].", ["Gross margin 41.3 39.8"]).result == "supported"
