"""Ingester chunker: sizes, headings, tables, sentences, pages and Chinese text."""

from __future__ import annotations

import random
import re

import pytest
from weaverbird_common.docs.chunker import chunk_document, count_tokens, split_sentences
from weaverbird_common.docs.documents import Document, Page


def doc_of(*pages: str, numbered: bool = False) -> Document:
    return Document(
        document_id="doc1",
        title="Test",
        source="test.md",
        pages=[Page(i + 1 if numbered else None, text) for i, text in enumerate(pages)],
        language="en",
        company="ACME",
        year=2023,
        quarter=None,
        published="",
    )


WORDS = (
    "revenue growth margin customers subscription segment quarter fiscal operating cash flow demand "
    "pricing inventory supply product services cloud digital market share guidance outlook expense"
).split()


def prose(sentences: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 20))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def test_count_tokens_estimates() -> None:
    assert count_tokens("") == 0
    assert count_tokens("营业收入") == 4  # one per CJK character
    assert count_tokens("revenue grew") == 3  # ceil(2 words * 1.3)
    assert count_tokens("$ 16,388") == 4  # $ 16 , 388
    assert count_tokens("_" * 40) == 1  # rules count once, not forty times


def test_split_sentences_english_and_chinese() -> None:
    text = "Revenue was $17.61 billion in fiscal 2022. U.S. sales grew 5% vs. last year! Was it enough? Yes"
    assert split_sentences(text) == [
        "Revenue was $17.61 billion in fiscal 2022.",
        "U.S. sales grew 5% vs. last year!",
        "Was it enough?",
        "Yes",
    ]
    assert split_sentences("营业收入增长18%。净利润增长19%！还会增长吗？“会的。”之后") == [
        "营业收入增长18%。",
        "净利润增长19%！",
        "还会增长吗？",
        "“会的。”",
        "之后",
    ]


