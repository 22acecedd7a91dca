"""Statement line items (concepts) and how filings print them, in English and Chinese.

`concept_for_label` maps a row label as printed ("Total net sales", "Purchases of property, plant and
equipment (PP&E)", "一、营业总收入") to a concept id; it matches whole labels, so "Deferred revenue" or
"Revenue from related parties" are not revenue. `concepts_in_text` finds the concepts a question names,
with the shorthand analysts write (capex, COGS, net AR, PP&E).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Concept:
    id: str
    statement: str  # "income" | "balance" | "cash_flow" | "other"
    kind: str  # "flow" | "stock" | "per_share" | "ratio" | "count"
    en: tuple[str, ...]  # whole labels as printed, lower-case; a "*" ending matches any tail
    zh: tuple[str, ...]
    sign: int = 1
    # Words a question uses for it that are no statement label ("capex", "cogs").
    asked: tuple[str, ...] = ()


def _c(
    id: str,
    statement: str,
    kind: str,
    en: tuple[str, ...],
    zh: tuple[str, ...] = (),
    sign: int = 1,
    asked: tuple[str, ...] = (),
) -> Concept:
    return Concept(id, statement, kind, en, zh, sign, asked)


_LIST = (
    # Income statement
    _c(
        "revenue",
        "income",
        "flow",
        (
            "revenue",
            "revenues",
            "total revenue",
            "total revenues",
            "net revenue",
            "net revenues",
            "total net revenue",
            "total net revenues",
            "net sales",
            "total net sales",
            "sales",
            "total sales",
            "net sales and revenues",
            "revenues, net",
            "revenue, net",
            "sales to customers",
            "net operating revenues",
            "operating revenues",
            "total operating revenues",
            "total revenues and other income",
            "turnover",
        ),
        (
            "营业收入",
            "营业总收入",
            "一、营业总收入",
            "一、营业收入",
            "主营业务收入",
            "净销售额",
            "销售额",
            "销售收入",
            "营收",
            "总收入",
        ),
        asked=("top line", "top-line"),
    ),
    _c(
        "cost_of_revenue",
        "income",
        "flow",
        (
            "cost of revenue",
            "cost of revenues",
            "total cost of revenue",
            "total cost of revenues",
            "cost of sales",
            "total cost of sales",
            "cost of goods sold",
            "cost of products sold",
            "cost of goods and services sold",
            "cost of sales and operating expenses",
            "cost of merchandise sold",
            "costs of revenue",
            "cost of products",
            "cost of net revenues",
        ),
        ("营业成本", "主营业务成本", "减：营业成本", "销售成本"),
        asked=("cogs",),
    ),
    _c(
        "gross_profit",
        "income",
        "flow",
        ("gross profit", "gross margin", "total gross profit", "gross income"),
        ("毛利", "毛利润"),
    ),
    _c(
        "sga",
        "income",
        "flow",
        (
            "selling, general and administrative expenses",
            "selling and administrative expenses",
            "selling and administrative expense",
            "selling, general and administrative costs",
            "selling, general and administrative",
            "marketing, general and administrative",
            "marketing, general and administrative expenses",
            "selling, general and administrative expense",
            "selling general and administrative expenses",
            "sales, general and administrative",
        ),
        ("销售费用及管理费用",),
        asked=("sg&a", "sga"),
    ),
    _c(
        "selling_expense",
        "income",
        "flow",
        (
            "selling expenses",
            "selling and marketing",
            "sales and marketing",
            "marketing",
            "selling and marketing expenses",
        ),
        ("销售费用",),
    ),
    _c(
        "admin_expense",
        "income",
        "flow",
        ("general and administrative", "general and administrative expenses", "administrative expenses"),
        ("管理费用",),
    ),
    _c(
        "rnd_expense",
        "income",
        "flow",
        (
            "research and development",
            "research and development expenses",
            "research and development expense",
            "research, development and related expenses",
            "technology and content",
            "research and development costs",
        ),
        ("研发费用", "研究开发费用", "研发投入"),
        asked=("r&d",),
    ),
    _c(
        "depreciation_amortization",
        "cash_flow",
        "flow",
        (
            "depreciation and amortization",
            "depreciation and amortization of *",
            "depreciation & amortization",
            "depreciation, depletion and amortization",
            "depreciation, amortization and accretion",
            "depreciation and amortization expense",
            "depreciation, amortization and other",
            "depreciation",
            "depreciation of property and equipment, including internal-use software and website development, "
            "and other amortization, including capitalized content costs",
        ),
        ("折旧与摊销", "折旧和摊销", "固定资产折旧"),
        asked=("d&a",),
    ),
    _c(
        "operating_expenses",
        "income",
        "flow",
        (
            "total operating expenses",
            "operating expenses",
            "total costs and expenses",
            "costs and expenses",
            "total operating costs and expenses",
        ),
        ("营业总成本",),
    ),
    _c(
        "operating_income",
        "income",
        "flow",
        (
            "operating income",
            "income from operations",
            "operating profit",
            "operating income (loss)",
            "income (loss) from operations",
            "earnings from operations",
            "operating earnings",
            "total operating income",
        ),
        ("营业利润", "二、营业利润", "三、营业利润"),
        asked=("ebit", "operating income", "unadjusted operating income"),
    ),
    _c(
        "interest_expense",
        "income",
        "flow",
        (
            "interest expense",
            "interest expense, net",
            "interest expense (income), net",
            "interest and debt expense",
            "interest expense, net of capitalized interest",
            "net interest expense",
        ),
        ("利息费用", "其中：利息费用"),
    ),
    _c("interest_income", "income", "flow", ("interest income", "interest and other income"), ("利息收入",)),
    _c(
        "income_before_tax",
        "income",
        "flow",
        (
            "income before income taxes",
            "income before taxes",
            "income before income tax",
            "earnings before income taxes",
            "income before provision for income taxes",
            "income before income tax provision",
            "income before income tax expense",
            "income (loss) before income taxes",
            "pretax income",
            "earnings before provision for income taxes",
            "income from continuing operations before income taxes",
            "loss before income taxes",
            "earnings before income tax expense",
            "earnings from continuing operations before income taxes",
            "income from continuing operations before provision for taxes on income",
            "earnings before provision for taxes on income",
            "income from continuing operations before taxes",
            "earnings from continuing operations before income tax expense",
            "profit before tax",
        ),
        ("利润总额", "四、利润总额", "三、利润总额"),
        asked=("pre-tax income", "pretax income"),
    ),
    _c(
        "income_tax_expense",
        "income",
        "flow",
        (
            "provision for income taxes",
            "income tax expense",
            "income taxes",
            "income tax provision",
            "provision for taxes on income",
            "income tax expense (benefit)",
            "provision for (benefit from) income taxes",
            "income tax (expense) benefit",
            "income tax benefit (expense)",
            "benefit (provision) for income taxes",
            "income taxes from continuing operations",
            "provision (benefit) for income taxes",
            "taxes on income",
        ),
        ("所得税费用", "减：所得税费用"),
        asked=("income tax", "tax expense"),
    ),
    _c(
        "net_income",
        "income",
        "flow",
        (
            "net income",
            "net earnings",
            "net income (loss)",
            "net loss",
            "net (loss) income",
            "net profit",
            "net income including noncontrolling interests",
            "net earnings including noncontrolling interests",
            "net income including noncontrolling interest",
            "net income before allocation to noncontrolling interests",
            "net earnings, including earnings attributable to *",
            "net income, including income attributable to *",
            "profit for the year",
            "consolidated net income",
        ),
        ("净利润", "五、净利润", "四、净利润"),
        asked=("net profit", "bottom line"),
    ),
    _c(
        "net_income_parent",
        "income",
        "flow",
        (
            "net income attributable to *",
            "net earnings attributable to *",
            "net income (loss) attributable to *",
            "net income attributable to common shareholders",
            "net income available to common stockholders",
            "net income available to common shareholders",
            "net income attributable to shareholders",
            "profit attributable to owners of the parent",
        ),
        ("归属于母公司所有者的净利润", "归属于母公司股东的净利润", "归属于上市公司股东的净利润", "归母净利润"),
    ),
    _c(
        "eps_basic",
        "income",
        "per_share",
        (
            "basic earnings per share",
            "basic",
            "earnings per share basic",
            "earnings per share, basic",
            "net income per share, basic",
            "basic net earnings per share",
            "basic net income per share",
            "net income per share basic",
            "basic earnings per common share",
        ),
        ("基本每股收益", "每股收益"),
        asked=("basic eps", "eps basic", "basic earnings per share"),
    ),
    _c(
        "eps_diluted",
        "income",
        "per_share",
        (
            "diluted earnings per share",
            "diluted",
            "earnings per share diluted",
            "diluted net income per share",
            "net income per share diluted",
            "earnings per share, diluted",
            "net income per share, diluted",
            "diluted net earnings per share",
            "diluted earnings per common share",
        ),
        ("稀释每股收益",),
        asked=("eps", "earnings per share", "diluted eps", "eps diluted"),
    ),
    _c(
        "dividends_per_share",
        "income",
        "per_share",
        (
            "dividends declared per share",
            "cash dividends declared per share",
            "dividends per share",
            "cash dividends per share",
            "dividends declared per common share",
        ),
        ("每股股利", "每股分红"),
        asked=("dividend per share", "dps", "dividends per share"),
    ),
    _c(
        "shares_basic",
        "income",
        "count",
        (
            "weighted-average basic shares outstanding",
            "weighted average basic shares outstanding",
            "basic weighted average shares",
            "weighted-average shares outstanding basic",
            "weighted-average common shares outstanding basic",
            "shares used to compute basic net income per share",
        ),
        (),
    ),
    _c(
        "shares_diluted",
        "income",
        "count",
        (
            "weighted-average diluted shares outstanding",
            "weighted average diluted shares outstanding",
            "weighted-average common shares outstanding diluted",
            "shares used to compute diluted net income per share",
            "diluted weighted average shares",
        ),
        (),
    ),
    _c("net_interest_income", "income", "flow", ("net interest income",), ("利息净收入", "净利息收入")),
    # Balance sheet
    _c(
        "cash",
        "balance",
        "stock",
        (
            "cash and cash equivalents",
            "cash and equivalents",
            "cash",
            "cash and due from banks",
            "cash and cash equivalents, at carrying value",
            "cash and cash equivalents at end of period",
            "cash and cash equivalents at end of year",
            "cash and cash equivalents, end of period",
            "cash and cash equivalents, end of year",
        ),
        ("货币资金", "现金及现金等价物"),
    ),
    _c(
        "short_term_investments",
        "balance",
        "stock",
        ("short-term investments", "marketable securities", "short-term marketable securities"),
        ("交易性金融资产",),
    ),
    _c(
        "accounts_receivable",
        "balance",
        "stock",
        (
            "accounts receivable",
            "accounts receivable, net",
            "trade accounts receivable",
            "trade receivables",
            "trade receivables, net",
            "trade accounts receivable, net",
            "receivables",
            "receivables, net",
            "accounts and notes receivable, net",
            "accounts receivable - net",
            "accounts receivable, less allowances",
            "trade and other receivables",
            "accounts receivable, net and other",
        ),
        ("应收账款",),
        asked=("net ar", "ar", "receivables"),
    ),
    _c(
        "inventory",
        "balance",
        "stock",
        (
            "inventories",
            "inventory",
            "merchandise inventories",
            "inventories, net",
            "total inventories",
            "merchandise inventory",
            "materials and supplies",
        ),
        ("存货",),
    ),
    _c(
        "prepaid_expenses",
        "balance",
        "stock",
        ("prepaid expenses and other current assets", "prepaid expenses", "other current assets"),
        ("预付款项",),
    ),
    _c("total_current_assets", "balance", "stock", ("total current assets", "current assets"), ("流动资产合计",)),
    _c(
        "ppe_net",
        "balance",
        "stock",
        (
            "property, plant and equipment, net",
            "property and equipment, net",
            "property, plant and equipment",
            "property, plant, and equipment, net",
            "net property, plant and equipment",
            "property and equipment",
            "property, plant and equipment - net",
            "property, plant and equipment—net",
            "property, plant and equipment – net",
            "net property and equipment",
            "property and equipment, net of accumulated depreciation",
            "property, plant and equipment, net of accumulated depreciation",
            "land, buildings and equipment, net",
            "property, equipment and software, net",
            "utility plant, net",
        ),
        ("固定资产",),
        asked=("pp&e", "ppne", "ppe", "fixed assets", "net ppne"),
    ),
    _c("goodwill", "balance", "stock", ("goodwill", "goodwill, net"), ("商誉",)),
    _c(
        "intangible_assets",
        "balance",
        "stock",
        (
            "intangible assets, net",
            "other intangible assets, net",
            "identifiable intangible assets, net",
            "intangible assets",
        ),
        ("无形资产",),
    ),
    _c("total_assets", "balance", "stock", ("total assets",), ("资产总计", "资产合计", "总资产")),
    _c(
        "accounts_payable",
        "balance",
        "stock",
        (
            "accounts payable",
            "trade accounts payable",
            "accounts payable, trade",
            "trade payables",
            "accounts payable and accrued liabilities",
            "accounts payable and accrued expenses",
        ),
        ("应付账款",),
        asked=("payables",),
    ),
    _c(
        "accrued_liabilities",
        "balance",
        "stock",
        (
            "accrued liabilities",
            "accrued expenses",
            "other accrued liabilities",
            "accrued expenses and other current liabilities",
            "accrued and other current liabilities",
        ),
        (),
    ),
    _c(
        "short_term_debt",
        "balance",
        "stock",
        (
            "short-term debt",
            "short-term borrowings",
            "current portion of long-term debt",
            "notes payable",
            "current maturities of long-term debt",
            "short-term debt and current portion of long-term debt",
            "commercial paper",
            "long-term debt due within one year",
            "loans and notes payable",
        ),
        ("短期借款", "一年内到期的非流动负债"),
    ),
    _c(
        "total_current_liabilities",
        "balance",
        "stock",
        ("total current liabilities", "current liabilities"),
        ("流动负债合计",),
    ),
    _c(
        "long_term_debt",
        "balance",
        "stock",
        (
            "long-term debt",
            "long-term debt, net",
            "long-term debt, net of current portion",
            "long-term debt, excluding current portion",
            "long-term borrowings",
            "long-term debt, less current portion",
            "long-term debt due after one year",
            "long-term debt, net of current maturities",
        ),
        ("长期借款", "应付债券"),
    ),
    _c("total_liabilities", "balance", "stock", ("total liabilities",), ("负债合计", "负债总计", "总负债")),
    _c(
        "retained_earnings",
        "balance",
        "stock",
        ("retained earnings", "retained earnings (accumulated deficit)", "accumulated deficit", "reinvested earnings"),
        ("未分配利润",),
    ),
    _c(
        "total_equity",
        "balance",
        "stock",
        (
            "total equity",
            "total shareholders' equity",
            "total stockholders' equity",
            "total shareowners' equity",
            "total shareholders’ equity",
            "total stockholders’ equity",
            "shareholders' equity",
            "stockholders' equity",
            "total equity attributable to *",
            "total * shareholders' equity",
            "total * stockholders' equity",
            "total shareholders' equity attributable to *",
            "total stockholders' equity attributable to *",
        ),
        ("所有者权益合计", "股东权益合计", "所有者权益（或股东权益）合计", "归属于母公司所有者权益合计"),
        asked=("shareholders equity", "book value"),
    ),
    _c(
        "total_liabilities_and_equity",
        "balance",
        "stock",
        (
            "total liabilities and equity",
            "total liabilities and shareholders' equity",
            "total liabilities and stockholders' equity",
            "total liabilities and shareholders’ equity",
            "total liabilities and stockholders’ equity",
        ),
        ("负债和所有者权益总计", "负债和股东权益总计"),
    ),
    # Cash flow statement
    _c(
        "operating_cash_flow",
        "cash_flow",
        "flow",
        (
            "net cash provided by operating activities",
            "net cash provided by (used in) operating activities",
            "net cash from operating activities",
            "cash provided by operating activities",
            "net cash flows from operating activities",
            "net cash provided by operations",
            "net cash provided by (used in) operations",
            "cash flows from operating activities",
            "net cash used in operating activities",
            "net cash (used in) provided by operating activities",
            "cash provided by operations",
            "net cash provided by operating activities of continuing operations",
            "cash generated from operations",
            "net cash flow provided by operating activities",
            "net cash from operations",
        ),
        ("经营活动产生的现金流量净额", "经营活动现金流量净额", "经营现金流", "经营性现金流"),
        asked=(
            "cash from operations",
            "operating cash flow",
            "cash flow from operations",
            "cash flow from operating activities",
        ),
    ),
    _c(
        "capital_expenditure",
        "cash_flow",
        "flow",
        (
            "purchases of property and equipment",
            "purchases of property, plant and equipment",
            "capital expenditures",
            "additions to property, plant and equipment",
            "additions to property and equipment",
            "payments for property and equipment",
            "payments to acquire property, plant and equipment",
            "payments to acquire property and equipment",
            "purchase of property, plant and equipment and other intangible assets",
            "purchases of land, buildings and equipment",
            "purchases of property, plant and equipment and intangible assets",
            "purchase of property, plant and equipment",
            "capital spending",
            "purchases of property and equipment, net of proceeds from sales and incentives",
            "purchases of property, plant and equipment (pp&e)",
            "expenditures for property, plant and equipment",
            "payments for acquisition of property, plant and equipment",
            "capital expenditure",
            "purchases of property and equipment, including internal-use software and website development",
            "purchases of property and equipment, including internal-use software and website development, net",
            "acquisition of property, plant and equipment",
            "property, plant and equipment additions",
        ),
        ("购建固定资产、无形资产和其他长期资产支付的现金", "资本开支", "资本支出"),
        sign=-1,
        asked=("capex", "capital expenditure", "capital expenditures"),
    ),
    _c(
        "investing_cash_flow",
        "cash_flow",
        "flow",
        (
            "net cash used in investing activities",
            "net cash provided by (used in) investing activities",
            "net cash (used in) provided by investing activities",
            "net cash from investing activities",
            "net cash provided by investing activities",
        ),
        ("投资活动产生的现金流量净额",),
    ),
    _c(
        "financing_cash_flow",
        "cash_flow",
        "flow",
        (
            "net cash used in financing activities",
            "net cash provided by (used in) financing activities",
            "net cash (used in) provided by financing activities",
            "net cash from financing activities",
            "net cash provided by financing activities",
        ),
        ("筹资活动产生的现金流量净额",),
    ),
    _c(
        "dividends_paid",
        "cash_flow",
        "flow",
        (
            "dividends paid",
            "cash dividends paid",
            "dividends paid to shareholders",
            "payments of dividends",
            "dividends",
            "dividends paid to common shareholders",
            "cash dividends",
            "dividends paid to shareowners",
            "payment of dividends",
            "dividends paid on common stock",
        ),
        ("分配股利、利润或偿付利息支付的现金", "现金分红"),
        sign=-1,
        asked=("cash dividends", "dividends paid"),
    ),
    _c(
        "share_repurchases",
        "cash_flow",
        "flow",
        (
            "repurchases of common stock",
            "purchases of treasury stock",
            "purchase of treasury shares",
            "purchases of common stock for treasury",
            "repurchases of shares",
            "repurchase of common stock",
            "common stock repurchased",
            "payments for repurchases of common stock",
            "purchases of common stock",
            "shares repurchased",
            "repurchases of common stock and dividend equivalents",
        ),
        ("股份回购", "回购股份"),
        sign=-1,
        asked=("buybacks", "share buybacks", "stock repurchases"),
    ),
    _c(
        "stock_compensation",
        "cash_flow",
        "flow",
        (
            "stock-based compensation",
            "stock-based compensation expense",
            "share-based compensation",
            "share-based compensation expense",
        ),
        ("股份支付",),
    ),
)


# Less common lines: other income statement items (incl. PRC GAAP 利润表 lines), balance sheet detail,
# financing cash flows, and a few bank lines.
_LIST += (
    _c(
        "taxes_and_surcharges",
        "income",
        "flow",
        ("taxes and surcharges", "business taxes and surcharges"),
        ("税金及附加", "营业税金及附加"),
    ),
    _c(
        "finance_expense",
        "income",
        "flow",
        ("finance costs", "finance expenses", "financial expenses", "finance costs, net"),
        ("财务费用",),
    ),
    _c(
        "impairment_loss",
        "income",
        "flow",
        (
            "impairment losses",
            "asset impairment losses",
            "impairment charges",
            "impairment of long-lived assets",
            "goodwill impairment",
            "goodwill impairment expense",
            "impairment of goodwill",
        ),
        ("资产减值损失",),
    ),
    _c(
        "credit_impairment_loss",
        "income",
        "flow",
        (
            "credit impairment losses",
            "provision for credit losses",
            "provision for loan losses",
            "provision for loan and lease losses",
        ),
        ("信用减值损失",),
    ),
    _c(
        "investment_income",
        "income",
        "flow",
        (
            "investment income",
            "investment income, net",
            "income from equity method investments",
            "equity in earnings of affiliates",
            "equity in earnings of unconsolidated affiliates",
        ),
        ("投资收益",),
    ),
    _c(
        "fair_value_gains",
        "income",
        "flow",
        ("gains from changes in fair value", "fair value gains", "gain on changes in fair value"),
        ("公允价值变动收益",),
    ),
    _c(
        "other_income",
        "income",
        "flow",
        (
            "other income (expense), net",
            "other income, net",
            "other income",
            "other (income) expense, net",
            "other expense (income), net",
            "other income (expense)",
            "other income (loss)",
            "other non-operating income, net",
            "other, net",
            "other expense, net",
            "non-operating income (expense)",
            "nonoperating income (expense)",
        ),
        ("其他收益",),
    ),
    _c("non_operating_income", "income", "flow", ("non-operating income", "nonoperating income"), ("营业外收入",)),
    _c("non_operating_expense", "income", "flow", ("non-operating expenses", "nonoperating expenses"), ("营业外支出",)),
    _c(
        "restructuring_charges",
        "income",
        "flow",
        (
            "restructuring charges",
            "restructuring costs",
            "restructuring and other charges",
            "restructuring and impairment charges",
            "restructuring expenses",
        ),
        (),
    ),
    _c(
        "amortization_intangibles",
        "income",
        "flow",
        (
            "amortization of intangible assets",
            "amortization of acquired intangible assets",
            "amortization of intangibles",
        ),
        ("无形资产摊销",),
    ),
    _c(
        "net_income_noncontrolling",
        "income",
        "flow",
        (
            "net income attributable to noncontrolling interests",
            "net loss attributable to noncontrolling interests",
            "net income attributable to noncontrolling interest",
            "net earnings attributable to noncontrolling interests",
            "net (income) loss attributable to noncontrolling interests",
            "net income attributable to non-controlling interests",
            "profit attributable to non-controlling interests",
            "net income attributable to minority interests",
        ),
        ("少数股东损益",),
    ),
    _c(
        "comprehensive_income",
        "income",
        "flow",
        (
            "comprehensive income",
            "total comprehensive income",
            "comprehensive income (loss)",
            "total comprehensive income for the year",
        ),
        ("综合收益总额",),
    ),
    _c(
        "fee_commission_income",
        "income",
        "flow",
        ("net fee and commission income", "fee and commission income", "net fees and commissions"),
        ("手续费及佣金净收入",),
    ),
    _c(
        "noninterest_income",
        "income",
        "flow",
        ("noninterest income", "non-interest income", "total noninterest income", "total non-interest income"),
        ("非利息收入",),
    ),
    _c(
        "noninterest_expense",
        "income",
        "flow",
        ("noninterest expense", "non-interest expense", "total noninterest expense", "total non-interest expense"),
        ("业务及管理费",),
    ),
    # Balance sheet detail
    _c("notes_receivable", "balance", "stock", ("notes receivable", "bills receivable"), ("应收票据",)),
    _c("other_receivables", "balance", "stock", ("other receivables",), ("其他应收款",)),
    _c("contract_assets", "balance", "stock", ("contract assets",), ("合同资产",)),
    _c(
        "long_term_investments",
        "balance",
        "stock",
        (
            "long-term investments",
            "equity method investments",
            "long-term equity investments",
            "investments in affiliates",
        ),
        ("长期股权投资",),
    ),
    _c("construction_in_progress", "balance", "stock", ("construction in progress",), ("在建工程",)),
    _c(
        "right_of_use_assets",
        "balance",
        "stock",
        ("operating lease right-of-use assets", "right-of-use assets", "operating lease assets"),
        ("使用权资产",),
    ),
    _c(
        "deferred_tax_assets",
        "balance",
        "stock",
        ("deferred tax assets", "deferred income taxes assets", "deferred income tax assets"),
        ("递延所得税资产",),
    ),
    _c(
        "total_non_current_assets",
        "balance",
        "stock",
        ("total non-current assets", "total noncurrent assets", "non-current assets"),
        ("非流动资产合计",),
    ),
    _c(
        "contract_liabilities",
        "balance",
        "stock",
        ("contract liabilities", "advances from customers", "customer deposits", "advance receipts"),
        ("合同负债", "预收款项", "预收账款"),
    ),
    _c(
        "deferred_revenue",
        "balance",
        "stock",
        (
            "deferred revenue",
            "deferred revenues",
            "unearned revenue",
            "deferred revenue, current",
            "deferred revenue and deposits",
            "short-term deferred revenue",
        ),
        (),
    ),
    _c(
        "employee_payables",
        "balance",
        "stock",
        (
            "accrued compensation",
            "accrued compensation and benefits",
            "employee compensation and benefits",
            "accrued payroll",
            "accrued salaries and wages",
        ),
        ("应付职工薪酬",),
    ),
    _c(
        "taxes_payable",
        "balance",
        "stock",
        ("income taxes payable", "taxes payable", "accrued income taxes", "taxes payable other than income taxes"),
        ("应交税费",),
    ),
    _c(
        "lease_liabilities",
        "balance",
        "stock",
        (
            "operating lease liabilities",
            "lease liabilities",
            "long-term operating lease liabilities",
            "operating lease liabilities, non-current",
        ),
        ("租赁负债",),
    ),
    _c(
        "deferred_tax_liabilities",
        "balance",
        "stock",
        (
            "deferred tax liabilities",
            "deferred income taxes",
            "deferred income tax liabilities",
            "deferred income taxes and other liabilities",
        ),
        ("递延所得税负债",),
    ),
    _c(
        "total_debt",
        "balance",
        "stock",
        (
            "total debt",
            "total borrowings",
            "total debt, including current portion",
            "total long-term debt, including current portion",
        ),
        ("有息负债",),
        asked=("total debt",),
    ),
    _c(
        "total_non_current_liabilities",
        "balance",
        "stock",
        (
            "total non-current liabilities",
            "total noncurrent liabilities",
            "non-current liabilities",
            "total long-term liabilities",
        ),
        ("非流动负债合计",),
    ),
    _c(
        "share_capital",
        "balance",
        "stock",
        (
            "common stock",
            "share capital",
            "common stock and additional paid-in capital",
            "common stock, par value",
            "ordinary shares",
        ),
        ("股本", "实收资本", "实收资本（或股本）"),
    ),
    _c(
        "additional_paid_in_capital",
        "balance",
        "stock",
        (
            "additional paid-in capital",
            "capital in excess of par value",
            "paid-in capital",
            "capital in excess of stated value",
            "capital surplus",
            "share premium",
        ),
        ("资本公积",),
    ),
    _c(
        "surplus_reserve",
        "balance",
        "stock",
        ("surplus reserve", "statutory surplus reserve", "statutory reserves"),
        ("盈余公积",),
    ),
    _c(
        "treasury_stock",
        "balance",
        "stock",
        ("treasury stock", "treasury stock, at cost", "treasury shares", "common stock in treasury, at cost"),
        ("库存股",),
    ),
    _c(
        "accumulated_oci",
        "balance",
        "stock",
        (
            "accumulated other comprehensive income (loss)",
            "accumulated other comprehensive loss",
            "accumulated other comprehensive income",
        ),
        ("其他综合收益",),
    ),
    _c(
        "noncontrolling_interests",
        "balance",
        "stock",
        (
            "noncontrolling interests",
            "noncontrolling interest",
            "non-controlling interests",
            "minority interests",
            "minority interest",
        ),
        ("少数股东权益",),
    ),
    _c(
        "loans",
        "balance",
        "stock",
        (
            "loans, net",
            "loans and advances to customers",
            "net loans",
            "loans and leases, net",
            "total loans",
            "loans held for investment, net",
        ),
        ("发放贷款和垫款", "发放贷款及垫款"),
    ),
    _c(
        "deposits",
        "balance",
        "stock",
        ("deposits", "total deposits", "deposits from customers", "customer deposits and other"),
        ("吸收存款",),
    ),
    # Cash flow detail
    _c(
        "net_change_in_cash",
        "cash_flow",
        "flow",
        (
            "net increase (decrease) in cash and cash equivalents",
            "net increase in cash and cash equivalents",
            "net decrease in cash and cash equivalents",
            "net change in cash and cash equivalents",
            "increase (decrease) in cash and cash equivalents",
            "net (decrease) increase in cash and cash equivalents",
            "net increase (decrease) in cash, cash equivalents and restricted cash",
            "change in cash and cash equivalents",
            "increase (decrease) in cash, cash equivalents and restricted cash",
            "net change in cash, cash equivalents and restricted cash",
        ),
        ("现金及现金等价物净增加额",),
    ),
    _c(
        "debt_issued",
        "cash_flow",
        "flow",
        (
            "proceeds from issuance of long-term debt",
            "proceeds from long-term debt",
            "proceeds from borrowings",
            "proceeds from long-term borrowings",
            "proceeds from issuance of debt",
            "issuance of long-term debt",
            "proceeds from issuance of long-term debt, net",
        ),
        ("取得借款收到的现金",),
    ),
    _c(
        "debt_repaid",
        "cash_flow",
        "flow",
        (
            "repayments of long-term debt",
            "repayment of long-term debt",
            "payments of long-term debt",
            "repayments of borrowings",
            "principal payments on long-term debt",
            "repayments of debt",
            "payments on long-term debt",
        ),
        ("偿还债务支付的现金",),
        sign=-1,
    ),
    _c(
        "acquisitions",
        "cash_flow",
        "flow",
        (
            "acquisitions, net of cash acquired",
            "acquisition of businesses, net of cash acquired",
            "business acquisitions, net of cash acquired",
            "cash paid for acquisitions, net of cash acquired",
        ),
        ("取得子公司及其他营业单位支付的现金净额",),
        sign=-1,
    ),
    _c(
        "stock_issued",
        "cash_flow",
        "flow",
        (
            "proceeds from issuance of common stock",
            "proceeds from stock option exercises",
            "proceeds from exercise of stock options",
            "proceeds from issuance of stock",
        ),
        ("吸收投资收到的现金",),
    ),
    _c(
        "interest_paid",
        "cash_flow",
        "flow",
        ("cash paid for interest", "interest paid", "cash paid during the year for interest"),
        (),
    ),
    _c(
        "income_taxes_paid",
        "cash_flow",
        "flow",
        (
            "cash paid for income taxes",
            "income taxes paid",
            "cash paid for income taxes, net",
            "income taxes paid, net",
        ),
        ("支付的各项税费",),
    ),
    _c("cash_from_sales", "cash_flow", "flow", ("cash received from customers",), ("销售商品、提供劳务收到的现金",)),
    # Other
    _c(
        "employees",
        "other",
        "count",
        ("number of employees", "employees", "total employees"),
        ("员工人数", "在职员工总数"),
    ),
    _c(
        "shares_outstanding",
        "other",
        "count",
        ("common shares outstanding", "shares outstanding", "shares of common stock outstanding"),
        ("总股本",),
    ),
)

CONCEPTS: dict[str, Concept] = {c.id: c for c in _LIST}

_NOTE = re.compile(r"\((?:see )?notes? [^)]*\)|\(\d\)|\[\d\]", re.IGNORECASE)
_TAIL = re.compile(
    r",? (?:net )?(?:of|less) (?:\$|allowances?|accumulated|doubtful|reserves?|current|proceeds|refunds?\b).*$"
    r"|,? respectively$"
)
_CN_PREFIX = re.compile(r"^(?:[一二三四五六七八九十]+、|（[一二三四五六七八九十]+）|\d+[.、．]|[加减][：:]|其中[：:])")
_EN_PREFIX = re.compile(r"^(?:less|add|plus|deduct|minus)\s*:\s*|^(?:less|plus)\s+(?=[a-z])")


def _dashes(text: str) -> str:
    return re.sub(r"\s*[–—]\s*|\s+-\s+", ", ", text)


def _norm(label: str) -> str:
    text = _NOTE.sub(" ", label.lower().replace("’", "'")).strip()
    text = _EN_PREFIX.sub("", text)
    text = re.sub(r"\s*[-–—]\s*\$[\d,]+.*$", "", text)
    text = _dashes(text)  # "Property, plant and equipment—net", "Earnings per share - diluted"
    text = text.replace("&", " and ") if "p&e" not in text and "s&a" not in text and "r&d" not in text else text
    text = re.sub(r"[:;*†‡]", " ", text)
    return _canon(" ".join(text.split()).strip(" ,."))


def _canon(text: str) -> str:
    """One spelling for what filings print several ways: the Oxford comma, "used for/by", "cash and
    equivalents", "Cash provided by ..." without "net"."""
    text = text.replace(", and ", " and ").replace("/(", " (").replace(")/", ") ")  # "Net income/(loss)"
    text = text.replace("'", "")  # "stockholders' equity", "stockholders equity"
    text = re.sub(r"\bused (?:for|by)\b", "used in", text)
    text = re.sub(
        r"\(used(?: in)?\) provided(?: by)?|provided(?: by)? \(used(?: in)?\)(?: by)?", "provided by (used in)", text
    )
    text = re.sub(r"\bcash and equivalents\b", "cash and cash equivalents", text)
    return re.sub(r"^cash (?=provided|used|\(used|from|flows? from)", "net cash ", text)


