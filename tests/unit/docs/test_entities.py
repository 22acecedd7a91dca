"""Entities read at ingest (company, aliases, period, type, language) from metadata, file names and text.

Every cover page below is invented for these tests, written the way PDF extraction leaves real ones:
fields broken over lines, two columns interleaved, captions on the same line as the value.
"""

from __future__ import annotations

import pytest
from weaverbird_common.docs.entities import HEAD_CHARS, DocumentEntities, document_entities
from weaverbird_common.docs.loaders import load_text
from weaverbird_common.questions import alias_map, filters_from_question

TEN_K = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM
10-K
(Mark One)
☒ ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended
September 30
, 2023
OR
☐ TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
Commission File Number 001-40112
____________________________
Harborview Instruments, Inc.
(Exact name of registrant as specified in its charter)
Delaware 84-1234567
(State or other jurisdiction of incorporation) (I.R.S. Employer Identification No.)
Securities registered pursuant to Section 12(b) of the Act:
Title of each class Trading Symbol(s) Name of each exchange on which registered
Common Stock, $0.001 par value per share HVI The Nasdaq Global Select Market
2.250% Notes due 2031 HVI31 New York Stock Exchange
Securities registered pursuant to Section 12(g) of the Act: None
Indicate by check mark if the registrant is a well-known seasoned issuer. Yes ☒ No ☐
"""

# Two columns interleaved ("ended Commission file"), preferred shares listed beside the common stock.
TEN_Q = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-Q
Quarterly report pursuant to Section 13 or 15(d) of the Securities Exchange Act of 1934
For the quarterly period ended Commission file
July 1, 2023 number 1-9876
Kestrel Harbor Bancorp & Co.
(Exact name of registrant as specified in its charter)
Securities registered pursuant to Section 12(b) of the Act:
Title of each class Trading Symbol(s) Name of each exchange on which registered
Common stock KHB The New York Stock Exchange
Depositary Shares, each representing a one-thousandth interest in a share of 5.10% Preferred Stock, Series A
KHB PR A The New York Stock Exchange
Indicate by check mark whether the registrant (1) has filed all reports required.
"""

# Older cover: no trading-symbol column, no "(Exact name ...)" caption under the name.
OLD_TEN_K = """SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-K
ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended December 31, 2016
Commission file number
1-2345
NORTHGATE MILLING COMPANY
State of Incorporation: Delaware
SECURITIES REGISTERED PURSUANT TO SECTION 12(b) OF THE ACT:
Common Stock, Par Value $.01 Per Share New York Stock Exchange, Inc.
"""

