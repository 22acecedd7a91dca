"""Which statement a table is, from its title (English and Chinese forms)."""

from __future__ import annotations

import re

_KINDS = (
    (
        "income",
        re.compile(
            r"statements? of (?:consolidated )?(?:operations|income|earnings|comprehensive (?:income|loss))"
            r"|(?:consolidated|condensed|combined) (?:[a-z]+ )?income statements?|statements? of profit (?:and|&) loss"
            r"|利润表|损益表",
            re.IGNORECASE,
        ),
    ),
    (
        "balance",
        re.compile(
            r"(?:consolidated|condensed|combined) (?:[a-z]+ )?balance sheets?"
            r"|statements? of (?:consolidated )?financial (?:position|condition)|资产负债表",
            re.IGNORECASE,
        ),
    ),
    ("cash_flow", re.compile(r"statements? of (?:consolidated )?cash flows?|现金流量表", re.IGNORECASE)),
)

_GLUED_KINDS = tuple((kind, re.compile(pattern.pattern.replace(" ", ""), pattern.flags)) for kind, pattern in _KINDS)

_TITLE_LINE = re.compile(
    r"(?:consolidated|condensed|combined)?[^\n]{0,40}?(?:statements? of [a-z ,'()]+|balance sheets?|"
    r"income statements?|利润表|资产负债表|现金流量表)",
    re.IGNORECASE,
)


_IN_PROSE = re.compile(r"\b(?:the|to|in|on|of|our|its|within|affecting|from|and|see|these|this)\s*$", re.IGNORECASE)


_TOP_KINDS = (
    (
        "income",
        re.compile(
            r"\bincome statements?\b|statements? of (?:consolidated )?(?:operations|income|earnings)|利润表", re.I
        ),
    ),
    (
        "balance",
        re.compile(
            r"\bbalance sheets?\b|statements? of (?:consolidated )?financial (?:position|condition)|资产负债表", re.I
        ),
    ),
    (
        "cash_flow",
        re.compile(
            r"\bcash flows? statements?\b|statements? of (?:consolidated )?cash flows?|现金流量表", re.IGNORECASE
        ),
    ),
)


_CONNECTOR = re.compile(r"\b(our|the|to|in|of|see|and|affecting|within|these)\b[\w ]{0,25}$", re.IGNORECASE)


def _prose_before(before: str) -> bool:
    """Whether a statement's name continues a sentence ("... to our consolidated statements of cash flows").
    A connector in capitals belongs to a heading: "ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA
    INCOME STATEMENTS" heads the income statement."""
    found = _CONNECTOR.search(before)
    return found is not None and not found.group(1).isupper()


def page_top_kind(text: str) -> str:
    """The statement a page heads with ("INCOME STATEMENTS", "Consolidated Balance Sheets") in its first
    lines; a mention in prose ("... to our consolidated statements of cash flows") does not count."""
    top = text[:160]
    for kind, pattern in _TOP_KINDS:
        for found in pattern.finditer(top):
            before = top[max(0, found.start() - 40) : found.start()]
            if not _prose_before(before):
                return kind
    return "other"


# A statement of part of the group: guarantor and issuer columns, the parent company alone (母公司资产负债表
# beside 合并资产负债表), an Australian deed of cross guarantee. The group's own statement answers for
# the company; these are read as notes.
_PART_OF_GROUP = re.compile(
    r"guarant(?:ee|or)|\bparent company\b|\bconsolidating\b|\bissuer\b|母公司(?:资产负债表|利润表|现金流量表)",
    re.IGNORECASE,
)


def part_of_group(title: str) -> bool:
    """A statement of part of the group (guarantors, the parent alone): a note, whatever its page heads."""
    return bool(_PART_OF_GROUP.search(title))


def statement_kind(title: str) -> str:
    """'income', 'balance', 'cash_flow' or 'other'."""
    if part_of_group(title):
        return "other"
    for kind, pattern in _KINDS:
        for found in pattern.finditer(title):
            # "... the amounts affecting the Consolidated Statements of Income": a note's caption in prose.
            before = re.sub(r"table of contents", " ", title[: found.start()], flags=re.IGNORECASE)
            if not _prose_before(before):
                return kind
    # pypdf drops the spaces of some filings' titles: "ConsolidatedStatementsofIncome".
    if re.search(r"[A-Za-z]{14,}", title):  # words run together: the title lost its spaces
        glued = re.sub(r"\s+", "", title)
        for kind, pattern in _GLUED_KINDS:
            if pattern.search(glued):
                return kind
    # A title that ends with the statement's name ("ITEM 8. ... INCOME STATEMENTS") is that statement.
    ending = re.search(r"\b(income statements?|balance sheets?|cash flows? statements?)\s*$", title, re.IGNORECASE)
    if ending:
        word = ending.group(1).lower()
        return "income" if word.startswith("income") else "balance" if word.startswith("balance") else "cash_flow"
    return "other"


def title_before(text: str) -> str:
    """The table's title: the last statement title in text (the text before a table's header), else its
    last non-empty line that is not a scale caption."""
    # A title heads its table; "the amounts affecting the Consolidated Statements of Income" is prose.
    titles = [t for t in _TITLE_LINE.finditer(text) if not _IN_PROSE.search(text[max(0, t.start() - 25) : t.start()])]
    if titles:
        return " ".join(titles[-1].group(0).split())[:120]
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line and line.lower() not in ("table of contents",)]
    return lines[-1][:120] if lines else ""
