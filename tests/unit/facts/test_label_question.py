"""Rows a question names by their own label (non-standard items), answered from a pipe table's facts."""

from __future__ import annotations

import pytest
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.facts.extract import extract_facts
from weaverbird_common.facts.label_question import answer_row
from weaverbird_common.facts.markdown_tables import has_table
from weaverbird_common.facts.model import Fact


def _facts_of(table: str) -> list[Fact]:
    """The facts of a one-page English document of 2019 that holds `table`."""
    return extract_facts(Document("d", "Tables", "tables.md", [Page(None, table)], "en", "", 2019, None, ""))


def _assert_reads(table: str, question: str, expected: float | None) -> None:
    """The table-row reader's answer to `question` over `table`: `expected`, or no answer for None."""
    answer = answer_row(question, _facts_of(table))
    if expected is None:
        assert answer is None
    else:
        assert answer is not None and answer.value == pytest.approx(expected)


TABLE = """Films released (number)

| | 2019 | 2018 | 2017 |
|---|---|---|---|
| Hindi films | 7 | 10 | 8 |
| Regional films (excluding Tamil films) | 49 | 3 | 12 |
| Personnel expenses: | | | |
| Wages | 120.5 | 100.0 | 90.0 |
| Pension expenses | 20.0 | 16.0 | 15.0 |
| Total | 140.5 | 116.0 | 105.0 |
"""


@pytest.fixture(scope="module")
def facts() -> list:
    return _facts_of(TABLE)


def test_average_over_a_year_range(facts: list) -> None:
    answer = answer_row("What is the average regional films (excluding Tamil films) from 2017-2019?", facts)
    assert answer is not None and answer.op == "average"
    assert answer.value == pytest.approx((49 + 3 + 12) / 3)


def test_change_and_percentage_change_between_two_years(facts: list) -> None:
    change = answer_row("What was the change in Hindi films between 2018 and 2019?", facts)
    assert change is not None and change.value == pytest.approx(7 - 10)
    pct = answer_row("What was the percentage change in wages from 2018 to 2019?", facts)
    assert pct is not None and pct.unit == "percent" and pct.value == pytest.approx(20.5)


def test_a_total_row_takes_the_name_of_its_caption(facts: list) -> None:
    answer = answer_row("What is the percentage change in total personnel expenses from 2018 to 2019?", facts)
    assert answer is not None and answer.label.lower().startswith("total personnel")
    assert answer.value == pytest.approx((140.5 - 116.0) / 116.0 * 100)


def test_no_row_named_means_no_answer(facts: list) -> None:
    assert answer_row("What was the dividend per share in 2019?", facts) is None


def test_ratio_and_share_of_two_named_rows(facts: list) -> None:
    ratio = answer_row("What is the ratio of wages to pension expenses in 2019?", facts)
    assert ratio is not None and ratio.op == "ratio" and ratio.value == pytest.approx(120.5 / 20.0)
    share = answer_row("What is Hindi films as a percentage of regional films (excluding Tamil films) in 2019?", facts)
    assert share is not None and share.unit == "percent" and share.value == pytest.approx(7 / 49 * 100)


SALES = """Sales by country (in thousands)

| | 2019 | 2018 | 2017 |
|---|---|---|---|
| United States | 300.0 | 280.0 | 250.0 |
| Mexico | 90.0 | 12.0 | 2.0 |
| Other international | 60.0 | 68.0 | 48.0 |
| Total | 450.0 | 360.0 | 300.0 |
"""


@pytest.fixture(scope="module")
def sales() -> list:
    return _facts_of(SALES)


def test_a_total_asked_of_a_table_whose_last_row_is_just_total(sales: list) -> None:
    answer = answer_row("What was the percentage change in total sales between 2018 and 2019?", sales)
    assert answer is not None and answer.label == "Total"
    assert answer.value == pytest.approx((450 - 360) / 360 * 100)


def test_no_year_named_reads_the_tables_latest_periods(sales: list) -> None:
    value = answer_row("What were the sales in Mexico?", sales)
    assert value is not None and value.value == pytest.approx(90.0)
    change = answer_row("What was the change in sales in Mexico?", sales)
    assert change is not None and change.value == pytest.approx(90.0 - 12.0)
    average = answer_row("What is the average of other international sales?", sales)
    assert average is not None and average.value == pytest.approx((60 + 68 + 48) / 3)


