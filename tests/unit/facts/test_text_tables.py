"""Statement tables read from pypdf-style page text: project-written statements, English and Chinese."""

from __future__ import annotations

import pytest
from weaverbird_common.facts.model import Period
from weaverbird_common.facts.text_tables import PageState, read_rows

# pypdf prints a row's figures and the next row's label on one line, breaks words, glues numbers to words.
INCOME = """Table of Contents
ACME TOOLS, INC.
CONSOLIDATED STATEMENTS OF OPERATIONS
(in millions, except per share data)

 Year Ended December 31,
2021  2022  2023 Net sales
$ 1,200  $ 1,350  $ 1,512 Cost of sales
(700 )  (760 )  (830 ) Gross profit
500  590  682 Selling, general and admin
istrative expenses 210  230  251 Restructuring charges
—  12  — Operating income
290  348  431 Income before income tax provision1,090  1,200  1,310 Diluted earnings per share
$ 1.25  $ 1.40  $ 1.62 See accompanying notes.
"""

BALANCE = """Consolidated Balance Sheets
December 31, 2023 and 2022
2023
2022
(in thousands, except share data)
ASSETS
CURRENT ASSETS
Cash and cash equivalents
$
10,374
$
9,943
Accounts receivable, net of allowance of $5 and $4, respectively
1,799
1,418
Inventories (Note 5)
1,055
604
Total current assets
13,228
11,965
"""

QUARTERLY = """BLUEJAY CORP.
CONDENSED CONSOLIDATED STATEMENTS OF INCOME (Unaudited)
(Dollars in millions)
Three Months Ended September 30, Nine Months Ended September 30,
2024 2023 2024 2023 Revenue
$ 410 $ 380 $ 1,190 $ 1,050 Net income
52 47 150 (12 )
"""

CHINESE = """合并利润表
单位：万元
项目 2023年度 2022年度
一、营业总收入 86,470.50 72,180.20
减：营业成本 60,102.00 50,880.10
二、营业利润 9,120.00 (1,230.00)
"""


def _by_label(text: str) -> dict[str, tuple]:
    rows, _ = read_rows(text)
    return {r.label: r for r in rows}


def test_income_statement_rows_periods_scale_and_signs() -> None:
    rows = _by_label(INCOME)
    sales = rows["Net sales"]
    assert sales.values == (1200.0, 1350.0, 1512.0)
    assert sales.table.columns == (
        Period(2021, 12, 0, "2021-12-31"),
        Period(2022, 12, 0, "2022-12-31"),
        Period(2023, 12, 0, "2023-12-31"),
    )
    assert sales.table.scale == 1e6 and sales.table.currency == "USD"
    assert sales.table.statement == "income"
    assert rows["Cost of sales"].values == (-700.0, -760.0, -830.0)  # parentheses are negative
    assert rows["Restructuring charges"].values == (0.0, 12.0, 0.0)  # a dash is zero
    assert rows["Selling, general and administrative expenses"].values == (210.0, 230.0, 251.0)
    assert rows["Income before income tax provision"].values == (1090.0, 1200.0, 1310.0)
    assert rows["Diluted earnings per share"].values == (1.25, 1.40, 1.62)


def test_balance_sheet_header_caption_then_columns_and_labels_with_figures() -> None:
    rows = _by_label(BALANCE)
    cash = rows["Cash and cash equivalents"]
    assert cash.values == (10374.0, 9943.0)
    assert [p.fiscal_year for p in cash.table.columns] == [2023, 2022]
    assert all(p.months == 0 for p in cash.table.columns)  # a balance is as of a date
    assert cash.table.scale == 1e3
    assert rows["Accounts receivable, net of allowance of $5 and $4, respectively"].values == (1799.0, 1418.0)
    assert rows["Inventories"].values == (1055.0, 604.0)  # the note reference is not part of the label


def test_ten_q_three_and_nine_month_columns() -> None:
    rows = _by_label(QUARTERLY)
    revenue = rows["Revenue"]
    months = [(p.fiscal_year, p.months, p.quarter) for p in revenue.table.columns]
    assert months == [(2024, 3, 3), (2023, 3, 3), (2024, 9, 0), (2023, 9, 0)]
    assert rows["Net income"].values == (52.0, 47.0, 150.0, -12.0)


def test_chinese_income_statement_in_ten_thousands() -> None:
    rows = _by_label(CHINESE)
    revenue = rows["一、营业总收入"]
    assert revenue.values == (86470.5, 72180.2)
    assert [p.fiscal_year for p in revenue.table.columns] == [2023, 2022]
    assert revenue.table.scale == 1e4
    assert revenue.table.statement == "income"
    assert rows["二、营业利润"].values == (9120.0, -1230.0)


