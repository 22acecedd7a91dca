"""Financial terms that mean the same across wordings and languages, for lexical matching.

A question and its answer often share no word: a Chinese question about an English filing
("…2024财年的净利润是多少？" over "Net income: USD 97.3 million"), or "capital expenditure" over a cash
flow statement's "Purchases of property, plant and equipment". Each entry names one concept and how it
is written in English or Chinese; `concepts(text)` returns the concepts a text mentions. The generator's
context focus adds them to a passage's terms, and the retriever's lexical leg indexes them as extra
terms of chunks and questions. A ratio also names the line items it is computed from
(`query_concepts`), so a question about a quick ratio finds the balance sheet. Standard reporting
vocabulary (IFRS / US GAAP line items, China's accounting standards, bank ratios, periods), written from
accounting definitions, not tuned to any question set.
"""

from __future__ import annotations

import re

from weaverbird_common.statement_rows import statement_rows

# concept -> (English regex, matched on lower-cased text with word boundaries; Chinese terms, substrings)
_ENTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "revenue": (r"revenues?|net sales|total sales|turnover", ("营业收入", "营业总收入", "营收", "收入")),
    "net_income": (
        r"net (?:income|profit|earnings)|profit attributable|net loss",
        ("净利润", "归母净利润", "净亏损"),
    ),
    "cost_of_revenue": (
        r"cost of (?:goods sold|sales|revenues?|products sold|services)|\bcogs\b",
        ("营业成本", "销售成本"),
    ),
    "gross_margin": (r"gross (?:profit )?margins?", ("毛利率",)),
    "gross_profit": (r"gross profit", ("毛利",)),
    "operating_income": (r"operating (?:income|profit)|income from operations", ("营业利润", "经营利润")),
    "operating_margin": (r"operating margins?", ("营业利润率", "经营利润率")),
    "net_interest_margin": (r"net interest margins?|\bnim\b", ("净息差",)),
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
    "capex": (
        r"capital expenditures?|\bcapex\b|capital spending"
        r"|(?:purchases?|additions?|acquisitions?|payments?|expenditures?) (?:of|to|for) property,? plant",
        ("资本开支", "资本支出", "购建固定资产"),
    ),
    "ppe": (r"property,? plant,? and equipment|\bpp&e\b|fixed assets?", ("固定资产",)),
    "depreciation": (r"depreciation|amorti[sz]ation|\bd&a\b", ("折旧", "摊销")),
    "interest_expense": (r"interest expense", ("利息支出", "利息费用")),
    "income_tax": (r"income tax(?:es)?|provision for taxes|effective tax rate", ("所得税",)),
    "cash": (r"cash and cash equivalents|cash and equivalents", ("货币资金", "现金及现金等价物")),
    "current_assets": (r"current assets", ("流动资产",)),
    "current_liabilities": (r"current liabilities", ("流动负债",)),
    "payables": (r"accounts payable|trade payables?", ("应付账款",)),
    "debt": (r"long-term debt|total debt|borrowings|notes payable", ("长期借款", "有息负债", "借款")),
    "buyback": (
        r"(?:share|stock) repurchases?|repurchases? of (?:common )?(?:stock|shares)|buybacks?|treasury stock",
        ("回购",),
    ),
    "sga": (r"selling, general and administrative|\bsg&a\b", ("销售费用", "管理费用")),
    "goodwill": (r"goodwill", ("商誉",)),
    "litigation": (r"litigation|lawsuits?|legal (?:proceedings|battles?|matters|actions?|claims?)", ("诉讼",)),
    # The three statements under the names filings and analysts give them.
    "income_statement": (
        r"income statements?|statements? of (?:consolidated )?(?:operations|income|earnings)|profit and loss|\bp&l\b",
        ("利润表", "损益表"),
    ),
    "balance_sheet": (
        r"balance sheets?|statements? of (?:consolidated )?financial (?:position|condition)",
        ("资产负债表",),
    ),
    "cash_flow_statement": (r"cash flows? statements?|statements? of (?:consolidated )?cash flows?", ("现金流量表",)),
    "total_assets": (r"total assets", ("总资产", "资产总额", "资产总计")),
    "total_liabilities": (r"total liabilities", ("总负债", "负债总额", "负债合计")),
    "equity": (r"(?:shareholders'?|stockholders'?) equity", ("股东权益", "所有者权益", "净资产")),
    "roe": (r"return on (?:average )?equity|\broe\b", ("净资产收益率",)),
    "roa": (r"return on (?:average )?(?:total )?assets|\broa\b", ("总资产收益率", "资产收益率")),
    "net_margin": (r"net (?:profit )?margins?", ("净利率", "净利润率")),
    "working_capital": (r"working capital", ("营运资金", "营运资本")),
    "current_ratio": (r"current ratio", ("流动比率",)),
    "quick_ratio": (r"quick ratio|acid[- ]test", ("速动比率",)),
    "asset_turnover": (r"asset turnover", ("资产周转率",)),
    "inventory_turnover": (r"inventory turnover|days (?:of )?inventory", ("存货周转",)),
    "payables_days": (r"days payables?(?: outstanding)?|payables turnover", ("应付账款周转",)),
    "interest_coverage": (r"interest coverage|times interest earned", ("利息保障倍数",)),
    "payout_ratio": (r"payout ratio", ("分红率", "股利支付率")),
    "debt_to_equity": (r"debt[- ]to[- ]equity", ("产权比率",)),
    "capital_intensity": (r"capital[- ]intensive|capital intensity", ("资本密集",)),
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

