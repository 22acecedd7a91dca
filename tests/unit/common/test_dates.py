"""Full calendar dates in questions and document heads, English and Chinese."""

from __future__ import annotations

from datetime import date

import pytest
from weaverbird_common.dates import dates_in, latest_date, parse_iso


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("As of May 26, 2023, what is the total amount Pepsico may borrow?", [date(2023, 5, 26)]),
        ("Which segment is discontinued from August 30, 2023 onward?", [date(2023, 8, 30)]),
        ("NEW BRUNSWICK, N.J., Aug. 30 2023 /PRNewswire/", [date(2023, 8, 30)]),
        ("the quarterly period endedJuly29,2023", [date(2023, 7, 29)]),  # pypdf's squeezed spaces
        ("Meeting held on 3 May 2023.", [date(2023, 5, 3)]),
        ("September 1st, 2023", [date(2023, 9, 1)]),
        ("published 2023-05-30", [date(2023, 5, 30)]),
        ("公司于2023年6月26日发布公告", [date(2023, 6, 26)]),
        ("February 30, 2023", []),  # no such day
        ("revenue in May 2023 and in FY2023", []),  # a month or a year is a period, not a date
        ("notes due 2026; 10-2023-05-26-x", []),
    ],
)
def test_dates_in_reads_full_dates_only(text: str, expected: list[date]) -> None:
    assert dates_in(text) == expected


def test_latest_date_and_iso_payloads() -> None:
    assert latest_date("for the year ended December 31, 2022; shares as of January 31, 2023") == date(2023, 1, 31)
    assert latest_date("no date here") is None
    assert parse_iso("2023-05-05") == date(2023, 5, 5)
    assert parse_iso("last Tuesday") is None and parse_iso("") is None