def test_one_year_average_is_the_mean_with_the_prior_year(sales: list) -> None:
    answer = answer_row("What is the 2019 average United States sales?", sales)
    assert answer is not None and answer.op == "average" and answer.value == pytest.approx((300 + 280) / 2)
    per = answer_row("What is the average United States sales per customer in 2019?", sales)
    assert per is None  # "average ... per customer" is a ratio the table does not hold


def test_a_total_over_named_years_is_their_sum(sales: list) -> None:
    answer = answer_row("What were the total sales in Mexico in 2018 and 2019 altogether?", sales)
    assert answer is not None and answer.op == "sum" and answer.value == pytest.approx(102.0)


def test_difference_and_sum_of_two_named_rows(sales: list) -> None:
    diff = answer_row("What is the difference between United States and Mexico sales in 2018?", sales)
    assert diff is not None and diff.op == "difference" and diff.value == pytest.approx(280 - 12)
    both = answer_row("What is the sum of Mexico and other international sales in 2019?", sales)
    assert both is not None and both.op == "sum" and both.value == pytest.approx(150.0)


COSTS = """Restructuring (in millions)

| | 2019 | 2018 |
|---|---|---|
| Other operating expenses | 40.0 | 50.0 |
| Total other operating expenses | 160.0 | 500.0 |
| Diluted weighted-average shares | 58.6 | 55.4 |
"""

PLAN = """Restructuring plan costs (in millions)

| | 2019 | 2018 |
|---|---|---|
| Fiscal 2018 Plan | | |
| Employee termination costs | 53.0 | 39.0 |
| Facility exit costs | 2.5 | 3.0 |
| Total | 55.5 | 42.0 |
"""


@pytest.fixture(scope="module")
def costs() -> list:
    return _facts_of(COSTS)


def test_total_in_the_question_picks_the_total_row_among_equals(costs: list) -> None:
    total = answer_row("What was the percentage change in Total Other operating expenses between 2018 and 2019?", costs)
    assert total is not None and total.value == pytest.approx((160 - 500) / 500 * 100)
    plain = answer_row("What was the change in other operating expenses between 2018 and 2019?", costs)
    assert plain is not None and plain.value == pytest.approx(-10.0)


def test_weighted_average_names_a_row_not_an_average(costs: list) -> None:
    answer = answer_row("What was the change in the diluted weighted-average shares between 2018 and 2019?", costs)
    assert answer is not None and answer.op == "change" and answer.value == pytest.approx(58.6 - 55.4)


def test_a_share_of_the_one_total_row_named_by_its_caption() -> None:
    costs = _facts_of(PLAN)
    assert "Total Fiscal 2018 Plan" in {f.label for f in costs}  # the caption names the total row
    answer = answer_row("What was the employee termination costs as a proportion of total costs in 2019?", costs)
    # A proportion not asked in percent is a fraction (the share of a percentage question is in percent).
    assert answer is not None and answer.value == pytest.approx(53.0 / 55.5)
    among = answer_row("In 2018, what is the percentage constitution of facility exit costs among the total?", costs)
    assert among is not None and among.value == pytest.approx(3.0 / 42.0 * 100)


def test_a_change_in_one_year_is_from_the_year_before_and_a_range_is_its_ends(sales: list) -> None:
    one = answer_row("What is the change in Mexico sales in 2019?", sales)
    assert one is not None and one.value == pytest.approx(90.0 - 12.0)
    ends = answer_row("What was the change in United States sales from 2017 to 2019?", sales)
    assert ends is not None and ends.value == pytest.approx(300.0 - 250.0)
    pct = answer_row("What is the percentage change in other international sales in 2019?", sales)
    assert pct is not None and pct.value == pytest.approx((60 - 68) / 68 * 100)


def test_how_much_a_row_decreased_by_is_a_positive_fall(sales: list) -> None:
    answer = answer_row("How much did other international sales decrease by from 2018 to 2019?", sales)
    assert answer is not None and answer.op == "decrease" and answer.value == pytest.approx(8.0)


ROLL = """Goodwill (in millions)

| | 2019 | 2018 |
|---|---|---|
| Goodwill, beginning of the year | 1,620.2 | 1,580.0 |
| Acquisitions | 830.6 | 40.2 |
| Goodwill, end of the year | 2,450.8 | 1,620.2 |
"""