def _matches(pattern: str, label: str) -> bool:
    if pattern.endswith("*"):
        return label.startswith(pattern[:-1].strip())
    if "*" in pattern:
        head, tail = pattern.split("*", 1)
        return label.startswith(head) and label.endswith(tail.strip())
    return label == pattern


_EN_INDEX = [
    (p.replace("&", " and ") if not any(k in p for k in ("p&e", "s&a", "r&d")) else p, c.id)
    for c in _LIST
    for p in c.en
]
_EN_INDEX = [(_canon(" ".join(_dashes(p).split())), cid) for p, cid in _EN_INDEX]
# "(loss)" in "Net income (loss)", "(benefit)" in "Provision (benefit) for income taxes".
_SIGN_WORDS = re.compile(r"\s*\((?:loss|losses|income|benefit|expense|deficit|gain|decrease|increase)\)")
_PARENS = re.compile(r"\(([^()]*)\)")  # "Net cash (used in) operating activities"
# "Earnings before income taxes and equity in income of affiliates": the pre-tax line all the same.
_AFTER_TAX_TAIL = re.compile(r"(before (?:income taxes|income tax expense|taxes)) and .*$")
# The previous row's label and figures glued before this one: "Dividends paid (1,158) Net cash used in ...".
_BEFORE_FIGURES = re.compile(r"^.*\d\)?\s+(?=[a-z])")
_FIGURES = re.compile(r"(?:\s+\$?\s*\(?[\d,]+(?:\.\d+)?\s*\)?\s*%?)+$")  # "Total assets $ 17,475"
_EXACT: dict[str, str] = {}
for _pattern, _cid in _EN_INDEX:
    if "*" not in _pattern:
        _EXACT.setdefault(_pattern, _cid)
