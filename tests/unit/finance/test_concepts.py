"""The concept map: statement row labels as printed (English and Chinese) and concepts named in questions."""

from __future__ import annotations

import pytest
from weaverbird_common.finance.concepts import CONCEPTS, concept_for_label, concepts_in_text

LABELS = [
    # Income statement, US GAAP style, with totals, footnote marks, colons and "Less:" prefixes
    ("Total net sales", "revenue"),
    ("Net sales", "revenue"),
    ("Revenues:", "revenue"),
    # pypdf drops some filings' spaces; ", net of ..." qualifies the line item.
    ("Operatingincome", "operating_income"),
    ("Totalcurrentassets", "total_current_assets"),
    ("Capital expenditures, net of construction payable", "capital_expenditure"),
    ("Total revenues (1)", "revenue"),
    ("Revenue, net", "revenue"),
    ("Cost of sales (2)", "cost_of_revenue"),
    ("Less: cost of goods sold", "cost_of_revenue"),
    ("Cost of revenue(1)", "cost_of_revenue"),
    ("Gross profit", "gross_profit"),
    ("Selling, general & administrative expenses", "sga"),
    ("Research & development", "rnd_expense"),
    ("Sales and marketing", "selling_expense"),
    ("Operating income (loss)", "operating_income"),
    ("Income from operations", "operating_income"),
    ("Interest expense, net", "interest_expense"),
    ("Other income (expense), net", "other_income"),
    ("Income before income taxes", "income_before_tax"),
    ("Provision for income taxes", "income_tax_expense"),
    ("Income tax expense (benefit)", "income_tax_expense"),
    ("Net income", "net_income"),
    ("Net earnings", "net_income"),
    ("Net income attributable to Acme Corp.", "net_income_parent"),
    ("Net income attributable to noncontrolling interests", "net_income_noncontrolling"),
    ("Less: Net income attributable to noncontrolling interests", "net_income_noncontrolling"),
    ("Diluted earnings per share", "eps_diluted"),
    ("Basic earnings per common share", "eps_basic"),
    ("Goodwill impairment", "impairment_loss"),
    ("Net interest income", "net_interest_income"),
    ("Provision for credit losses", "credit_impairment_loss"),
    ("Cost of sales (exclusive of depreciation and amortization shown separately below)", "cost_of_revenue"),
    ("Cost of sales, excluding depreciation and amortization", "cost_of_revenue"),
    ("Marketing, general and administrative", "sga"),
    ("Earnings per share - diluted", "eps_diluted"),
    ("Net income per share—diluted", "eps_diluted"),
    ("Earnings per share: Basic", "eps_basic"),
    ("Equity in earnings of unconsolidated affiliates", "investment_income"),
    # Balance sheet
    ("Cash and cash equivalents", "cash"),
    ("Accounts receivable, net of allowance for doubtful accounts of $40 and $42", "accounts_receivable"),
    ("Accounts receivable, less allowances of $12 and $10", "accounts_receivable"),
    ("Trade receivables, net", "accounts_receivable"),
    ("Merchandise inventories", "inventory"),
    ("Total current assets", "total_current_assets"),
    ("Property, plant & equipment, net", "ppe_net"),
    ("Property and equipment, net of accumulated depreciation of $1,234", "ppe_net"),
    ("Total assets", "total_assets"),
    ("Accounts payable", "accounts_payable"),
    ("Current portion of long-term debt", "short_term_debt"),
    ("Total current liabilities", "total_current_liabilities"),
    ("Long-term debt, net of current portion", "long_term_debt"),
    ("Total liabilities", "total_liabilities"),
    ("Retained earnings (accumulated deficit)", "retained_earnings"),
    ("Total Acme Corp. shareholders' equity", "total_equity"),
    ("Total stockholders’ equity", "total_equity"),
    ("Total liabilities and shareholders’ equity", "total_liabilities_and_equity"),
    ("Deferred revenue", "deferred_revenue"),
    ("Noncontrolling interests", "noncontrolling_interests"),
    ("Property, plant and equipment—net", "ppe_net"),
    ("Total debt", "total_debt"),
    ("Total shareholders' equity attributable to Acme Corp.", "total_equity"),
    ("Cash and cash equivalents at end of period", "cash"),
    # Cash flow statement
    ("Net cash provided by (used in) operating activities", "operating_cash_flow"),
    ("Net cash used in investing activities", "investing_cash_flow"),
    ("Net cash provided by (used in) financing activities", "financing_cash_flow"),
    ("Purchases of property and equipment, net of proceeds from sales", "capital_expenditure"),
    ("Purchases of property, plant and equipment (PP&E)", "capital_expenditure"),
    ("Capital expenditures", "capital_expenditure"),
    ("Depreciation & amortization", "depreciation_amortization"),
    ("Cash dividends paid", "dividends_paid"),
    ("Repurchases of common stock", "share_repurchases"),
    ("Net increase (decrease) in cash and cash equivalents", "net_change_in_cash"),
    ("Repayments of long-term debt", "debt_repaid"),
    # Forms filings print: "/(loss)", "provided (used) by", section headings glued before the label,
    # explanations after "before income taxes", "net of $..." tails, figures left on the label
    ("Net income/(loss)", "net_income"),
    ("Income/(loss) before income taxes", "income_before_tax"),
    ("Earnings before income tax expense and equity in income of affiliates", "income_before_tax"),
    ("Income from continuing operations before provision/(benefit) for taxes on income", "income_before_tax"),
    ("Net earnings, including earnings attributable to redeemable and noncontrolling interests", "net_income"),
    ("Net loss (income) attributable to noncontrolling interests", "net_income_noncontrolling"),
    ("Net cash provided/(used) by operating activities", "operating_cash_flow"),
    ("Cash provided (used) by operations", "operating_cash_flow"),
    ("Net cash (used in) operating activities", "operating_cash_flow"),
    ("Net cash used for investing activities", "investing_cash_flow"),
    ("Total cash used in financing activities", "financing_cash_flow"),
    (
        "Additions to property and equipment, net of $35, $46 and $32, respectively, of non-cash capital expenditures",
        "capital_expenditure",
    ),
    ("Cash Flows - Investing Activities Purchases of land, buildings, and equipment", "capital_expenditure"),
    ("Payments to acquire property, plant and equipment", "capital_expenditure"),
    ("Current assets Cash and cash equivalents", "cash"),
    ("Liabilities and equity Current liabilities Accounts payable", "accounts_payable"),
    ("Currentliabilities Accounts payable", "accounts_payable"),  # pypdf glued the section heading
    ("Total assets $ 17,475", "total_assets"),
    ("Selling, general, and administrative expenses", "sga"),
    ("CASH AND EQUIVALENTS, END OF YEAR", "cash"),
    ("Net Cash (Used for)/Provided by Financing Activities", "financing_cash_flow"),
    ("Net cash (used in)/provided by investing activities", "investing_cash_flow"),
    ("Total stockholders equity", "total_equity"),
    ("Commitments and contingencies Total stockholders’ equity", "total_equity"),
    ("Income tax (expense)/benefit", "income_tax_expense"),
    ("Benefit (provision) for income taxes", "income_tax_expense"),
    ("Dividends paid (1,158) Net cash (used)/provided by financing activities", "financing_cash_flow"),
    ("Proceeds from short-term investments 110,000 Capital expenditures", "capital_expenditure"),
    # Chinese statements (利润表 / 资产负债表 / 现金流量表), numbering and 加：/减：/其中： prefixes
    ("一、营业总收入", "revenue"),
    ("一、营业收入", "revenue"),
    ("营业总收入", "revenue"),
    ("1.营业收入", "revenue"),
    ("减：营业成本", "cost_of_revenue"),
    ("减:营业成本", "cost_of_revenue"),
    ("其中:营业收入", "revenue"),
    ("销售费用", "selling_expense"),
    ("管理费用", "admin_expense"),
    ("研发费用", "rnd_expense"),
    ("财务费用", "finance_expense"),
    ("其中：利息费用", "interest_expense"),
    ("二、营业利润", "operating_income"),
    ("加：营业外收入", "non_operating_income"),
    ("减：营业外支出", "non_operating_expense"),
    ("三、利润总额", "income_before_tax"),
    ("减：所得税费用", "income_tax_expense"),
    ("四、净利润", "net_income"),
    ("归属于母公司所有者的净利润", "net_income_parent"),
    ("少数股东损益", "net_income_noncontrolling"),
    ("基本每股收益（元/股）", "eps_basic"),
    ("货币资金", "cash"),
    ("应收账款", "accounts_receivable"),
    ("存货", "inventory"),
    ("流动资产合计", "total_current_assets"),
    ("固定资产", "ppe_net"),
    ("资产总计", "total_assets"),
    ("短期借款", "short_term_debt"),
    ("负债合计", "total_liabilities"),
    ("未分配利润", "retained_earnings"),
    ("所有者权益（或股东权益）合计", "total_equity"),
    ("经营活动产生的现金流量净额", "operating_cash_flow"),
    ("购建固定资产、无形资产和其他长期资产支付的现金", "capital_expenditure"),
    ("现金及现金等价物净增加额", "net_change_in_cash"),
    ("吸收存款", "deposits"),
]