def test_a_roll_forwards_opening_row_answers_only_when_named() -> None:
    facts = _facts_of(ROLL)
    change = answer_row("What was the change in goodwill from 2018 to 2019?", facts)
    assert change is not None and change.label == "Goodwill, end of the year"
    assert change.value == pytest.approx(2450.8 - 1620.2)
    opening = answer_row("What was the goodwill at the beginning of the year in 2019?", facts)
    assert opening is not None and opening.value == pytest.approx(1620.2)


RIGHTS = "| | 2019 | 2018 |\n|---|---|---|\n| Rights granted during the period | 4,465,617 | 5,691,731 |"
SERVICES = (
    "| ($ in thousands) | 2019 | % Change 2018 to 2019 | 2018 |\n|---|---|---|---|\n"
    "| Services | $59,545 | (8)% | $64,476 |\n| Total revenue | $63,333 | (9)% | $69,549 |"
)
EQUIPMENT = (
    "| (in thousands) | 2019 | 2018 |\n|---|---|---|\n| Land, property and equipment, gross | $8,109 | $8,381 |\n"
    "| Free Cash Flow (non-U.S. GAAP measure) | $497 | $533 |"
)


AWARDS = (
    "| (in thousands) | 2019 | 2018 |\n|---|---|---|\n| Stock options | | |\n| Granted | 300 | 200 |\n"
    "| Forfeited | 10 | 20 |\n| Restricted stock units | | |\n| Granted | 90 | 45 |\n| Forfeited | 5 | 4 |"
)
DATED = (
    "| | March 30, 2019 | March 31, 2018 |\n|---|---|---|\n| Land | $4.0 | $1.0 |\n"
    "| Less: Accumulated depreciation | 20.0 | 18.0 |\n| Buildings | 70.0 | 60.0 |"
)
HOLDINGS = (
    "| | 2019 | 2018 | 2017 |\n|---|---|---|---|\n| Opening balance | 500 | 420 | 400 |\n"
    "| Purchases (Note (b)) | 40 | 60 | 30 |\n| Cash flow (before interest) | 900 | 800 | 700 |\n"
    "| Cash flow | 610 | 500 | 410 |\n| At end of the year | 540 | 500 | 420 |"
)


QUARTERS = (
    "| Quarters ended | June 29, 2019 | March 30, 2019 | December 29, 2018 |\n|---|---|---|---|\n"
    "| Net revenue | $1,200 | $1,000 | $800 |\n| Gross margin | 40.0% | 38.0% | 35.0% |"
)


ALLOWANCE = "| | 2019 | 2018 | 2017 |\n|---|---|---|---|\n| Ending balance | $(1.5) | $(2.0) | $(2.5) |"


CUSTOMERS = (
    "| Percentage of revenue | 2019 | 2018 |\n|---|---|---|\n| Acme Holdings Co., Ltd. (“Acme”) | 30% | 25% |\n"
    "| Beta Industries Inc. (“Beta”) | 12% | 9% |"
)


PLANT = (
    "| (in thousands) | 2019 | 2018 |\n|---|---|---|\n| Land | $600 | $600 |\n| Buildings | 900 | 850 |\n"
    "| Leasehold improvements | 500 | 400 |\n| Property and equipment, gross | $2,000 | $1,850 |"
)


POSITION = (
    "| US$'000 | 2019 | 2018 |\n|---|---|---|\n| Total current assets | 500 | 400 |\n| Total assets | 900 | 800 |\n"
    "| Total current liabilities | 250 | 320 |"
)


SPLIT_YEARS = (
    "| € million | 2017/2018 | 2018/2019 |\n|---|---|---|\n| Operating profit | 700 | 820 |\n"
    "| Income taxes | −210 | −300 |"
)


SUBSCRIBERS = (
    "| | August 31, 2019 | August 31, 2019 | August 31, 2018 |\n|---|---|---|---|\n"
    "| Video customers | 312,000 | (4,000) | (6,000) |"
)
PLANS = "| | 2019 | 2018 | 2019 | 2018 |\n|---|---|---|---|---|\n| Discount rate | 4.00% | 3.75% | 1.90% | 2.80% |"


PREPAID = "| | 2019 | 2018 |\n|---|---|---|\n| Prepaid expenses | 19 | 17 |\n| Other assets | 22 | 19 |"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # A "total" the table does not print is not a row named by half its words ("Other assets").
        ("What were the total assets as reported in 2019?", None),
        ("What were the total other assets in 2019?", 22),
    ],
)
def test_a_total_not_printed_is_not_a_part_row(question: str, expected: float | None) -> None:
    answer = answer_row(question, _facts_of(PREPAID))
    assert (answer.value if answer else None) == expected