_WILDCARDS = [(p, cid) for p, cid in _EN_INDEX if "*" in p]
# Section headings pypdf glues before a row's label: "Current assets Cash and cash equivalents".
_SECTION = re.compile(
    r"^(?:liabilities and (?:stockholders' |shareholders' |shareowners' )?equity"
    r"|(?:non-?)?current (?:assets|liabilities)"
    r"|assets|liabilities|\(unaudited\)|commitments and contingencies"
    r"|(?:cash flows?,? (?:from )?)?(?:operating|investing|financing) activities) (?=\S)"
)
# Explanations printed after the item: "Cost of sales (exclusive of depreciation shown below)".
_ASIDE = re.compile(
    r"\s*\((?:exclusive|excluding|exclusive of|including|inclusive of)\b[^)]*\)$"
    r"|,\s*(?:excluding|exclusive of)\b.*$"
)


def _unheaded(text: str) -> str:
    while _SECTION.match(text):
        text = _SECTION.sub("", text, count=1)
    return text


# Each step may or may not apply: a label is tried as printed, then with each applicable step taken.
_STEPS = (
    _unheaded,
    lambda v: _TAIL.sub("", v),
    lambda v: _ASIDE.sub("", v),
    lambda v: _SIGN_WORDS.sub("", v),
    lambda v: _PARENS.sub(r"\1", v),
    lambda v: _AFTER_TAX_TAIL.sub(r"\1", v),
    lambda v: _FIGURES.sub("", v),
    lambda v: _BEFORE_FIGURES.sub("", v),
    lambda v: v[6:] if v.startswith("total ") else v,
    lambda v: v[:-5] if v.endswith(", net") else v,
)