@pytest.mark.parametrize(("label", "concept"), LABELS)
def test_a_printed_label_maps_to_its_concept(label: str, concept: str) -> None:
    assert concept_for_label(label) == concept


# Labels that contain a concept's words as part of another item, or name nothing the map holds.
NOT_REVENUE = [
    "Revenue from related parties",
    "Deferred revenue",
    "Unearned revenue",
    "Revenue recognition",
    "Cost of revenue",
    "Revenue growth",
    "Revenue from related parties (1)",
    "Current liabilities Deferred revenue",
    "(Unaudited) Deferred revenue $ 1,234",
]


@pytest.mark.parametrize("label", NOT_REVENUE)
def test_a_label_that_only_contains_revenue_is_not_revenue(label: str) -> None:
    assert concept_for_label(label) != "revenue"


@pytest.mark.parametrize(
    "label",
    [
        "Revenue from related parties",
        "Revenue growth",
        "Cash paid to suppliers of widgets",
        "Total",
        "",
        "营业收入增长率",
        "Net income per employee",
        "资产减值准备明细",
        "Membershipandotherincomeitems",  # glued, and no line item's words
    ],
)
def test_a_label_naming_no_line_item_maps_to_nothing(label: str) -> None:
    assert concept_for_label(label) is None


def test_the_map_covers_the_three_statements_with_both_languages() -> None:
    assert len(CONCEPTS) >= 80
    by_statement = {s: [c for c in CONCEPTS.values() if c.statement == s] for s in ("income", "balance", "cash_flow")}
    assert all(len(items) >= 15 for items in by_statement.values())
    for concept in CONCEPTS.values():
        assert concept.id == concept.id.lower() and " " not in concept.id
        assert concept.kind in {"flow", "stock", "per_share", "ratio", "count"}
        assert concept.en and all(p == p.lower() for p in concept.en)
    assert CONCEPTS["capital_expenditure"].sign == -1 and CONCEPTS["revenue"].sign == 1
    assert CONCEPTS["total_assets"].kind == "stock" and CONCEPTS["revenue"].kind == "flow"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the FY2018 capital expenditure amount (in USD millions) for Acme?", ["capital_expenditure"]),
        ("What was the deferred revenue balance at year end?", ["deferred_revenue"]),
        ("Compute free cash flow from cash from operations and capex.", ["operating_cash_flow", "capital_expenditure"]),
        ("Use accounts payable and COGS.", ["accounts_payable", "cost_of_revenue"]),
        ("What was the operating cashflow in 2022?", ["operating_cash_flow"]),  # "cashflow": one word
        ("What is the basic EPS?", ["eps_basic"]),
        ("What is the dividend per share in 2022?", ["dividends_per_share"]),
        ("Diluted earnings per share in 2021", ["eps_diluted"]),
        ("What was net PP&E at year end?", ["ppe_net"]),
        ("2022年营业收入和净利润分别是多少", ["revenue", "net_income"]),
        ("请列出归属于母公司所有者的净利润", ["net_income_parent"]),
        ("2023年资本开支和经营现金流", ["operating_cash_flow", "capital_expenditure"]),
        ("How many employees does the company have?", ["employees"]),
    ],
)
def test_concepts_a_question_names(question: str, expected: list[str]) -> None:
    assert concepts_in_text(question) == expected


def test_the_longest_name_wins_over_the_words_inside_it() -> None:
    found = concepts_in_text("What were total current assets and total current liabilities in FY2020?")
    assert set(found) == {"total_current_assets", "total_current_liabilities"}
    assert "total_assets" not in found and "total_liabilities" not in found
    assert concepts_in_text("归属于母公司所有者的净利润是多少")[0] == "net_income_parent"
    assert "net_income" not in concepts_in_text("归属于母公司所有者的净利润是多少")


def test_a_question_naming_no_line_item_finds_none() -> None:
    assert concepts_in_text("What is the marketing strategy?") == []
    assert concepts_in_text("Does the company take deposits?") == []
    assert concepts_in_text("Who is the chief executive officer of the company?") == []
    assert concepts_in_text("公司的董事长是谁？") == []
