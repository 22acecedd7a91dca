"""Company and fiscal period of a filing, read from its file name (English or Chinese names)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from weaverbird_common.questions import CJK_CLASS, CJK_RE

# ---------------------------------------------------------------------------------------------
# File names
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileMetadata:
    """What a file name tells about a filing; empty/None fields when it tells nothing."""

    company: str = ""
    year: int | None = None
    quarter: int | None = None
    doc_type: str = ""
    published: str = ""


# FinanceBench style: COMPANY_YYYY[Qn][_TYPE[_dated-YYYY-MM-DD]], e.g. AMCOR_2023Q2_10Q,
# FOOTLOCKER_2022_8K_dated-2022-05-20, JOHNSON_JOHNSON_2022_10K, PG_E_2023_EARNINGS-dated-2023-06-01.
_FILENAME_RE = re.compile(
    r"^(?P<company>.+?)[_\-\s]+(?P<year>(?:19|20)\d{2})(?:Q(?P<quarter>[1-4]))?(?=$|[_\-\s])"
    r"(?:[_\-\s]+(?P<type>[A-Za-z0-9]+))?",
    re.IGNORECASE,
)
# Chinese reports: 贵州茅台_2023年年度报告, 腾讯控股2023年第三季度报告, 平安银行2022年半年度报告.
_ZH_FILENAME_RE = re.compile(
    rf"^(?P<company>[{CJK_CLASS}A-Za-z0-9&·]+?)[_\-\s]*(?P<year>(?:19|20)\d{{2}})\s*年?"
    rf"(?:度)?(?:第?(?P<quarter>[一二三四1-4])季度)?"
)
_DATED_RE = re.compile(r"dated[_\-]?(?P<date>(?:19|20)\d{2}-\d{2}-\d{2})", re.IGNORECASE)
_ZH_QUARTER = {"一": 1, "二": 2, "三": 3, "四": 4}


def metadata_from_filename(name: str) -> FileMetadata:
    """Parse company, fiscal year/quarter, filing type and date out of a file name or path."""
    stem = re.split(r"[\\/]", name)[-1]
    stem = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", stem)
    dated = _DATED_RE.search(stem)
    published = dated.group("date") if dated else ""
    match = _FILENAME_RE.match(stem)
    if match and not CJK_RE.search(match.group("company")):
        doc_type = (match.group("type") or "").upper()
        if doc_type == "DATED":
            doc_type = ""
        return FileMetadata(
            company=canonical_company(match.group("company")),
            year=int(match.group("year")),
            quarter=int(match.group("quarter")) if match.group("quarter") else None,
            doc_type=doc_type,
            published=published,
        )
    zh = _ZH_FILENAME_RE.match(stem)
    if zh:
        q = zh.group("quarter")
        return FileMetadata(
            company=canonical_company(zh.group("company")),
            year=int(zh.group("year")),
            quarter=(_ZH_QUARTER.get(q) or int(q)) if q else None,
            published=published,
        )
    return FileMetadata(published=published)


def canonical_company(raw: str) -> str:
    """Upper-case name as stored in payloads ("ADOBE"); separators inside are kept (JOHNSON_JOHNSON)."""
    return re.sub(r"[\s\-]+", "_", raw.strip(" _-")).upper()