def _variants(label: str) -> list[str]:
    out = [_norm(label)]
    for step in _STEPS:
        for v in list(out):
            cut = _canon(" ".join(step(v).split()).strip(" ,"))
            if cut and cut not in out:
                out.append(cut)
    return out


def concept_for_label(label: str) -> str | None:
    """The concept a statement row label names, or None. Whole-label matches only (after dropping note
    references, "net of allowances ..." tails and a leading "Total")."""
    if re.search(r"[\u4e00-\u9fff]", label):
        text = _CN_PREFIX.sub("", re.sub(r"\s+", "", label))
        text = re.sub(r"[（(][^)）]*[)）]$", "", text)
        for concept in _LIST:
            if text in concept.zh or any(_CN_PREFIX.sub("", z) == text for z in concept.zh):
                return concept.id
        return None
    variants = _variants(label)
    # Exact labels first: "... attributable to noncontrolling interests" is not "... attributable to *".
    for variant in variants:
        if variant in _EXACT:
            return _EXACT[variant]
    for variant in variants:
        for pattern, cid in _WILDCARDS:
            if _matches(pattern, variant):
                return cid
    return None


# Labels that name a line item in a statement but mean something else in a question ("marketing strategy").
_LABEL_ONLY = {"turnover", "marketing", "basic", "diluted", "other", "other, net", "deposits"}


