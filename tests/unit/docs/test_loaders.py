"""Ingester loaders: PDF pages, HTML main text, Markdown/text decoding, errors and stable ids."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from fixtures.pdf_files import make_pdf
from pypdf import PdfReader, PdfWriter
from weaverbird_common.docs.loaders import (
    UnreadableDocument,
    canonical_source,
    document_id_for,
    load_bytes,
    load_path,
    load_text,
)


def encrypt(pdf: bytes, user_password: str) -> bytes:
    # RC4 needs no optional crypto package, so this runs wherever pypdf does.
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


THREE_PAGES = [
    ["Alpha facts live on the first page.", "Revenue  1,234  5,678"],
    ["Bravo facts live on the second page."],
    ["Charlie facts (third) live here."],
]


# ---------------------------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["layout", "plain"])
def test_pdf_pages_keep_one_based_numbers(mode: str) -> None:
    doc = load_bytes(make_pdf(THREE_PAGES), "ACME_2023Q1_10Q.pdf", pdf_mode=mode)  # type: ignore[arg-type]
    assert [page.number for page in doc.pages] == [1, 2, 3]
    assert "Alpha" in doc.pages[0].text and "Bravo" not in doc.pages[0].text
    assert "Bravo" in doc.pages[1].text
    assert "Charlie facts (third)" in doc.pages[2].text
    assert doc.page_count == 3
    assert (doc.company, doc.year, doc.quarter, doc.language) == ("ACME", 2023, 1, "en")
    assert doc.title == "ACME_2023Q1_10Q"  # no /Title in the file: falls back to the name


def test_pdf_table_row_stays_on_one_line() -> None:
    doc = load_bytes(make_pdf(THREE_PAGES), "t.pdf")
    assert re.search(r"^Revenue\s+1,234\s+5,678$", doc.pages[0].text, re.MULTILINE)


def test_pdf_running_footers_are_removed() -> None:
    topics = ["revenue", "margins", "liquidity", "leases", "taxes", "segments"]
    pages = [["ACME CORP", f"This page discusses {t}.", f"More on {t} here.", "Table of Contents", str(i + 1)]
             for i, t in enumerate(topics)]  # fmt: skip
    doc = load_bytes(make_pdf(pages), "report.pdf")
    for topic, page in zip(topics, doc.pages, strict=True):
        assert page.text == f"This page discusses {topic}.\nMore on {topic} here."


def test_corrupt_pdf_raises_unreadable() -> None:
    pdf = make_pdf(THREE_PAGES)
    with pytest.raises(UnreadableDocument, match="corrupt"):
        load_bytes(pdf[:200], "broken.pdf")
    with pytest.raises(UnreadableDocument):
        load_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8, "garbage.pdf")


def test_pdf_extension_without_pdf_header_raises() -> None:
    with pytest.raises(UnreadableDocument, match="not a PDF"):
        load_bytes(b"<html><body>Error 404</body></html>", "report.pdf")


def test_password_protected_pdf_raises_unreadable() -> None:
    with pytest.raises(UnreadableDocument, match="password"):
        load_bytes(encrypt(make_pdf(THREE_PAGES), user_password="secret"), "locked.pdf")


def test_owner_password_only_pdf_is_read() -> None:
    # Filings are often encrypted against editing only; they must still load.
    doc = load_bytes(encrypt(make_pdf(THREE_PAGES), user_password=""), "owner-only.pdf")
    assert [page.number for page in doc.pages] == [1, 2, 3]
    assert "Bravo" in doc.pages[1].text


def test_pdf_without_text_raises_unreadable() -> None:
    with pytest.raises(UnreadableDocument, match="no extractable text"):
        load_bytes(make_pdf([[], []]), "scan.pdf")


def test_pdf_found_by_content_whatever_the_name() -> None:
    doc = load_bytes(make_pdf(THREE_PAGES), "download.bin")
    assert [page.number for page in doc.pages] == [1, 2, 3]


# ---------------------------------------------------------------------------------------------
# HTML, Markdown, text
# ---------------------------------------------------------------------------------------------

HTML = """<!DOCTYPE html><html><head><title>Acme Q3 2023 results</title>
<meta name="date" content="2023-10-20">
<script>var leaked = "SCRIPT_SECRET";</script><style>.x { color: red }</style></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Acme reports third quarter 2023 results</h1>
<p>Acme Corp reported revenue of $1.2 billion for the quarter, up 10% from a year earlier, as cloud
demand stayed strong across all regions.</p>
<h2>Financial highlights</h2>
<table><tr><th>Metric</th><th>Q3 2023</th><th>Q3 2022</th></tr>
<tr><td>Revenue</td><td>1,200</td><td>1,090</td></tr>
<tr><td>Net income</td><td>300</td><td>250</td></tr></table>
<p>Chief executive Jane Doe said the results reflected <b>strong demand</b> in every segment of the
business and that the company expects growth to continue next year.</p>
<script>document.write("INLINE_SECRET")</script><noscript>NOSCRIPT_SECRET</noscript>
</article><footer>Copyright 2023 Acme</footer></body></html>"""


def test_html_main_text_without_scripts() -> None:
    doc = load_bytes(HTML.encode(), "acme.html", source="https://example.com/acme#top")
    text = doc.pages[0].text
    assert doc.pages[0].number is None and doc.page_count == 0
    assert "Acme Corp reported revenue of $1.2 billion" in text
    for secret in ("SCRIPT_SECRET", "INLINE_SECRET", "NOSCRIPT_SECRET", "color: red"):
        assert secret not in text
    assert doc.title == "Acme Q3 2023 results"  # from <title>, not the <h1>
    assert re.search(r"^#+ Financial highlights$", text, re.MULTILINE)  # headings survive as Markdown
    assert re.search(r"^\| Revenue \| 1,200 \| 1,090 \|", text, re.MULTILINE)  # and tables as pipe tables
    assert "**" not in text
    assert doc.published == "2023-10-20"
    assert doc.source == "https://example.com/acme#top"


def test_html_sniffed_without_extension() -> None:
    doc = load_bytes(HTML.encode(), "page")
    assert "SCRIPT_SECRET" not in doc.pages[0].text and "Acme Corp" in doc.pages[0].text


def test_markdown_title_and_text() -> None:
    doc = load_bytes(b"Intro line\n\n# Annual Review\n\nBody.\n", "notes.md")
    assert doc.title == "Annual Review"
    assert doc.pages[0].text.startswith("Intro line")


def test_gbk_text_is_decoded_and_detected_as_chinese() -> None:
    text = "贵州茅台2023年实现营业总收入1,505亿元，同比增长18%。公司经营稳健，现金流充沛。"
    doc = load_bytes(text.encode("gbk"), "贵州茅台_2023年年度报告.txt")
    assert doc.pages[0].text == text
    assert doc.language == "zh"
    assert (doc.company, doc.year) == ("贵州茅台", 2023)


def test_inline_text_is_plain_text_even_with_a_pdf_name() -> None:
    doc = load_text("Just words, not a PDF.", "upload.pdf")
    assert doc.pages[0].text == "Just words, not a PDF."


@pytest.mark.parametrize(
    ("data", "name", "reason"),
    [
        (b"", "a.txt", "empty"),
        (b"   \n\t ", "a.md", "empty"),
        (b"PK\x03\x04 zip bytes", "book.xlsx", "unsupported"),
        (b"<html><head><script>x()</script></head><body></body></html>", "blank.html", "no extractable text"),
    ],
)
def test_unreadable_inputs(data: bytes, name: str, reason: str) -> None:
    with pytest.raises(UnreadableDocument, match=reason):
        load_bytes(data, name)


# ---------------------------------------------------------------------------------------------
# Ids and metadata
# ---------------------------------------------------------------------------------------------


def test_document_ids_are_stable_and_keyed_by_file_name(tmp_path: Path) -> None:
    pdf = make_pdf(THREE_PAGES)
    first = tmp_path / "a" / "ADOBE_2022_10K.pdf"
    second = tmp_path / "b" / "ADOBE_2022_10K.pdf"
    for path in (first, second):
        path.parent.mkdir()
        path.write_bytes(pdf)
    ids = {
        load_path(first).document_id,
        load_path(first).document_id,
        load_path(second).document_id,
        load_bytes(pdf, "ADOBE_2022_10K.pdf").document_id,
        document_id_for("financebench/ADOBE_2022_10K.pdf"),
    }
    assert len(ids) == 1
    assert re.fullmatch(r"[0-9a-f]{16}", ids.pop())
    assert load_bytes(pdf, "ADOBE_2021_10K.pdf").document_id != document_id_for("ADOBE_2022_10K.pdf")


def test_url_ids_ignore_fragment_and_host_case() -> None:
    assert canonical_source("HTTPS://Example.COM/a/b?x=1#frag") == "https://example.com/a/b?x=1"
    assert document_id_for("https://example.com/a") == document_id_for("https://EXAMPLE.com/a#part")
    assert document_id_for("https://example.com/a") != document_id_for("https://example.com/b")
    assert canonical_source("C:\\kb\\ADOBE_2022_10K.pdf") == "ADOBE_2022_10K.pdf"


def test_overrides_win_and_proto_defaults_count_as_unset() -> None:
    pdf = make_pdf(THREE_PAGES)
    doc = load_bytes(pdf, "AMCOR_2023Q2_10Q.pdf", company="", year=0, quarter=0, title="", language="")
    assert (doc.company, doc.year, doc.quarter, doc.title) == ("AMCOR", 2023, 2, "AMCOR_2023Q2_10Q")
    doc = load_bytes(pdf, "AMCOR_2023Q2_10Q.pdf", company="ACME", year=2020, quarter=4, title="T", language="zh")
    assert (doc.company, doc.year, doc.quarter, doc.title, doc.language) == ("ACME", 2020, 4, "T", "zh")
    doc = load_bytes(pdf, "FOOTLOCKER_2022_8K_dated-2022-05-20.pdf", origin="web")
    assert (doc.published, doc.origin) == ("2022-05-20", "web")


# ---------------------------------------------------------------------------------------------
# Real filings (skipped when the shared data is absent)
# ---------------------------------------------------------------------------------------------


def _pages_jsonl(shared_data: Path, doc_name: str) -> dict[int, str]:
    path = shared_data / "financebench" / "pages.jsonl"
    if not path.is_file():
        pytest.skip("pages.jsonl not present")
    rows = (json.loads(line) for line in path.open(encoding="utf-8"))
    return {row["page_num"]: row["text"] for row in rows if row["doc_name"] == doc_name}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{5,}", text.lower()))


def test_real_pdf_page_numbers_match_financebench_index_plus_one(shared_data: Path) -> None:
    pdf = shared_data / "financebench" / "pdfs" / "AMCOR_2023Q4_EARNINGS.pdf"
    if not pdf.is_file():
        pytest.skip("AMCOR_2023Q4_EARNINGS.pdf not present")
    reference = _pages_jsonl(shared_data, "AMCOR_2023Q4_EARNINGS")
    assert reference, "no reference pages for the document"
    doc = load_path(pdf)
    assert [page.number for page in doc.pages] == list(range(1, len(doc.pages) + 1))
    for index, text in reference.items():
        # pages.jsonl counts from 0 (pypdf index); our numbers from 1. Compare by vocabulary,
        # since the two extractors space words differently.
        ours = _words(doc.pages[index].text)
        theirs = _words(text)
        assert len(ours & theirs) >= 0.8 * len(theirs), f"page index {index}"
        assert doc.pages[index].number == index + 1


@pytest.mark.slow
def test_adobe_total_revenue_is_on_page_54(shared_data: Path) -> None:
    pytest.importorskip("cryptography", reason="ADOBE_2022_10K.pdf is AES-encrypted; pypdf needs cryptography")
    pdf = shared_data / "financebench" / "pdfs" / "ADOBE_2022_10K.pdf"
    if not pdf.is_file():
        pytest.skip("ADOBE_2022_10K.pdf not present")
    doc = load_path(pdf)
    income_statement = [
        page.number
        for page in doc.pages
        if "CONSOLIDATED STATEMENTS OF INCOME" in page.text and re.search(r"Total revenue\s+17,606", page.text)
    ]
    assert income_statement == [54]  # pypdf index 53, as FinanceBench's evidence page_num says
