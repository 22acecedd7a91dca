"""Financial terms that mean the same in English and Chinese, so context focus works across languages.

A Chinese question about an English filing ("…2024财年的净利润是多少？" over "Net income: USD 97.3
million") shares no word with its answer; lexical focus would then keep the wrong sentences. Each entry
names one concept and how it is written in either language; `concepts(text)` returns the concepts a
text mentions, which context_focus.terms() adds to the text's terms. Standard reporting vocabulary (IFRS /
US GAAP line items, China's accounting standards, bank ratios, periods), not tuned to any question set.
"""

from __future__ import annotations

import re

# concept -> (English regex, matched on lower-cased text with word boundaries; Chinese terms, substrings)
_ENTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "revenue": (r"revenues?|net sales|total sales|turnover", ("营业收入", "营业总收入", "营收", "收入")),
    "net_income": (
        r"net (?:income|profit|earnings)|profit attributable|net loss",
        ("净利润", "归母净利润", "净亏损"),
    ),
    "gross_margin": (r"gross (?:profit )?margin", ("毛利率",)),
    "gross_profit": (r"gross profit", ("毛利",)),
    "operating_income": (r"operating (?:income|profit)|income from operations", ("营业利润", "经营利润")),
    "operating_margin": (r"operating margin", ("营业利润率", "经营利润率")),
    "net_interest_margin": (r"net interest margin|\bnim\b", ("净息差",)),
    "net_interest_income": (r"net interest income", ("利息净收入", "净利息收入")),
    "npl_ratio": (r"non-?performing loans?|\bnpl\b", ("不良贷款",)),
    "capital_adequacy": (r"capital adequacy", ("资本充足率",)),
    "eps": (r"earnings per share|\beps\b", ("每股收益",)),
    "ebitda": (r"\bebitda\b", ("息税折旧摊销前利润",)),
    "operating_cash_flow": (
        r"(?:net )?cash (?:flows? )?(?:provided by|from) operat\w*|operating cash flow",
        ("经营活动产生的现金流量", "经营活动现金流", "经营现金流"),
    ),
    "free_cash_flow": (r"free cash flow", ("自由现金流",)),
    "capex": (r"capital expenditures?|\bcapex\b", ("资本开支", "资本支出")),
    "total_assets": (r"total assets", ("总资产", "资产总额", "资产总计")),
    "total_liabilities": (r"total liabilities", ("总负债", "负债总额", "负债合计")),
    "equity": (r"(?:shareholders'?|stockholders'?) equity", ("股东权益", "所有者权益", "净资产")),
    "roe": (r"return on (?:average )?equity|\broe\b", ("净资产收益率",)),
    "debt_ratio": (r"debt[- ]to[- ]assets?|liabilit(?:y|ies)[- ]to[- ]assets?", ("资产负债率",)),
    "dividend": (r"dividends?", ("分红", "股息", "派息")),
    "r_and_d": (r"research and development|\br&d\b", ("研发",)),
    "employees": (r"employees|headcount", ("员工",)),
    "shareholders": (r"shareholders|stockholders", ("股东",)),
    "inventory": (r"inventor(?:y|ies)", ("存货",)),
    "receivables": (r"(?:accounts|trade) receivables?", ("应收账款",)),
    "market_share": (r"market share", ("市场份额", "市占率")),
    "orders": (r"order (?:backlog|intake)|new orders|backlog", ("订单",)),
    "guidance": (r"outlook|guidance|expects?", ("展望", "预计", "指引")),
    "yoy": (r"year[- ]over[- ]year|year[- ]on[- ]year|\byoy\b", ("同比",)),
    "q1": (r"\bq1\b|first quarter|1st quarter", ("第一季度", "一季度")),
    "q2": (r"\bq2\b|second quarter|2nd quarter", ("第二季度", "二季度")),
    "q3": (r"\bq3\b|third quarter|3rd quarter", ("第三季度", "三季度")),
    "q4": (r"\bq4\b|fourth quarter|4th quarter", ("第四季度", "四季度")),
    "nine_months": (r"first (?:three|3) quarters|nine months", ("前三季度", "前三个季度")),
    "first_half": (r"first half|\bh1\b|six months", ("上半年", "半年度")),
    "full_year": (r"full[- ]year|fiscal year|annual", ("全年", "年度")),
}

_PATTERNS = [
    (f"§{name}", re.compile(rf"(?<![a-z]){english}(?![a-z])"), chinese) for name, (english, chinese) in _ENTRIES.items()
]


def concepts(text: str) -> set[str]:
    """ "§revenue", "§q3", … for every glossary concept `text` mentions, in either language."""
    lowered = text.lower()
    return {
        concept
        for concept, english, chinese in _PATTERNS
        if english.search(lowered) or any(term in text for term in chinese)
    }