# Every chunk of the knowledge base goes through concepts(), so the text is scanned once: one pattern finds
# where any concept's English wording starts (a word boundary before, one after), and only there is each
# concept's own pattern tried (66 separate searches of a chunk cost about five times as much).
_AT = [(f"§{name}", re.compile(rf"(?:{english})(?![a-z])"), chinese) for name, (english, chinese) in _ENTRIES.items()]
_ANY_START = re.compile(
    r"(?<![a-z])(?=(?:" + "|".join(f"(?:{english})" for english, _ in _ENTRIES.values()) + r")(?![a-z]))"
)


# What a ratio or derived figure is computed from (standard definitions): a question naming the ratio
# should also find the statements that hold its parts.
_COMPONENTS: dict[str, tuple[str, ...]] = {
    "gross_margin": ("gross_profit", "revenue", "cost_of_revenue", "income_statement"),
    "gross_profit": ("revenue", "cost_of_revenue"),
    "operating_margin": ("operating_income", "revenue", "income_statement"),
    "net_margin": ("net_income", "revenue", "income_statement"),
    "roe": ("net_income", "equity"),
    "roa": ("net_income", "total_assets"),
    "free_cash_flow": ("operating_cash_flow", "capex"),
    "ebitda": ("operating_income", "depreciation"),
    "working_capital": ("current_assets", "current_liabilities", "balance_sheet"),
    "current_ratio": ("current_assets", "current_liabilities", "balance_sheet"),
    "quick_ratio": ("current_assets", "current_liabilities", "cash", "receivables", "inventory", "balance_sheet"),
    "asset_turnover": ("revenue", "total_assets", "ppe"),
    "inventory_turnover": ("inventory", "cost_of_revenue"),
    "payables_days": ("payables", "cost_of_revenue"),
    "interest_coverage": ("operating_income", "interest_expense"),
    "payout_ratio": ("dividend", "net_income"),
    "debt_ratio": ("total_liabilities", "total_assets", "balance_sheet"),
    "debt_to_equity": ("debt", "total_liabilities", "equity", "balance_sheet"),
    "capital_intensity": ("capex", "ppe", "total_assets", "revenue", "depreciation"),
    "eps": ("net_income",),
}


def concepts(text: str) -> set[str]:
    """ "§revenue", "§q3", … for every glossary concept `text` mentions, in either language."""
    # One space for any run of whitespace: a PDF's text layer breaks captions across lines
    # ("CONSOLIDATED STATEMENTS OF\n OPERATIONS", "BALANCE\nSHEETS").
    lowered = " ".join(text.lower().split())
    starts = [m.start() for m in _ANY_START.finditer(lowered)]
    return {
        concept
        for concept, english, chinese in _AT
        if any(term in text for term in chinese) or any(english.match(lowered, at) for at in starts)
    }


_STATEMENTS = frozenset({"§income_statement", "§balance_sheet", "§cash_flow_statement"})


def document_concepts(text: str) -> set[str]:
    """The concepts a stored chunk is indexed under: `concepts`, less the statement names when it names
    two or more, plus the statements its rows show (`statement_rows`). A page that lists the statements
    (the auditor's report: "we have audited the consolidated balance sheets ... and the related statements
    of operations", an index to the financial statements) is about none of them, and with their concepts
    it outranked the statement pages a question asks for."""
    found = concepts(text)
    if len(found & _STATEMENTS) >= 2:
        found -= _STATEMENTS
    return found | statement_rows(text)


def components(found: set[str]) -> set[str]:
    """The line items the ratios among `found` ("§quick_ratio", …) are computed from, less those already found."""
    parts = {
        f"§{part}"
        for concept in found
        if concept.startswith("§")  # callers may pass other terms beside the concepts
        for part in _COMPONENTS.get(concept.removeprefix("§"), ())
    }
    return parts - found