@pytest.mark.parametrize(("target", "maximum"), [(250, 400), (100, 150), (60, 60)])
def test_chunk_sizes_within_bounds(target: int, maximum: int) -> None:
    paragraphs = [prose(random.Random(i).randint(1, 30), seed=i) for i in range(40)]
    doc = doc_of("\n\n".join(paragraphs))
    chunks = chunk_document(doc, target_tokens=target, max_tokens=maximum)
    sizes = [count_tokens(c.text) for c in chunks]
    assert max(sizes) <= maximum
    assert [c.tokens for c in chunks] == sizes
    # Most chunks are near the target: only section/document ends make small ones.
    assert sum(s >= target // 2 for s in sizes) >= 0.8 * len(sizes)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    # Nothing lost, nothing duplicated.
    assert re.sub(r"\s+", "", "".join(c.text for c in chunks)) == re.sub(r"\s+", "", "".join(paragraphs))


def test_sentences_are_not_cut() -> None:
    doc = doc_of(prose(80, seed=3))
    for chunk in chunk_document(doc, target_tokens=100, max_tokens=160):
        assert chunk.text.endswith("."), chunk.text[-40:]
        assert chunk.text[0].isupper()


def test_run_on_sentence_is_split_within_max() -> None:
    doc = doc_of(" ".join(WORDS * 40))  # one 1,000-word "sentence" without any punctuation
    chunks = chunk_document(doc, target_tokens=100, max_tokens=150)
    assert len(chunks) > 5
    assert all(c.tokens <= 150 for c in chunks)


def test_markdown_headings_start_chunks() -> None:
    text = "\n\n".join(
        [
            "# Annual report",
            "## Revenue",
            prose(12, seed=1),
            "## Costs",
            prose(12, seed=2),
            "### Personnel",
            prose(3, seed=4),
        ]
    )
    chunks = chunk_document(doc_of(text), target_tokens=120, max_tokens=200)
    headings = [c.heading for c in chunks]
    assert headings[0] == "Annual report > Revenue"
    assert "Annual report > Costs" in headings
    assert headings[-1] == "Annual report > Costs > Personnel"
    first_costs = headings.index("Annual report > Costs")
    assert chunks[first_costs].text.startswith(prose(12, seed=2)[:30])
    # Heading lines are metadata, not text.
    assert not any(line.startswith("#") for c in chunks for line in c.text.splitlines())
    # No chunk mixes two sections.
    costs_start = prose(12, seed=2)[:30]
    assert all(costs_start not in c.text for c in chunks if c.heading.endswith("Revenue"))


def test_filing_headings_item_and_all_caps() -> None:
    page = "\n".join(
        [
            "PART II",
            "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations",
            prose(6, seed=5),
            "RESULTS OF OPERATIONS",
            prose(6, seed=6),
        ]
    )
    chunks = chunk_document(doc_of(page, numbered=True), target_tokens=250, max_tokens=400)
    assert [c.heading for c in chunks] == [
        "PART II > Item 7. Management's Discussion and Analysis of Financial Condition and Results…",
        "PART II > Item 7. Management's Discussion and Analysis of Financial Condition and Results… "
        "> RESULTS OF OPERATIONS",
    ]


def test_table_of_contents_lines_are_not_headings() -> None:
    page = "TABLE OF CONTENTS\nItem 1. Business 3\nItem 1A. Risk Factors 20\nItem 7. MD&A 36\nPART IV 65"
    chunks = chunk_document(doc_of(page, numbered=True))
    assert len(chunks) == 1
    assert chunks[0].heading == "TABLE OF CONTENTS"
    assert "Item 1A. Risk Factors 20" in chunks[0].text


MD_TABLE = "\n".join(
    ["| Metric | FY2023 | FY2022 |", "|---|---|---|"]
    + [f"| {w.capitalize()} line item | {1000 + i:,} | {900 + i:,} |" for i, w in enumerate(WORDS[:12])]
)


def test_markdown_table_is_never_split_when_it_fits() -> None:
    table_tokens = count_tokens(MD_TABLE)
    assert 100 < table_tokens < 250
    for lead in range(1, 25, 3):  # whatever text comes before, the table lands whole in one chunk
        doc = doc_of(prose(lead, seed=lead) + "\n\n" + MD_TABLE + "\n\n" + prose(5, seed=99))
        chunks = chunk_document(doc, target_tokens=250, max_tokens=400)
        holding = [c for c in chunks if "| Metric |" in c.text]
        assert len(holding) == 1
        assert MD_TABLE in holding[0].text
        assert all(c.tokens <= 400 for c in chunks)


def test_large_table_split_by_rows_with_header_repeated() -> None:
    rows = [f"| {w} {i} | {i * 1000:,} | {i * 900:,} | {i * 800:,} |" for i, w in enumerate(WORDS * 3)]
    table = "\n".join(["| Item | 2023 | 2022 | 2021 |", "|---|---|---|---|", *rows])
    chunks = chunk_document(doc_of(table), target_tokens=150, max_tokens=200)
    assert len(chunks) >= 3
    for chunk in chunks:
        lines = chunk.text.splitlines()
        assert lines[:2] == ["| Item | 2023 | 2022 | 2021 |", "|---|---|---|---|"]
        assert chunk.tokens <= 200
    body = [line for c in chunks for line in c.text.splitlines()[2:]]
    assert body == rows  # every row exactly once, in order, none cut


PDF_STATEMENT = """CONSOLIDATED STATEMENTS OF INCOME
(In millions, except per share data)
Years Ended
2022  2021  2020
Revenue:
Subscription  $  16,388  $  14,573  $  11,626
Product  532  555  507
Services and other  686  657  735
Total revenue  17,606  15,785  12,868

Cost of revenue:
Subscription  1,646  1,374  1,108
Total cost of revenue  2,165  1,865  1,722
Gross profit  15,441  13,920  11,146
Net income  $  4,756  $  4,822  $  5,260
See accompanying Notes to Consolidated Financial Statements."""


def test_pdf_numeric_table_kept_together_after_prose() -> None:
    page = prose(12, seed=8) + "\n" + PDF_STATEMENT
    chunks = chunk_document(doc_of(page, numbered=True), target_tokens=250, max_tokens=400)
    statement = [c for c in chunks if "Total revenue  17,606" in c.text]
    assert len(statement) == 1
    text = statement[0].text
    assert statement[0].heading == "CONSOLIDATED STATEMENTS OF INCOME"
    for row in (
        "2022  2021  2020",
        "Subscription  $  16,388",
        "Gross profit  15,441",
        "Net income  $  4,756",
    ):
        assert row in text
    assert text.index("Subscription  $  16,388") < text.index("Net income  $  4,756")


def test_chunks_never_cross_pdf_pages() -> None:
    pages = [f"Page{n}marker. " + prose(7, seed=n) for n in range(1, 6)]
    chunks = chunk_document(doc_of(*pages, numbered=True), target_tokens=250, max_tokens=400)
    for chunk in chunks:
        markers = set(re.findall(r"Page(\d)marker", chunk.text))
        assert markers <= {str(chunk.page)}
    assert {c.page for c in chunks} == {1, 2, 3, 4, 5}
    assert all(c.page is None for c in chunk_document(doc_of(prose(20))))


def test_heading_carries_over_to_next_page() -> None:
    chunks = chunk_document(doc_of("NOTES TO FINANCIAL STATEMENTS\n" + prose(5), prose(5, seed=1), numbered=True))
    assert [c.page for c in chunks] == [1, 2]
    assert chunks[1].heading == "NOTES TO FINANCIAL STATEMENTS"


ZH_SENTENCES = [
    "报告期内，公司实现营业总收入1,505.60亿元，同比增长18.04%。",
    "归属于上市公司股东的净利润为747.34亿元，同比增长19.16%！",
    "公司将继续坚持高质量发展，稳步推进市场化转型？",
    "茅台酒销量保持稳定，系列酒收入增长显著。",
]


def test_chinese_text_chunks_at_sentence_ends_under_chinese_headings() -> None:
    body = "".join(ZH_SENTENCES * 8)
    text = f"第一章 公司简介\n{body}\n一、主要会计数据\n{body}\n（一）经营情况\n{body}"
    chunks = chunk_document(doc_of(text), target_tokens=120, max_tokens=200)
    assert all(c.tokens <= 200 for c in chunks)
    assert all(c.text[-1] in "。！？" for c in chunks)
    assert all(" " not in c.text for c in chunks)  # CJK lines are joined without spaces
    headings = list(dict.fromkeys(c.heading for c in chunks))
    assert headings == [
        "第一章 公司简介",
        "第一章 公司简介 > 一、主要会计数据",
        "第一章 公司简介 > 一、主要会计数据 > （一）经营情况",
    ]
    assert sum(c.tokens for c in chunks) >= 3 * count_tokens(body) - 5


def test_chinese_wrapped_lines_are_joined_without_spaces() -> None:
    chunks = chunk_document(doc_of("公司实现营业总收入\n1,505.60亿元，同比\n增长18.04%。"))
    assert chunks[0].text == "公司实现营业总收入1,505.60亿元，同比增长18.04%。"


def test_a_chinese_line_with_an_acronym_is_text_not_an_all_caps_heading() -> None:
    # Chinese has no case, so "IEA ... IEA" made the whole line read as a caps heading, and a one-line news
    # item vanished from the KB (a heading is kept apart from chunk text; this one had no text under it).
    line = "【国际能源署发布月度报告】财联社 3月2日电，国际能源署（IEA）署长表示，IEA成员国将协调释放石油库存。"
    chunks = chunk_document(doc_of(line))
    assert [c.text for c in chunks] == [line]


def test_a_document_of_headings_only_is_still_chunked() -> None:
    line = "ACME CORPORATION DECLARES QUARTERLY DIVIDEND OF TWENTY CENTS PER SHARE"
    assert [c.text for c in chunk_document(doc_of(line))] == [line]


def test_tiny_fragments_are_dropped_or_merged() -> None:
    page = "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\n" + prose(5) + "\n54"
    chunks = chunk_document(doc_of(page, numbered=True))
    assert len(chunks) == 1
    assert chunks[0].text.startswith("Washington, D.C. 20549")
    assert not chunks[0].text.endswith("54")


def test_chunking_is_deterministic() -> None:
    doc = doc_of(prose(50, seed=11) + "\n\n" + MD_TABLE, PDF_STATEMENT, numbered=True)
    assert chunk_document(doc) == chunk_document(doc)


def test_invalid_sizes_rejected() -> None:
    with pytest.raises(ValueError):
        chunk_document(doc_of("x"), target_tokens=300, max_tokens=200)