EIGHT_K = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
WASHINGTON, D.C. 20549
FORM 8-K
CURRENT REPORT
Pursuant to Section 13 or 15(d) of the Securities Exchange Act of 1934
Date of Report (Date of earliest event reported): March 4, 2024 (March 1, 2024)
Lumen Peak Corporation
(Exact name of registrant as specified in its charter)
Ohio 1-5555 31-7654321
Title of each class Trading Symbol(s) Name of each exchange on which registered
Common Shares, without par value LPK New York Stock Exchange
"""

RELEASE = """FOR IMMEDIATE RELEASE
Cobalt Ridge Foods Reports Third-Quarter 2023 Results; Raises Full-Year Outlook
• Net sales of $1.2 billion, up 6%
DENVER, Colo. - October 26, 2023 - Cobalt Ridge Foods, Inc. (NYSE: CRF) today reported results for
the third quarter of fiscal 2023.
"""

ZH_REPORT = """证券代码：688123 证券简称：云帆科技
云帆智能科技股份有限公司
2023年第三季度报告
本公司董事会及全体董事保证本公告内容不存在任何虚假记载。
"""


def test_sec_10k_cover() -> None:
    found = document_entities(TEN_K)
    assert found == DocumentEntities(
        company="HARBORVIEW_INSTRUMENTS",
        aliases=("Harborview Instruments, Inc.", "HVI"),
        year=2023,
        quarter=None,
        doc_type="10K",
        language="en",
        dated="2023-09-30",
    )


@pytest.mark.parametrize(
    ("cover", "company", "aliases", "period", "doc_type"),
    [
        # "KHB PR A" is a preferred share, not a ticker; a 52/53-week quarter ending July 1 is the second quarter.
        (TEN_Q, "KESTREL_HARBOR_BANCORP", ("Kestrel Harbor Bancorp & Co.", "KHB"), (2023, 2), "10Q"),
        (OLD_TEN_K, "NORTHGATE_MILLING", ("NORTHGATE MILLING COMPANY",), (2016, None), "10K"),
        (EIGHT_K, "LUMEN_PEAK", ("Lumen Peak Corporation", "LPK"), (2024, None), "8K"),  # the report date's year
        (RELEASE, "COBALT_RIDGE_FOODS", ("Cobalt Ridge Foods, Inc.", "CRF"), (2023, 3), "EARNINGS"),
    ],
    ids=["10q-interleaved-columns", "old-10k-without-caption-or-symbols", "8k", "earnings-release-opening"],
)
def test_cover_pages_name_company_aliases_period_and_type(
    cover: str, company: str, aliases: tuple[str, ...], period: tuple[int, int | None], doc_type: str
) -> None:
    found = document_entities(cover)
    assert (found.company, found.aliases) == (company, aliases)
    assert ((found.year, found.quarter), found.doc_type) == (period, doc_type)


def test_a_document_is_dated_by_the_latest_date_of_its_first_pages() -> None:
    # A release's dateline, an 8-K's report date: what the KB can know about the company ends there.
    assert document_entities(RELEASE).dated == "2023-10-26"
    assert document_entities(EIGHT_K).dated == "2024-03-04"
    assert document_entities("Revenue grew in fiscal 2023.").dated == ""
    # A maturity or a meeting to come is not the document's date.
    assert document_entities("Dated March 1, 2024. 4.5% Notes due March 15, 2090.").dated == "2024-03-01"
    assert load_text(RELEASE, "cobalt-q3.txt").published == "2023-10-26"
    # A date the file name or the caller gives wins over the text's.
    assert load_text(RELEASE, "COBALT_2023Q3_EARNINGS_dated-2023-10-27.txt").published == "2023-10-27"


def test_chinese_report_cover() -> None:
    found = document_entities(ZH_REPORT)
    assert found.company == "云帆科技"  # the 简称 is how people name the company
    assert found.aliases == ("云帆智能科技股份有限公司", "云帆智能科技", "688123")
    assert (found.year, found.quarter, found.doc_type, found.language) == (2023, 3, "QUARTERLY_REPORT", "zh")


def test_file_name_wins_over_the_text_and_keeps_the_text_aliases() -> None:
    # The file name uses the fiscal quarter; the cover's period end alone would say calendar Q2.
    found = document_entities(TEN_Q, "KESTREL_2024Q1_10Q.pdf")
    assert (found.company, found.year, found.quarter, found.doc_type) == ("KESTREL", 2024, 1, "10Q")
    assert found.aliases == ("Kestrel Harbor Bancorp & Co.", "Kestrel Harbor Bancorp", "KHB")
    # Chinese file names: company, year and the report type.
    zh = document_entities("正文", "云帆科技_2023年年度报告.pdf")
    assert (zh.company, zh.year, zh.quarter, zh.doc_type) == ("云帆科技", 2023, None, "ANNUAL_REPORT")
    # File-name words that are no document type ("final") are not kept as one.
    assert document_entities("Notes.", "ACME_2023_final.pdf").doc_type == ""


def test_explicit_metadata_wins_over_file_name_and_text() -> None:
    meta = {"company": "Harbor View", "year": 2022, "quarter": 4, "doc_type": "10-K", "tickers": "HVI, HVW"}
    found = document_entities(TEN_K, "OTHER_2019_8K.pdf", meta)
    assert (found.company, found.year, found.quarter, found.doc_type) == ("HARBOR_VIEW", 2022, 4, "10K")
    assert found.aliases[:3] == ("HVI", "HVW", "Harborview Instruments, Inc.")
    # Front matter that leaves "company:" empty is about no company, whatever the text resembles.
    assert document_entities(RELEASE, "note.md", {"company": None}).company == ""


def test_notes_mentioning_forms_are_no_filings() -> None:
    note = (
        "# Form 10-K vs Form 10-Q\n\nCompanies file reports with the Securities and Exchange Commission. "
        "A hypothetical manufacturer reports the following results for one year:\n"
    )
    assert document_entities(note) == DocumentEntities()


def test_small_caps_split_by_extraction_are_joined() -> None:
    cover = TEN_K.replace("Harborview Instruments, Inc.", "O RION R ESORTS I NTERNATIONAL")
    assert document_entities(cover).company == "ORION_RESORTS_INTERNATIONAL"


def test_only_the_first_pages_are_read() -> None:
    assert document_entities("x " * HEAD_CHARS + TEN_K).company == ""


def test_english_name_beside_the_chinese_one_is_an_alias() -> None:
    text = "---\ncompany: 青松新能源\nyear: 2024\n---\n青松新能源（Qingsong New Energy）主要从事光伏组件业务。"
    doc = load_text(text, "qingsong.md")
    assert (doc.company, doc.aliases, doc.year) == ("青松新能源", ["Qingsong New Energy"], 2024)


@pytest.mark.parametrize(
    ("question", "company"),
    [
        ("What was Harborview Instruments' fiscal 2023 revenue?", "HARBORVIEW_INSTRUMENTS"),
        ("HVI gross margin", "HARBORVIEW_INSTRUMENTS"),
        ("How did Cobalt Ridge Foods do in Q3?", "COBALT_RIDGE_FOODS"),
        ("云帆智能科技的营收", "云帆科技"),
        ("688123的营收", "云帆科技"),
    ],
)
def test_catalog_of_ingested_documents_resolves_questions(question: str, company: str) -> None:
    # The catalog the retriever would report from these payloads: no hand-kept company list.
    catalog: dict[str, list[str]] = {}
    for text in (TEN_K, RELEASE, ZH_REPORT):
        found = document_entities(text)
        catalog.setdefault(found.company, []).extend(found.aliases)
    assert filters_from_question(question, catalog, aliases=alias_map(catalog)).get("company") == company


def test_loader_fills_doc_type_and_aliases() -> None:
    doc = load_text(TEN_K, "harborview-annual.txt")
    assert (doc.company, doc.doc_type, doc.aliases) == (
        "HARBORVIEW_INSTRUMENTS",
        "10K",
        ["Harborview Instruments, Inc.", "HVI"],
    )


def test_a_name_clipped_from_the_company_name_and_used_throughout_is_an_alias() -> None:
    # Clipped compounds join a prefix of each of the name's first two words, as "Amex" and "FedEx" do.
    body = "\n".join(["Harins Flex launched in 2023 across our offices."] * 5 + ["Harborview's Harins Bank."])
    found = document_entities(TEN_K + "\n" + body)
    assert "Harins" in found.aliases  # HARborview + INStruments, used six times
    # A question naming the company so finds it through the catalog.
    catalog = {found.company: list(found.aliases)}
    asked = filters_from_question("Did HARINS improve its margin in 2023?", catalog, aliases=alias_map(catalog))
    assert asked.get("company") == found.company


def test_a_clipped_name_used_in_passing_or_a_plain_prefix_is_no_alias() -> None:
    from weaverbird_common.docs.entities import clipped_names

    assert clipped_names("Harins once. " * 4, ["Harborview Instruments, Inc."]) == []  # four uses
    assert clipped_names("Harbor Harbor Harbor Harbor Harbor", ["Harborview Instruments"]) == []  # one word
    assert clipped_names("Instruments " * 6, ["Harborview Instruments"]) == []  # the name's own word
    assert clipped_names("FedEx " * 5, ["Federal Express Corporation"]) == ["FedEx"]
    assert clipped_names("FedEx " * 5, ["FedEx"]) == []  # a one-word name has nothing to clip