# Each reading rule of the table-row reader with the cases written for it (tables above).
@pytest.mark.parametrize(
    ("table", "question", "expected"),
    [
        # --- reading rules for two periods and relations
        # "The difference between 2018 and 2019" is the first named less the second; a change runs forward.
        (RIGHTS, "What is the difference in rights granted during the period between 2018 and 2019?", 1_226_114),
        (RIGHTS, "What is the change in rights granted during the period between 2018 and 2019?", -1_226_114),
        # A "% Change 2018 to 2019" column holds no period; a ratio of one row is not its value.
        (SERVICES, "What was the change in services between 2018 and 2019?", 59_545 - 64_476),
        (SERVICES, "What is the ratio of services in 2019?", None),
        # One row over two years; a label named without its parenthetical aside.
        (
            EQUIPMENT,
            "What is the ratio of land, property and equipment, gross in fiscal 2019 to fiscal 2018?",
            8_109 / 8_381,
        ),
        (EQUIPMENT, "What is the percentage change in Free Cash Flow from 2018 to 2019?", (497 - 533) / 533 * 100),
        # --- reading rows by heading and by their words
        # A heading over rows ("Restricted stock units" over "Granted") tells two rows of one label apart.
        (AWARDS, "What is the percentage change in restricted stock units granted from 2018 to 2019?", 100.0),
        (AWARDS, "What was the change in stock options granted between 2018 and 2019?", 100),
        # A column's header words ("March 30,") are no heading: the row keeps one name across its columns.
        (DATED, "What was the change in the land value from 2018 to 2019?", 3.0),
        # Of two rows named in full, the one with no words left over ("Cash flow", not "... (before interest)").
        (HOLDINGS, "What is the 2018 average cash flow?", (500 + 410) / 2),
        # A nested aside ("(Note (b))") is no part of the name; "2018 year end" names a column, not a row.
        (HOLDINGS, "How much is the change in purchases between 2018 year end and 2019 year end?", -20),
        # --- reading columns by date and relative moves
        # Columns named by their closing dates are read by date, even several in one year; a date without
        # its year takes the one year named.
        (QUARTERS, "What was the change in net revenue between the quarters ended June 29 and March 30 in 2019?", 200),
        (
            QUARTERS,
            "What was the percentage change in net revenue between the quarters ended March 30, 2019 and "
            "December 29, 2018?",
            25.0,
        ),
        # "Percentage difference" between two periods is a relative move; an "absolute percentage change"
        # of a row printed in percent is its move in points.
        (SALES, "What is the percentage difference in sales in Mexico between 2018 and 2019?", 650.0),
        (
            QUARTERS,
            "What was the absolute percentage change in gross margin between March 30, 2019 and June 29, 2019?",
            2.0,
        ),
        # A percentage difference of two rows names no base: no answer.
        (SALES, "What is the percentage difference between United States and Mexico sales in 2019?", None),
        # --- signed bases and moves of averages
        # A percentage change is (new - old) / old with the figures as printed, a negative base included.
        (ALLOWANCE, "What was the percentage change in the ending balance between 2018 and 2019?", -25.0),
        # "The change between 2018 and 2019 average X" moves from one average balance (the year's and the
        # prior year's figure) to the next; "the change in the average X" names a row and is no such move.
        (HOLDINGS, "What is the change between 2018 and 2019 average cash flow?", (610 + 500) / 2 - (500 + 410) / 2),
        (HOLDINGS, "What is the percentage change between 2018 and 2019 average cash flow?", 100 / 455 * 100),
        # --- short names and the average of two rows
        # A label's defined short name ("(“Acme”)") names its row; "the average X of A and B" is two rows' mean.
        (CUSTOMERS, "What was the revenue from Acme in 2018?", 25.0),
        (CUSTOMERS, "What is the average percentage of revenue from Acme and Beta in 2019?", 21.0),
        (SALES, "What is the average sales of Mexico and other international in 2018?", 40.0),
        # --- a share of two rows summed
        # A share whose part names two rows ("A and B", "the sum of A and B") is their sum over the whole;
        # "proportion of A over B" is A / B, a fraction unless asked "(in percentage)".
        (
            PLANT,
            "What is the proportion of land and leasehold improvements over the gross property and equipment in 2019?",
            0.55,
        ),
        (
            SALES,
            "What is the proportion (in percentage) of the sum of Mexico and other international sales over total "
            "sales in 2019?",
            150 / 450 * 100,
        ),
        # --- a named metric from the tables line items
        # A standard metric the table does not print is computed from its line items (metric library).
        (POSITION, "What is the current ratio in 2019?", 2.0),
        (POSITION, "What was the working capital in 2018?", 80),
        # An input the table lacks (inventories for the quick ratio): no answer.
        (POSITION, "What is the quick ratio in 2019?", None),
        # --- split fiscal years name one column
        # A split fiscal year ("2018/2019") is one year, read as the table's header of that form is.
        (SPLIT_YEARS, "What was the change in operating profit in 2018/2019 from 2017/2018?", 120),
        (SPLIT_YEARS, "What were the income taxes in 2018/2019?", -300),
        # --- what a table cannot answer and repeated years
        # A move of a share asks a row printed in percent: a table of amounts alone does not answer it.
        (SALES, "What was the change in the percentage of sales from Mexico between 2018 and 2019?", None),
        (CUSTOMERS, "What was the change in the percentage of revenue from Acme between 2018 and 2019?", 5.0),
        # Two side-by-side columns of one year with different figures name no one figure of that year.
        (SUBSCRIBERS, "What was the change in the video customers from 2018 to 2019?", None),
        # Groups of columns that repeat the years: the first group's figure.
        (PLANS, "What is the percentage change in discount rate between 2018 and 2019?", (4.0 - 3.75) / 3.75 * 100),
    ],
)
def test_table_row_reading_rules(table: str, question: str, expected: float | None) -> None:
    _assert_reads(table, question, expected)


