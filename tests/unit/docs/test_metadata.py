"""Ingester metadata: file-name parsing, question filters (English/Chinese) and language detection."""

from __future__ import annotations

import pytest
from weaverbird_common.docs.metadata import FileMetadata, metadata_from_filename
from weaverbird_common.questions import (
    alias_map,
    detect_language,
    filters_from_question,
    normalize_company,
    short_company_name,
)

KNOWN = ["3M", "ADOBE", "AMCOR", "BESTBUY", "JOHNSON_JOHNSON", "PG_E", "AES", "INTEL", "MICROSOFT", "PFIZER"]
# What the KB's catalog would hold: the other names each company's documents use.
CATALOG = {
    "3M": ["3M Company", "MMM"],
    "AMCOR": ["Amcor plc", "AMCR", "安姆科"],
    "JOHNSON_JOHNSON": ["Johnson & Johnson", "JNJ"],
    "MICROSOFT": ["Microsoft Corporation", "MSFT", "微软"],
    "PG_E": ["PG&E Corporation", "Pacific Gas and Electric Company"],
}
ALIASES = alias_map(CATALOG)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("financebench/ADOBE_2022_10K.pdf", FileMetadata("ADOBE", 2022, None, "10K", "")),
        ("AMCOR_2023Q2_10Q.pdf", FileMetadata("AMCOR", 2023, 2, "10Q", "")),
        (
            "FOOTLOCKER_2022_8K_dated-2022-05-20.pdf",
            FileMetadata("FOOTLOCKER", 2022, None, "8K", "2022-05-20"),
        ),
        ("AMCOR_2023Q4_EARNINGS.pdf", FileMetadata("AMCOR", 2023, 4, "EARNINGS", "")),
        ("JOHNSON_JOHNSON_2022_10K.pdf", FileMetadata("JOHNSON_JOHNSON", 2022, None, "10K", "")),
        ("Pfizer_2023Q2_10Q", FileMetadata("PFIZER", 2023, 2, "10Q", "")),
        ("C:\\kb\\3M_2018_10K.pdf", FileMetadata("3M", 2018, None, "10K", "")),
        ("腾讯控股2023年第三季度报告.pdf", FileMetadata("腾讯控股", 2023, 3, "", "")),
        ("贵州茅台_2023年年度报告.pdf", FileMetadata("贵州茅台", 2023, None, "", "")),
        ("notes.md", FileMetadata()),
        ("2023 review.txt", FileMetadata()),
    ],
)
def test_metadata_from_filename(name: str, expected: FileMetadata) -> None:
    assert metadata_from_filename(name) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What was Adobe's revenue in FY2022?", {"company": "ADOBE", "year": 2022}),
        ("3M 2018年第二季度的营业收入是多少？", {"company": "3M", "year": 2018, "quarter": 2}),
        ("Q3 2023", {"year": 2023, "quarter": 3}),
        # A comma after a year is punctuation; a four-digit year may follow Q2'.
        ("In 2023, what did Adobe earn?", {"company": "ADOBE", "year": 2023}),
        ("As of Q2'2023, is Pfizer spinning off a segment?", {"company": "PFIZER", "year": 2023, "quarter": 2}),
        ("A backlog of 2,022 units and a ratio of 2022,5", {}),
        ("Are Best Buy's gross margins historically consistent?", {"company": "BESTBUY"}),
        (
            "What drove gross margin change as of FY2022 for JnJ?",
            {"company": "JOHNSON_JOHNSON", "year": 2022},
        ),
        ("How did Johnson & Johnson do in fiscal 2021?", {"company": "JOHNSON_JOHNSON", "year": 2021}),
        ("PG&E capital expenditure in 2Q23", {"company": "PG_E", "year": 2023, "quarter": 2}),
        ("What did AES Corporation earn in the third quarter?", {"company": "AES", "quarter": 3}),
        # The latest year wins: its filing reports the earlier one as a comparative.
        (
            "Has Microsoft increased its debt between FY2023 and the FY2022 period?",
            {"company": "MICROSOFT", "year": 2023},
        ),
        ("Did Pfizer grow its PPNE between FY20 and FY21?", {"company": "PFIZER", "year": 2021}),
        ("Change in cash between FY 2023 and Q2 of FY2024?", {"year": 2024, "quarter": 2}),
        ("微软2023财年的10年期债券利率", {"company": "MICROSOFT", "year": 2023}),
        ("安姆科二〇二二年第四季度收入", {"company": "AMCOR", "year": 2022, "quarter": 4}),
        # Whole words only: no Intel in "intelligence", no AES in "sales"; money is no year.
        ("How much did sales intelligence tools cost, about $2022 million?", {}),
        # Two companies: filtering on one would hide the other.
        ("Compare Adobe and Intel in 2021", {"year": 2021}),
    ],
)
def test_filters_from_question(question: str, expected: dict[str, object]) -> None:
    assert filters_from_question(question, KNOWN, aliases=ALIASES) == expected


