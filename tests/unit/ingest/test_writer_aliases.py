"""Aliases stored with a document name the company it is filed under, never another one."""

from __future__ import annotations

import dataclasses

from weaverbird_common.docs.loaders import load_text
from weaverbird_ingester.writer import aliases_for_company

# An invented release, as a web page's text.
RELEASE = (
    "Tallgrass Pharma Reports Second-Quarter 2024 Results\n"
    "BOSTON - July 30, 2024 - Tallgrass Pharma, Inc. (NYSE: TGP) today reported results; a partner, "
    "Johnson & Johnson, co-markets one product."
)


def test_a_web_page_filed_under_another_company_loses_its_aliases() -> None:
    page = load_text(RELEASE, "page.txt", origin="web")
    assert (page.company, page.aliases) == ("TALLGRASS_PHARMA", ["Tallgrass Pharma, Inc.", "TGP"])
    # The orchestrator filed it under the question's company because the page names that company.
    assert aliases_for_company(dataclasses.replace(page, company="JOHNSON_JOHNSON")).aliases == []
    assert aliases_for_company(dataclasses.replace(page, company="TALLGRASS")).aliases == page.aliases
    assert aliases_for_company(page).aliases == page.aliases


def test_local_documents_keep_aliases_the_file_name_company_does_not_spell() -> None:
    # AMD_2022_10K.pdf is "Advanced Micro Devices, Inc." on its cover: both are the same company.
    local = dataclasses.replace(load_text(RELEASE, "page.txt"), company="TGP_HOLDINGS")
    assert aliases_for_company(local).aliases == ["Tallgrass Pharma, Inc.", "TGP"]