def _phrases() -> list[tuple[str, str]]:
    out = []
    for c in _LIST:
        for p in (*c.en, *c.asked):
            if "*" in p or (len(p) < 3 and p not in ("ar",)) or p in _LABEL_ONLY:
                continue
            out.append((p, c.id))
        out.extend((z, c.id) for z in c.zh if len(z) >= 2)
    return sorted(out, key=lambda x: -len(x[0]))


_PHRASES = _phrases()
# Words too common in questions to name a line item alone.
_WEAK = {
    "sales",
    "basic",
    "diluted",
    "cash",
    "marketing",
    "dividends",
    "receivables",
    "depreciation",
    "ar",
    "current assets",
    "current liabilities",
    "property and equipment",
    "property, plant and equipment",
}


def concepts_in_text(text: str) -> list[str]:
    """Concepts a question names, longest phrase first, each once."""
    lowered = " " + " ".join(text.lower().replace("’", "'").split()) + " "
    found: list[str] = []
    taken: list[tuple[int, int]] = []
    for phrase, cid in _PHRASES:
        if phrase in _WEAK and len(found) > 0:
            continue
        if re.search(r"[\u4e00-\u9fff]", phrase):
            spans = [(m.start(), m.end()) for m in re.finditer(re.escape(phrase), lowered)]
        else:
            spans = [(m.start(), m.end()) for m in re.finditer(rf"(?<![a-z&]){re.escape(phrase)}(?![a-z&])", lowered)]
        for start, end in spans:
            if any(start < e and end > s for s, e in taken):
                continue
            taken.append((start, end))
            if cid not in found:
                found.append(cid)
    return found
