"""What the model is told a passage's source is: the file's name or the URL, never the ingest machine's path."""

from __future__ import annotations

import pytest
from weaverbird_orchestrator.domain import Passage
from weaverbird_orchestrator.peers import source_label


def _passage(source: str, page: int = 0) -> Passage:
    return Passage("id", "text", 0.5, "doc", "title", source, page, "local")


@pytest.mark.parametrize(
    ("source", "page", "label"),
    [
        # `make run` ingests the demo notes by absolute path: the clone's location is no evidence.
        ("/home/alice/src/weaverbird/demo/kb/en-northwind-robotics-fy2024.md", 0, "en-northwind-robotics-fy2024.md"),
        ("demo/kb/zh-roe.md", 0, "zh-roe.md"),
        ("C:\\reports\\3M_2018_10K.pdf", 60, "3M_2018_10K.pdf, page 60"),
        ("3M_2018_10K.pdf", 60, "3M_2018_10K.pdf, page 60"),
        # A URL says which site the page is from: kept whole.
        ("https://ir.example.com/news/2024/q3.html", 0, "https://ir.example.com/news/2024/q3.html"),
        ("https://ir.example.com/annual.pdf", 12, "https://ir.example.com/annual.pdf, page 12"),
        ("", 0, ""),
    ],
)
def test_the_model_sees_the_file_name_or_the_url(source: str, page: int, label: str) -> None:
    assert source_label(_passage(source, page)) == label
