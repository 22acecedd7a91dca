"""Evaluation corpora carry what the ingester would store: entities from each filing's name and first pages."""

from __future__ import annotations

import json
from pathlib import Path

from weaverbird_eval import datasets
from weaverbird_eval.corpus import chunk_units, corpus_catalog
from weaverbird_eval.financebench_kb import build_corpus, page_documents

# An invented cover page, written as PDF extraction leaves one.
COVER = (
    "SECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\nFORM 10-K\n"
    "For the fiscal year ended December 31, 2022\nCommission File Number 001-11111\n"
    "ACME Holdings Corporation\n(Exact name of registrant as specified in its charter)\n"
    "Securities registered pursuant to Section 12(b) of the Act:\n"
    "Title of each class Trading Symbol(s) Name of each exchange on which registered\n"
    "Common Stock ACMH New York Stock Exchange\n"
)


def _with_cover(tiny_data: Path) -> Path:
    pages = tiny_data / "financebench" / "pages.jsonl"
    rows = [json.loads(line) for line in pages.read_text().splitlines()]
    rows = [r if (r["doc_name"], r["page_num"]) != ("ACME_2022_10K", 0) else {**r, "text": COVER} for r in rows]
    pages.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tiny_data


def test_chunks_of_a_filing_carry_its_cover_page_entities(tiny_data: Path) -> None:
    chunks = chunk_units(datasets.financebench(_with_cover(tiny_data)))
    acme = {json.dumps(m, sort_keys=True) for m, u in zip(chunks.metadata, chunks.unit_ids, strict=True) if "ACME" in u}
    assert [json.loads(m) for m in acme] == [
        {"company": "ACME", "aliases": ["ACME Holdings Corporation", "ACMH"], "year": 2022,
         "doc_type": "10K", "published_date": "2022-12-31"}  # the cover's period end: its latest date
    ]  # fmt: skip
    assert corpus_catalog(chunks.metadata) == {
        "ACME": ["ACME Holdings Corporation", "ACMH"],
        "BOLT": [],
    }


def test_units_without_a_document_title_get_no_metadata(tiny_data: Path) -> None:
    assert not any(chunk_units(datasets.fineva(tiny_data)).metadata)


def test_financebench_kb_reads_entities_from_first_pages_even_when_they_are_filtered_out(tiny_data: Path) -> None:
    data = _with_cover(tiny_data)
    docs = list(page_documents(data, keep=lambda doc, page: page > 1))  # the cover page itself is left out
    acme = next(d for d in docs if d.title == "ACME_2022_10K")
    assert (acme.company, acme.doc_type, acme.aliases) == (
        "ACME",
        "10K",
        ["ACME Holdings Corporation", "ACMH"],
    )
    payloads, _ = build_corpus(docs)
    assert corpus_catalog(payloads)["ACME"] == ["ACME Holdings Corporation", "ACMH"]
    # Dated as the loader dates it, so the catalog knows the company's newest document (the date gate).
    assert {p["published_date"] for p in payloads if p["company"] == "ACME"} == {"2022-12-31"}