def test_pipe_lines_without_a_separator_row_are_the_same_table() -> None:
    # Tables written out of a spreadsheet or an extraction tool: no "|---|" row, no outer pipes.
    plain = "\n".join(
        " | ".join(c.strip() for c in line.strip("|").split("|")) if line.startswith("|") else line
        for line in TABLE.splitlines()
        if not line.startswith("|---")
    )
    assert plain.splitlines()[2] == " | 2019 | 2018 | 2017"  # the empty first cell of the header
    as_markdown = [(f.label, f.period, f.value) for f in _facts_of(TABLE)]
    assert [(f.label, f.period, f.value) for f in _facts_of(plain)] == as_markdown
    _assert_reads(plain, "What is the change in Hindi films from 2018 to 2019?", -3)
    # One line with a pipe, or lines of different widths, are not a table.
    assert not has_table("Revenue | the year's total\nwas 1,200 in 2019 and 1,000 in 2018.")
    assert not has_table("a | b\nc | d | e")
    assert has_table(plain) and has_table(TABLE)


AGEING = """Trade receivables by age

| 30 June 2019 | Current | 0 to 30 days past due | More than 30 days past due | Total |
|---|---|---|---|---|
|  | $'000 | $'000 | $'000 | $'000 |
| Gross carrying amount | 23,762 | 2,068 | 2,490 | 28,320 |
| Net receivables | 23,524 | 1,965 | 2,090 | 27,579 |
"""


def test_a_table_whose_columns_are_categories_is_read_cell_by_cell() -> None:
    facts = extract_facts(Document("d", "Tables", "tables.md", [Page(None, AGEING)], "en", "", None, None, ""))
    by_label = {f.label: f for f in facts}
    current = by_label["Current Net receivables"]
    assert (current.value, current.period.fiscal_year, current.concept) == (23524, 2019, "")  # no line item
    assert by_label["Total Net receivables"].value == 27579
    # A share named with no year is of the table's (latest) period.
    _assert_reads(AGEING, "How much was the percentage of current net receivables out of total net receivables?",
                  23524 / 27579 * 100)  # fmt: skip
    difference = "What was the difference between total net receivables and current net receivables?"
    _assert_reads(AGEING, difference, 27579 - 23524)
    # No date anywhere: the period is unknown (0), the cells are still read.
    undated = AGEING.replace("30 June 2019", "Days past due")
    _assert_reads(undated, difference, 27579 - 23524)


def test_columns_that_look_like_unread_periods_are_not_categories() -> None:
    table = "| | F19 | F18 (3) |\n|---|---|---|\n| ROFE (%) | 15.2 | 17.1 |\n| Sales | 8,657 | 8,244 |\n"
    assert _facts_of(table) == []
