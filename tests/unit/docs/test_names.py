"""File names and sources as clients see them (issue 34, item 8)."""

from __future__ import annotations

import pytest
from weaverbird_common.docs.names import MAX_NAME_CHARS, clean_line, display_source, safe_filename


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("report.pdf", "report.pdf"),
        ("re\x00port.pdf", "report.pdf"),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\bob\\10-K.pdf", "10-K.pdf"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),  # a right-to-left override disguising the extension
        ("zero\u200bwidth.md", "zerowidth.md"),
        ("tab\tand\nnewline.txt", "tab and newline.txt"),
        (".hidden", "hidden"),
        ("..", "document"),
        ("\x01\x02", "document"),
        ("青松新能源 2024 年报.pdf", "青松新能源 2024 年报.pdf"),
    ],
)
def test_file_names_are_reduced_to_a_clean_base_name(name: str, safe: str) -> None:
    assert safe_filename(name) == safe


def test_a_long_name_keeps_its_extension() -> None:
    safe = safe_filename("x" * 400 + ".pdf")
    assert len(safe) == MAX_NAME_CHARS and safe.endswith(".pdf")


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("/work/main/demo/kb/northwind.md", "demo/kb/northwind.md"),
        ("demo/kb/northwind.md", "demo/kb/northwind.md"),
        ("/northwind.md", "northwind.md"),
        ("../../../etc/passwd", "etc/passwd"),
        ("D:\\filings\\2024\\q4\\10-K.pdf", "2024/q4/10-K.pdf"),
        ("/srv/kb/evil\x00name.md", "srv/kb/evilname.md"),
        ("https://user:secret@ir.example.com:8443/q4.html?x=1", "https://ir.example.com:8443/q4.html?x=1"),
        ("https://ir.example.com/q4.html", "https://ir.example.com/q4.html"),
    ],
)
def test_sources_are_shown_relative_or_as_urls_without_credentials(source: str, shown: str) -> None:
    assert display_source(source) == shown


def test_clean_line_keeps_text_and_drops_invisible_characters() -> None:
    assert clean_line("  Annual\x00 report\u2066 2024\r\n") == "Annual report 2024"
