"""A statement row as read from a table, before it becomes facts, and how its printed label is tidied."""

from __future__ import annotations

import re
from dataclasses import dataclass

from weaverbird_common.facts.model import Period
from weaverbird_common.finance.concepts import concept_for_label


@dataclass(frozen=True)
class TableContext:
    """What a table's header and caption say about all its rows."""

    title: str
    statement: str
    columns: tuple[Period, ...]
    scale: float
    scale_text: str
    currency: str


@dataclass(frozen=True)
class Row:
    """One row: its label as printed (tidied), its values by column, percent and dash flags."""

    label: str
    section: str
    values: tuple[float, ...]
    percent: bool
    table: TableContext
    # A cell of a table whose columns are categories, not periods ("Current", "0 to 30 days past due"):
    # its label names the column too, and it stands for no statement line item (no concept).
    category: bool = False


_NOTE_REF = re.compile(r"\s*\((?:see )?notes? \d+[a-z]?(?:(?:,| and) \d+[a-z]?)*\)", re.IGNORECASE)
_FOOTNOTE = re.compile(r"\s*(?:\((?:\d{1,2}|[a-z])\)|\[\d{1,2}\]|\*+|†|‡)(?=\s|$|,)")
_LEADING_JUNK = re.compile(r"^(?:table of contents\s*)+", re.IGNORECASE)
_SCALE_CAPTION = re.compile(r"\((?:[$a-z ]*\bin |dollars in |amounts in )[^)]*\)", re.IGNORECASE)
# Upper-case section captions in front of a row's words: "ASSETS CURRENT ASSETS Cash and cash equivalents".
_CAPS_SECTION = re.compile(r"^(?:[A-Z][A-Z&,'’\-]+ )+(?=[A-Z][a-z])")
# Section captions printed without a colon in front of a row's own words (cash flow statements).
_SECTION = re.compile(
    r"^(?P<section>(?:cash flows? (?:from|provided by|used in) (?:\(used in\) )?(?:operating|investing|financing)"
    r" activities|adjustments to reconcile .{0,120}? activities|changes in (?:operating )?assets and"
    r" liabilities(?:, net(?: of [a-z ]+)?)?|operating activities|investing activities|financing activities|"
    r"assets|liabilities and (?:stockholders|shareholders)['’]? equity|revenues?|operating costs and expenses|"
    r"operating expenses|costs and expenses|current assets|current liabilities))\s+(?P<rest>[A-Z].*)$",
    re.IGNORECASE,
)


def tidy_label(raw: str) -> tuple[str, str]:
    """(label, section) from the text before a row's figures: spaces collapsed, footnote marks and a
    trailing "$" dropped, and a section caption ("Current assets:") split off the row's own words."""
    text = " ".join(raw.replace("\u00a0", " ").split())
    text = _LEADING_JUNK.sub("", text)
    text = _SCALE_CAPTION.sub(" ", text).strip()
    caps = _CAPS_SECTION.match(text)
    if caps:
        text = text[caps.end() :]
    text = text.rstrip(" $¥€£").strip()
    section = ""
    # "Operating expenses: Cost of sales" -> section "Operating expenses", label "Cost of sales"; a
    # Chinese "减：营业成本" keeps its prefix (it is part of how the row is printed).
    if ": " in text:
        head, _, tail = text.rpartition(": ")
        if tail and not re.search(r"[\u4e00-\u9fff]$", head):
            section, text = head.strip(), tail.strip()
    split = _SECTION.match(text)
    if split and len(split.group("rest")) > 2:
        section, text = split.group("section"), split.group("rest")
    if not section:
        section, text = _caption_line_item(text)
    text = _NOTE_REF.sub("", text)
    text = _FOOTNOTE.sub("", text).strip(" ,;")
    return text, section


# A word boundary where a sentence-case label may start: "Inventories, net | Raw materials and supplies".
_SENTENCE_START = re.compile(r"(?<=[a-z,]) (?=[A-Z][a-z]+(?: [a-z][\w,\-]*)*$)")


def _caption_line_item(text: str) -> tuple[str, str]:
    """("Inventories, net", "Raw materials and supplies") from "Inventories, net Raw materials and supplies":
    a line item printed as a caption over its parts, with no figures of its own, glued by the page's text
    to its first part. Split only where both halves are sentence-case line-item labels (Title Case labels,
    "Net Operating Revenues", never split)."""
    if len(text.split()) < 3:
        return "", text
    for boundary in _SENTENCE_START.finditer(text):
        head, rest = text[: boundary.start()], text[boundary.end() :]
        if re.search(r" [A-Z]", head) or not concept_for_label(head) or not concept_for_label(rest):
            continue
        return head, rest
    return "", text


def plausible_label(label: str) -> bool:
    """A row label is a short name with letters, not a paragraph or a lone symbol."""
    if not label or len(label) > 150:
        return False
    if not re.search(r"[A-Za-z\u4e00-\u9fff]", label):
        return False
    # Prose: a sentence inside the label ("... in 2017. We ...").
    return not re.search(r"[a-z]{2}\. [A-Z][a-z]+ [a-z]", label)