def test_a_table_continues_on_the_next_page_until_prose_ends_it() -> None:
    _, state = read_rows(INCOME)
    rows, _ = read_rows("Other income\n5  6  7 Net income\n800  900  1,010\n", state)
    assert [r.label for r in rows] == ["Other income", "Net income"]
    prose = "x" * 700
    rows, _ = read_rows(f"{prose} 5  6  7 Net income 800 900 1,010", state)
    assert rows == []


@pytest.mark.parametrize("text", ["We had 1,234 employees and 56 stores in 2023.", "No figures at all."])
def test_prose_without_a_header_gives_no_rows(text: str) -> None:
    assert read_rows(text, PageState())[0] == []


# A statement that prints a section's total with no label: its figures follow the last item's on one line.
UNLABELLED_TOTALS = """LARKSPUR RESORTS CONSOLIDATED STATEMENTS OF OPERATIONS (In thousands)
 Year Ended December 31,
 2022   2021  Revenues
 Casino
 $ 600   $ 500  Rooms
 300   250  Food and beverage
 100   90
 1,000   840  Expenses
 Casino
 400   350  General and administrative
 200   190
 600   540  Operating income
 400   300
"""


def test_an_unlabelled_total_that_adds_up_its_section_is_named_and_the_items_keep_their_figures() -> None:
    rows, _ = read_rows(UNLABELLED_TOTALS)
    by_label = {r.label: r.values for r in rows}
    assert by_label["Food and beverage"] == (100.0, 90.0)  # not the total's figures
    assert by_label["Total Revenues"] == (1000.0, 840.0)
    # The second section's total is not named after the first section (its caption is not read).
    assert ("Total", (600.0, 540.0)) in [(r.label, r.values) for r in rows]
    assert by_label["Operating income"] == (400.0, 300.0)


def test_figures_that_do_not_add_up_are_not_a_total() -> None:
    rows, _ = read_rows(UNLABELLED_TOTALS.replace(" 1,000   840", " 1,010   840"))
    assert "Total Revenues" not in {r.label for r in rows}
    assert dict((r.label, r.values) for r in rows)["Food and beverage"] == (100.0, 90.0)


# A balance sheet that prints inventories only as their parts, the caption line without figures.
PARTS_ONLY = """Consolidated Balance Sheets
($ in millions)
As of June 30, 2023 2022
Current assets:
Cash and cash equivalents $ 689 $ 775
Inventories, net
Raw materials and supplies 992 1,114
Work in process and finished goods 1,221 1,325
Total current assets 2,902 3,214
"""


def test_a_line_item_caption_without_figures_is_the_section_of_its_parts_not_part_of_their_label() -> None:
    rows = _by_label(PARTS_ONLY)
    raw = rows["Raw materials and supplies"]
    assert raw.section == "Inventories, net" and raw.values == (992.0, 1114.0)
    assert "Work in process and finished goods" in rows
    # Title Case labels and one-concept labels are never split.
    from weaverbird_common.facts.rows import tidy_label

    assert tidy_label("Net Operating Revenues") == ("Net Operating Revenues", "")
    assert tidy_label("Cash and cash equivalents") == ("Cash and cash equivalents", "")


# A row with a blank first cell (pypdf prints it as an empty line): its two figures cannot be placed in three columns.
BLANK_CELLS = """CONSOLIDATED STATEMENTS OF OPERATIONS
(in millions)
Year Ended December 31,
2023
2022
2021
INCOME FROM CONTINUING OPERATIONS
(505)
(955)
149
Gain from disposal of discontinued businesses, net of income tax expense of $0, $1, and $0, respectively

4
3
NET INCOME (LOSS)
(505)
(951)
152
Senior notes, 1,253 shares issued
7
8
9
"""


def test_a_row_with_blank_cells_does_not_glue_itself_to_the_next_label() -> None:
    rows, _ = read_rows(BLANK_CELLS)
    by_label = {r.label: r.values for r in rows}
    assert by_label["NET INCOME (LOSS)"] == (-505.0, -951.0, 152.0)
    # The short row is dropped (its columns are unknown), never read as three values.
    assert not any("Gain from disposal" in label for label in by_label)
    # One figure followed by a lower-case word stays inside its label.
    assert by_label["Senior notes, 1,253 shares issued"] == (7.0, 8.0, 9.0)
