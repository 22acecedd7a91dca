"""Which financial statement a text's rows show, whatever its title says.

A statement is known by the standard captions of its subtotals and totals (US GAAP / IFRS, and China's
accounting standards), each beside a figure. A chunk of a statement often lacks the title (the lower half
of a long statement, a continuation page) or has it broken by the PDF's text layer ("Consolidated Balance
Shee t"); prose names these items too, but not three of them each next to a number. The glossary indexes
a chunk under the statements found here (`glossary.document_concepts`).
"""

from __future__ import annotations

import re

_ROW_CAPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "balance_sheet": (
        (
            r"total current assets",
            r"total assets",
            r"total current liabilities",
            r"total liabilities",
            r"total (?:stockholders|shareholders|shareowners)['’]? equity|total equity",
            r"total liabilities and (?:(?:stockholders|shareholders|shareowners)['’]? )?equity",
        ),
        (
            "流动资产合计",
            "资产总计",
            "流动负债合计",
            "负债合计",
            "所有者权益合计",
            "股东权益合计",
            "负债和所有者权益总计",
        ),
    ),
    "income_statement": (
        (
            r"total (?:net )?revenues?|net revenues?|revenues?|total net sales|net sales",
            r"cost of (?:sales|revenues?|goods sold|products sold)",
            r"gross profit",
            r"operating income|income from operations|operating profit",
            r"(?:income|earnings) (?:\(loss\) )?(?:from continuing operations )?"
            r"before (?:provision for )?(?:income )?tax\w*",
            r"net (?:income|earnings)(?: \(loss\))?(?: attributable to [a-z.,&' ]{2,40})?",
            r"(?:basic|diluted) (?:earnings|net income) per (?:common )?share|earnings per (?:common )?share",
        ),
        ("营业总收入", "营业总成本", "营业利润", "利润总额", "基本每股收益", "稀释每股收益"),
    ),
    "cash_flow_statement": (
        (
            r"net cash (?:provided by|from|used in|\(used in\)|provided by \(used in\)) operating activities",
            r"net cash (?:provided by|from|used in|\(used in\)|provided by \(used in\)) investing activities",
            r"net cash (?:provided by|from|used in|\(used in\)|provided by \(used in\)) financing activities",
            r"cash and cash equivalents,? (?:at )?(?:the )?(?:end|beginning) of (?:the )?(?:year|period)",
        ),
        (
            "经营活动产生的现金流量净额",
            "投资活动产生的现金流量净额",
            "筹资活动产生的现金流量净额",
            "期末现金及现金等价物余额",
        ),
    ),
}


def _spaced(caption: str) -> str:
    return caption.replace(" ", r"\s+")  # a caption broken across lines by the PDF's text layer


_ROW_MIN = 3  # distinct captions of one statement, each beside a figure
_CAPTION = re.compile(
    "|".join(
        rf"(?<![a-z])(?P<{name}_{i}>{_spaced(caption)})(?![a-z])"
        for name, (english, _) in _ROW_CAPTIONS.items()
        for i, caption in enumerate(english)
    )
)
# A figure right after the caption (the row's first column: "Total assets $ 545,118", "| 1,234", a dash for
# zero), or right before it on the same line (a PDF text layer puts a row's numbers before the next label).
_FIGURE_AFTER = re.compile(r"[\s|:$€£¥]*(?:[(−-]?\d|[—–-]\s)")
_FIGURE_BEFORE = re.compile(r"[\d)%][\s$|]*$")


def _beside_figure(text: str, start: int, end: int) -> bool:
    if _FIGURE_AFTER.match(text, end, end + 16):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return bool(_FIGURE_BEFORE.search(text, max(line_start, start - 24), start))


def statement_rows(text: str) -> set[str]:
    """The statements ("§balance_sheet", "§income_statement", "§cash_flow_statement") whose row captions
    `text` holds, at least _ROW_MIN distinct ones each beside a figure."""
    lowered = text.lower()
    seen: dict[str, set[str]] = {}
    for m in _CAPTION.finditer(lowered):
        if m.lastgroup and _beside_figure(lowered, m.start(), m.end()):
            name, _, index = m.lastgroup.rpartition("_")
            seen.setdefault(name, set()).add(index)
    for name, (_, chinese) in _ROW_CAPTIONS.items():
        for i, caption in enumerate(chinese):
            at = text.find(caption)
            if at >= 0 and _beside_figure(text, at, at + len(caption)):
                seen.setdefault(name, set()).add(f"zh{i}")
    return {f"§{name}" for name, rows in seen.items() if len(rows) >= _ROW_MIN}