def test_aliases_only_fire_for_known_companies() -> None:
    aliases = {"JPM": "JPMORGAN"}
    assert filters_from_question("JPM results in 2022", ["ADOBE"], aliases=aliases) == {"year": 2022}
    assert filters_from_question("JPM results in 2022", ["JPMORGAN"], aliases=aliases) == {
        "company": "JPMORGAN",
        "year": 2022,
    }
    # No hand-kept table any more: without the catalog's aliases a ticker names nothing.
    assert filters_from_question("JPM results in 2022", ["JPMORGAN"]) == {"year": 2022}


def test_tickers_count_only_in_upper_case() -> None:
    known, aliases = ["ALLSTATE", "3M"], alias_map({"ALLSTATE": ["ALL", "The Allstate Corporation"], "3M": ["MMM"]})
    assert filters_from_question("Is all of 3M's debt long-term?", known, aliases=aliases) == {"company": "3M"}
    assert filters_from_question("What did ALL pay in claims?", known, aliases=aliases) == {"company": "ALLSTATE"}
    assert filters_from_question("mmm revenue", ["3M"], aliases=aliases) == {}
    assert filters_from_question("All of 3M's debt", known, aliases=aliases) == {"company": "3M"}
    assert filters_from_question("JnJ sales", ["JOHNSON_JOHNSON"], aliases={"JNJ": "JOHNSON_JOHNSON"}) == {
        "company": "JOHNSON_JOHNSON"
    }
    assert filters_from_question("MMM revenue", ["3M"], aliases=aliases) == {"company": "3M"}
    # One-letter tickers never count: "A" and "C" are words too.
    assert filters_from_question("Is C a bank?", ["CITIGROUP"], aliases={"C": "CITIGROUP"}) == {}


@pytest.mark.parametrize(
    ("question", "company"),
    [
        ("What was Coca-Cola's operating margin?", "K1"),
        ("coca cola dividends", "K1"),
        ("What were the KO buybacks?", "K1"),
        ("JPMorgan Chase net interest income", "K2"),
        ("Did Johnson & Johnson raise guidance?", "K3"),
        ("How much did American Water Works invest?", "K4"),
        ("Square's transaction revenue", "K5"),
        ("贵州茅台的营收", "K6"),
        ("贵州茅台酒股份有限公司的营收", "K6"),
        ("600519的毛利率", "K6"),
        ("What was 3M's revenue?", "K7"),
    ],
)
def test_catalog_aliases_match_by_their_short_names(question: str, company: str) -> None:
    # Opaque company keys: every match below comes from an alias, none from the company's own name.
    catalog = {
        "K1": ["The Coca-Cola Company", "KO"],
        "K2": ["JPMorgan Chase & Co.", "JPM"],
        "K3": ["Johnson & Johnson", "JNJ"],
        "K4": ["AMERICAN WATER WORKS COMPANY, INC.", "AWK"],
        "K5": ["Square, Inc.", "SQ"],
        "K6": ["贵州茅台", "贵州茅台酒股份有限公司", "600519"],
        "K7": ["3M Company", "MMM"],
    }
    assert filters_from_question(question, catalog, aliases=alias_map(catalog)) == {"company": company}


def test_one_word_aliases_must_be_capitalised_and_shared_aliases_are_dropped() -> None:
    aliases = alias_map({"BLOCK": ["Square, Inc."], "ACME": ["Delta"], "DELTA_AIR": ["Delta"]})
    assert "Delta" not in aliases  # two companies: a filter on one would hide the other
    assert filters_from_question("price per square foot", ["BLOCK"], aliases=aliases) == {}
    assert filters_from_question("Delta's fuel costs", ["ACME", "DELTA_AIR"], aliases=aliases) == {}


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("3M Company", "3M"),
        ("The Coca-Cola Company", "Coca-Cola"),
        ("JPMorgan Chase & Co.", "JPMorgan Chase"),
        ("Johnson & Johnson", "Johnson & Johnson"),
        ("Best Buy Co., Inc.", "Best Buy"),
        ("AMAZON.COM, INC.", "AMAZON"),
        ("贵州茅台酒股份有限公司", "贵州茅台酒"),
    ],
)
def test_short_company_name(name: str, short: str) -> None:
    assert short_company_name(name) == short


def test_known_companies_may_be_display_names() -> None:
    assert filters_from_question("best buy revenue", ["Best Buy"]) == {"company": "Best Buy"}
    assert filters_from_question("贵州茅台的营业收入", ["贵州茅台"]) == {"company": "贵州茅台"}
    assert normalize_company("PG&E") == normalize_company("PG_E") == "PGE"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What was Adobe's revenue in FY2022?", "en"),
        ("3M 2018年第二季度的营业收入是多少？", "zh"),
        ("公司2023年Q2的EBITDA是多少", "zh"),
        ("What is 腾讯控股's revenue in 2023?", "en"),
        ("2023 1,234 5,678", "en"),
        ("", "en"),
    ],
)
def test_detect_language(text: str, expected: str) -> None:
    assert detect_language(text) == expected
