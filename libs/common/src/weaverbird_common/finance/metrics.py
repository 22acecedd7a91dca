"""Standard financial metrics as formulas over statement concepts, with the conventions shown to users.

Each metric names its inputs by concept and period ("t" the asked period, "t-1" the one before, "avg"
the mean of the two: the usual convention for turnover and return ratios). Expenses and outflows are
read as magnitudes (a cash flow statement prints capex as (1,577)), so formulas are written as analysts
write them. A definition written in the question overrides the library (`definition_in_question`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from weaverbird_common.finance import formulas
from weaverbird_common.finance.concepts import concepts_in_text

# Read as magnitudes whatever sign the statement prints.
_MAGNITUDE = {
    "cost_of_revenue",
    "sga",
    "selling_expense",
    "admin_expense",
    "rnd_expense",
    "interest_expense",
    "income_tax_expense",
    "depreciation_amortization",
    "operating_expenses",
    "capital_expenditure",
    "dividends_paid",
    "share_repurchases",
}


@dataclass(frozen=True)
class Input:
    concept: str
    period: str  # "t" | "t-1" | "avg"


@dataclass(frozen=True)
class Metric:
    id: str
    en: tuple[str, ...]
    zh: tuple[str, ...]
    expression: str
    inputs: dict[str, Input]
    unit: str  # "percent" | "ratio" | "times" | "days" | "currency"
    description: str
    alternatives: tuple[tuple[str, dict[str, Input]], ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Computed:
    value: float  # a fraction for percent metrics (0.224 is 22.4 %)
    unit: str
    formula: str
    used: dict[str, tuple[str, str, float]]


def _i(spec: str) -> Input:
    concept, _, period = spec.partition("@")
    return Input(concept, period or "t")


def _m(
    id: str,
    en: tuple[str, ...],
    zh: tuple[str, ...],
    expression: str,
    inputs: dict[str, str],
    unit: str,
    description: str,
    *alternatives: tuple[str, dict[str, str]],
) -> Metric:
    return Metric(
        id,
        en,
        zh,
        expression,
        {k: _i(v) for k, v in inputs.items()},
        unit,
        description,
        tuple((e, {k: _i(v) for k, v in ins.items()}) for e, ins in alternatives),
    )


_REV, _COGS, _GP = "revenue", "cost_of_revenue", "gross_profit"
_LIST = (
    _m(
        "gross_margin",
        ("gross margin", "gross profit margin", "gross margin %"),
        ("毛利率", "销售毛利率"),
        "g / r",
        {"g": _GP, "r": _REV},
        "percent",
        "Gross margin = gross profit / revenue",
        ("(r - c) / r", {"r": _REV, "c": _COGS}),
    ),
    _m(
        "operating_margin",
        (
            "operating margin",
            "operating income margin",
            "operating income % margin",
            "operating profit margin",
            "ebit margin",
        ),
        ("营业利润率", "经营利润率", "息税前利润率"),
        "o / r",
        {"o": "operating_income", "r": _REV},
        "percent",
        "Operating margin = operating income / revenue",
    ),
    _m(
        "net_margin",
        ("net profit margin", "net margin", "net income margin", "profit margin"),
        ("净利率", "销售净利率", "净利润率"),
        "n / r",
        {"n": "net_income", "r": _REV},
        "percent",
        "Net profit margin = net income / revenue",
        ("n / r", {"n": "net_income_parent", "r": _REV}),
    ),
    _m(
        "ebitda_margin",
        ("ebitda margin", "ebitda % margin"),
        ("EBITDA利润率",),
        "(o + d) / r",
        {"o": "operating_income", "d": "depreciation_amortization", "r": _REV},
        "percent",
        "EBITDA margin = (operating income + depreciation and amortization) / revenue",
    ),
    _m(
        "ebitda",
        ("ebitda", "unadjusted ebitda"),
        ("息税折旧摊销前利润",),
        "o + d",
        {"o": "operating_income", "d": "depreciation_amortization"},
        "currency",
        "EBITDA = operating income + depreciation and amortization (from the cash flow statement)",
    ),
    _m(
        "ebitda_less_capex",
        ("ebitda less capex", "ebitda minus capex"),
        (),
        "o + d - c",
        {"o": "operating_income", "d": "depreciation_amortization", "c": "capital_expenditure"},
        "currency",
        "EBITDA less capex = operating income + D&A - capital expenditure",
    ),
    _m(
        "revenue_growth",
        (
            "revenue growth",
            "revenue growth rate",
            "total revenue growth rate",
            "sales growth",
            "change in revenue",
            "change in total revenue",
            "change in net sales",
            "growth in revenue",
        ),
        ("营业收入增长率", "营收增长率", "收入增长率", "营业收入同比增长"),
        "(a - b) / b",
        {"a": _REV, "b": f"{_REV}@t-1"},
        "percent",
        "Revenue growth = (revenue this year - revenue last year) / revenue last year",
    ),
    _m(
        "net_income_growth",
        ("net income growth", "change in net income", "earnings growth", "net profit growth"),
        ("净利润增长率", "净利润同比增长"),
        "(a - b) / b",
        {"a": "net_income", "b": "net_income@t-1"},
        "percent",
        "Net income growth = (net income this year - last year) / last year",
    ),
    _m(
        "operating_income_growth",
        ("operating income growth", "change in operating income", "change in unadjusted operating income"),
        ("营业利润增长率",),
        "(a - b) / b",
        {"a": "operating_income", "b": "operating_income@t-1"},
        "percent",
        "Operating income growth = (operating income this year - last year) / last year",
    ),
    _m(
        "working_capital",
        ("working capital", "net working capital"),
        ("营运资本", "营运资金"),
        "a - l",
        {"a": "total_current_assets", "l": "total_current_liabilities"},
        "currency",
        "Working capital = total current assets - total current liabilities",
    ),
    _m(
        "current_ratio",
        ("current ratio", "working capital ratio"),
        ("流动比率",),
        "a / l",
        {"a": "total_current_assets", "l": "total_current_liabilities"},
        "ratio",
        "Current ratio = total current assets / total current liabilities",
    ),
    _m(
        "quick_ratio",
        ("quick ratio", "acid-test ratio", "acid test ratio"),
        ("速动比率",),
        "(a - i) / l",
        {"a": "total_current_assets", "i": "inventory", "l": "total_current_liabilities"},
        "ratio",
        "Quick ratio = (total current assets - inventories) / total current liabilities",
    ),
    _m(
        "cash_ratio",
        ("cash ratio",),
        ("现金比率",),
        "c / l",
        {"c": "cash", "l": "total_current_liabilities"},
        "ratio",
        "Cash ratio = cash and cash equivalents / total current liabilities",
    ),
    _m(
        "dso",
        ("days sales outstanding", "dso"),
        ("应收账款周转天数",),
        "365 * r / s",
        {"r": "accounts_receivable@avg", "s": _REV},
        "days",
        "DSO = 365 x average accounts receivable (opening and closing) / revenue",
    ),
    _m(
        "dio",
        ("days inventory outstanding", "dio", "days in inventory"),
        ("存货周转天数",),
        "365 * i / c",
        {"i": "inventory@avg", "c": _COGS},
        "days",
        "DIO = 365 x average inventory (opening and closing) / cost of goods sold",
    ),
    _m(
        "dpo",
        ("days payable outstanding", "dpo"),
        ("应付账款周转天数",),
        "365 * p / c",
        {"p": "accounts_payable@avg", "c": _COGS},
        "days",
        "DPO = 365 x average accounts payable (opening and closing) / cost of goods sold",
    ),
    _m(
        "cash_conversion_cycle",
        ("cash conversion cycle",),
        ("现金转换周期", "现金循环周期"),
        "365 * r / s + 365 * i / c - 365 * p / c",
        {"r": "accounts_receivable@avg", "s": _REV, "i": "inventory@avg", "c": _COGS, "p": "accounts_payable@avg"},
        "days",
        "Cash conversion cycle = DSO + DIO - DPO (365 days, average balances)",
    ),
    _m(
        "inventory_turnover",
        ("inventory turnover ratio", "inventory turnover"),
        ("存货周转率",),
        "c / i",
        {"c": _COGS, "i": "inventory@avg"},
        "times",
        "Inventory turnover = cost of goods sold / average inventory (opening and closing)",
    ),
    _m(
        "receivables_turnover",
        ("receivables turnover", "accounts receivable turnover"),
        ("应收账款周转率",),
        "s / r",
        {"s": _REV, "r": "accounts_receivable@avg"},
        "times",
        "Receivables turnover = revenue / average accounts receivable",
    ),
    _m(
        "asset_turnover",
        ("asset turnover ratio", "asset turnover", "total asset turnover"),
        ("总资产周转率", "资产周转率"),
        "s / a",
        {"s": _REV, "a": "total_assets@avg"},
        "times",
        "Asset turnover = revenue / average total assets",
    ),
    _m(
        "fixed_asset_turnover",
        ("fixed asset turnover ratio", "fixed asset turnover", "ppe turnover"),
        ("固定资产周转率",),
        "s / p",
        {"s": _REV, "p": "ppe_net@avg"},
        "times",
        "Fixed asset turnover = revenue / average net PP&E (opening and closing)",
    ),
    _m(
        "capex_to_revenue",
        (
            "capex as a % of revenue",
            "capex to revenue",
            "capital expenditure as a percentage of revenue",
            "capex as a percentage of revenue",
            "capital intensity",
        ),
        ("资本开支占收入比", "资本支出占营业收入比例", "资本开支占营收比"),
        "c / s",
        {"c": "capital_expenditure", "s": _REV},
        "percent",
        "Capex / revenue = capital expenditure / revenue",
    ),
    _m(
        "roa",
        ("return on assets", "roa"),
        ("总资产收益率", "资产收益率", "总资产报酬率", "总资产净利率"),
        "n / a",
        {"n": "net_income", "a": "total_assets@avg"},
        "percent",
        "ROA = net income / average total assets (opening and closing)",
    ),
    _m(
        "roe",
        ("return on equity", "roe"),
        ("净资产收益率", "权益收益率"),
        "n / e",
        {"n": "net_income", "e": "total_equity@avg"},
        "percent",
        "ROE = net income / average shareholders' equity (opening and closing)",
    ),
    _m(
        "effective_tax_rate",
        ("effective tax rate", "effective income tax rate"),
        ("实际税率", "有效税率"),
        "t / p",
        {"t": "income_tax_expense", "p": "income_before_tax"},
        "percent",
        "Effective tax rate = income tax expense / income before income taxes",
    ),
    _m(
        "interest_coverage",
        ("interest coverage ratio", "interest coverage", "times interest earned"),
        ("利息保障倍数",),
        "o / i",
        {"o": "operating_income", "i": "interest_expense"},
        "times",
        "Interest coverage = operating income / interest expense",
    ),
    _m(
        "ebitda_interest_coverage",
        ("ebitda interest coverage", "ebitda to interest"),
        (),
        "(o + d) / i",
        {"o": "operating_income", "d": "depreciation_amortization", "i": "interest_expense"},
        "times",
        "EBITDA interest coverage = (operating income + D&A) / interest expense",
    ),
    _m(
        "payout_ratio",
        ("dividend payout ratio", "payout ratio"),
        ("股利支付率", "分红率", "股息支付率"),
        "d / n",
        {"d": "dividends_paid", "n": "net_income_parent"},
        "ratio",
        "Payout ratio = cash dividends paid / net income attributable to shareholders",
        ("d / n", {"d": "dividends_paid", "n": "net_income"}),
    ),
    _m(
        "retention_ratio",
        ("retention ratio", "earnings retention ratio", "plowback ratio"),
        ("留存比率",),
        "(n - d) / n",
        {"n": "net_income_parent", "d": "dividends_paid"},
        "ratio",
        "Retention ratio = (net income - cash dividends paid) / net income",
        ("(n - d) / n", {"n": "net_income", "d": "dividends_paid"}),
    ),
    _m(
        "free_cash_flow",
        ("free cash flow", "fcf"),
        ("自由现金流",),
        "o - c",
        {"o": "operating_cash_flow", "c": "capital_expenditure"},
        "currency",
        "Free cash flow = cash from operations - capital expenditure",
    ),
    _m(
        "fcf_margin",
        ("free cash flow margin", "fcf margin"),
        ("自由现金流利润率",),
        "(o - c) / s",
        {"o": "operating_cash_flow", "c": "capital_expenditure", "s": _REV},
        "percent",
        "FCF margin = (cash from operations - capital expenditure) / revenue",
    ),
    _m(
        "fcf_conversion",
        ("free cash flow conversion", "fcf conversion"),
        (),
        "(o - c) / n",
        {"o": "operating_cash_flow", "c": "capital_expenditure", "n": "net_income"},
        "ratio",
        "FCF conversion = free cash flow / net income",
    ),
    _m(
        "cash_flow_to_net_income",
        ("cash flow to net income", "operating cash flow to net income", "quality of earnings"),
        ("净现比",),
        "o / n",
        {"o": "operating_cash_flow", "n": "net_income"},
        "ratio",
        "Cash conversion = cash from operations / net income",
    ),
    _m(
        "operating_cash_flow_ratio",
        ("operating cash flow ratio",),
        ("现金流动负债比",),
        "o / l",
        {"o": "operating_cash_flow", "l": "total_current_liabilities"},
        "ratio",
        "Operating cash flow ratio = cash from operations / total current liabilities",
    ),
    _m(
        "debt_to_equity",
        ("debt to equity ratio", "debt-to-equity ratio", "debt to equity", "debt-to-equity"),
        ("债务股本比", "负债权益比"),
        "(s + l) / e",
        {"s": "short_term_debt", "l": "long_term_debt", "e": "total_equity"},
        "ratio",
        "Debt / equity = (short-term debt + long-term debt) / total equity",
        ("t / e", {"t": "total_debt", "e": "total_equity"}),
        ("l / e", {"l": "long_term_debt", "e": "total_equity"}),
    ),
    _m(
        "debt_to_assets",
        ("debt to assets", "debt-to-assets ratio", "debt ratio"),
        (),
        "(s + l) / a",
        {"s": "short_term_debt", "l": "long_term_debt", "a": "total_assets"},
        "ratio",
        "Debt / assets = (short-term debt + long-term debt) / total assets",
        ("t / a", {"t": "total_debt", "a": "total_assets"}),
    ),
    _m(
        "liabilities_to_assets",
        ("liabilities to assets", "total liabilities to total assets"),
        ("资产负债率",),
        "l / a",
        {"l": "total_liabilities", "a": "total_assets"},
        "percent",
        "Liabilities / assets = total liabilities / total assets",
    ),
    _m(
        "net_debt",
        ("net debt",),
        ("净债务", "净负债"),
        "s + l - c",
        {"s": "short_term_debt", "l": "long_term_debt", "c": "cash"},
        "currency",
        "Net debt = short-term debt + long-term debt - cash and cash equivalents",
        ("t - c", {"t": "total_debt", "c": "cash"}),
    ),
    _m(
        "net_debt_to_ebitda",
        ("net debt to ebitda", "net debt/ebitda", "leverage ratio"),
        (),
        "(s + l - c) / (o + d)",
        {
            "s": "short_term_debt",
            "l": "long_term_debt",
            "c": "cash",
            "o": "operating_income",
            "d": "depreciation_amortization",
        },
        "times",
        "Net debt / EBITDA = (debt - cash) / (operating income + D&A)",
    ),
    _m(
        "equity_multiplier",
        ("equity multiplier", "financial leverage"),
        ("权益乘数",),
        "a / e",
        {"a": "total_assets", "e": "total_equity"},
        "times",
        "Equity multiplier = total assets / total equity",
    ),
    _m(
        "rnd_to_revenue",
        (
            "r&d as a % of revenue",
            "r&d intensity",
            "research and development as a percentage of revenue",
            "r&d to revenue",
        ),
        ("研发费用率", "研发投入占比"),
        "d / s",
        {"d": "rnd_expense", "s": _REV},
        "percent",
        "R&D / revenue = research and development expense / revenue",
    ),
    _m(
        "sga_to_revenue",
        ("sg&a as a % of revenue", "sg&a to revenue", "sg&a ratio"),
        ("期间费用率",),
        "g / s",
        {"g": "sga", "s": _REV},
        "percent",
        "SG&A / revenue = selling, general and administrative / revenue",
    ),
    _m(
        "cogs_to_revenue",
        ("cogs as a % of revenue", "cost of revenue ratio", "cogs % margin", "cogs margin"),
        ("营业成本率",),
        "c / s",
        {"c": _COGS, "s": _REV},
        "percent",
        "COGS / revenue = cost of goods sold / revenue",
    ),
    _m(
        "opex_ratio",
        ("operating expense ratio",),
        ("费用率",),
        "x / s",
        {"x": "operating_expenses", "s": _REV},
        "percent",
        "Operating expense ratio = operating expenses / revenue",
    ),
    _m(
        "dividend_to_ocf",
        ("dividends to operating cash flow",),
        (),
        "d / o",
        {"d": "dividends_paid", "o": "operating_cash_flow"},
        "ratio",
        "Dividends / cash from operations = cash dividends paid / cash from operations",
    ),
)


# Returns on capital, per-share, cash flow and bank ratios.
_LIST += (
    _m(
        "roic",
        ("return on invested capital", "roic"),
        ("投入资本回报率", "投资资本回报率"),
        "o * (1 - t / p) / (s + l + e)",
        {
            "o": "operating_income",
            "t": "income_tax_expense",
            "p": "income_before_tax",
            "s": "short_term_debt",
            "l": "long_term_debt",
            "e": "total_equity",
        },
        "percent",
        "ROIC = operating income x (1 - effective tax rate) / (short-term debt + long-term debt + total equity), "
        "year-end balances",
    ),
    _m(
        "roe_parent",
        ("return on equity attributable to shareholders",),
        ("加权平均净资产收益率",),
        "n / e",
        {"n": "net_income_parent", "e": "total_equity@avg"},
        "percent",
        "ROE = net income attributable to shareholders / average shareholders' equity (opening and closing)",
        ("n / e", {"n": "net_income", "e": "total_equity@avg"}),
    ),
    _m(
        "equity_ratio",
        ("equity ratio", "equity to assets"),
        ("股东权益比率", "权益比率"),
        "e / a",
        {"e": "total_equity", "a": "total_assets"},
        "percent",
        "Equity ratio = total equity / total assets",
    ),
    _m(
        "debt_to_capital",
        ("debt to capital", "debt-to-capital ratio", "debt to capitalization"),
        ("债务资本比",),
        "(s + l) / (s + l + e)",
        {"s": "short_term_debt", "l": "long_term_debt", "e": "total_equity"},
        "ratio",
        "Debt / capital = total debt / (total debt + total equity), total debt = short-term + long-term debt",
        ("t / (t + e)", {"t": "total_debt", "e": "total_equity"}),
    ),
    _m(
        "eps_growth",
        ("eps growth", "earnings per share growth", "change in diluted eps", "change in eps"),
        ("每股收益增长率",),
        "(a - b) / b",
        {"a": "eps_diluted", "b": "eps_diluted@t-1"},
        "percent",
        "EPS growth = (diluted EPS this year - last year) / last year",
    ),
    _m(
        "dps_growth",
        ("dividend per share growth", "dividend growth", "change in dividends per share"),
        ("每股股利增长率",),
        "(a - b) / b",
        {"a": "dividends_per_share", "b": "dividends_per_share@t-1"},
        "percent",
        "Dividend per share growth = (dividends per share this year - last year) / last year",
    ),
    _m(
        "dps_payout_ratio",
        ("dividends per share to eps", "dividend payout ratio per share", "dps/eps"),
        ("每股股利支付率",),
        "d / e",
        {"d": "dividends_per_share", "e": "eps_diluted"},
        "percent",
        "Payout ratio (per share) = dividends declared per share / diluted EPS",
        ("d / e", {"d": "dividends_per_share", "e": "eps_basic"}),
    ),
    _m(
        "total_payout_ratio",
        ("total payout ratio", "shareholder payout ratio", "total shareholder payout"),
        (),
        "(d + b) / n",
        {"d": "dividends_paid", "b": "share_repurchases", "n": "net_income"},
        "percent",
        "Total payout ratio = (cash dividends paid + share repurchases) / net income",
    ),
    _m(
        "gross_profit_growth",
        ("gross profit growth", "change in gross profit"),
        ("毛利增长率",),
        "(a - b) / b",
        {"a": _GP, "b": f"{_GP}@t-1"},
        "percent",
        "Gross profit growth = (gross profit this year - last year) / last year",
    ),
    _m(
        "operating_cash_flow_margin",
        ("operating cash flow margin", "cash flow margin"),
        ("经营现金流利润率",),
        "o / s",
        {"o": "operating_cash_flow", "s": _REV},
        "percent",
        "Operating cash flow margin = cash from operations / revenue",
    ),
    _m(
        "capex_to_depreciation",
        ("capex to depreciation", "capex to d&a", "reinvestment rate"),
        (),
        "c / d",
        {"c": "capital_expenditure", "d": "depreciation_amortization"},
        "ratio",
        "Capex / D&A = capital expenditure / depreciation and amortization",
    ),
    _m(
        "pretax_margin",
        ("pretax margin", "pre-tax margin", "pretax profit margin"),
        ("税前利润率",),
        "p / s",
        {"p": "income_before_tax", "s": _REV},
        "percent",
        "Pretax margin = income before income taxes / revenue",
    ),
    _m(
        "loan_to_deposit",
        ("loan-to-deposit ratio", "loan to deposit ratio", "loans to deposits"),
        ("存贷比",),
        "l / d",
        {"l": "loans", "d": "deposits"},
        "percent",
        "Loan-to-deposit ratio = net loans / total deposits",
    ),
    _m(
        "cost_income_ratio",
        ("efficiency ratio", "cost-income ratio", "cost to income ratio"),
        ("成本收入比",),
        "x / (n + o)",
        {"x": "noninterest_expense", "n": "net_interest_income", "o": "noninterest_income"},
        "percent",
        "Efficiency ratio = noninterest expense / (net interest income + noninterest income)",
    ),
    _m(
        "net_gearing",
        ("net gearing", "net debt to equity", "net gearing ratio"),
        ("净负债率",),
        "(s + l - c) / e",
        {"s": "short_term_debt", "l": "long_term_debt", "c": "cash", "e": "total_equity"},
        "percent",
        "Net gearing = (short-term debt + long-term debt - cash and cash equivalents) / total equity",
        ("(t - c) / e", {"t": "total_debt", "c": "cash", "e": "total_equity"}),
    ),
    _m(
        "payables_turnover",
        ("payables turnover", "accounts payable turnover"),
        ("应付账款周转率",),
        "c / p",
        {"c": _COGS, "p": "accounts_payable@avg"},
        "times",
        "Payables turnover = cost of goods sold / average accounts payable (opening and closing)",
    ),
    _m(
        "liabilities_to_equity",
        ("liabilities to equity", "total liabilities to equity"),
        ("产权比率",),
        "l / e",
        {"l": "total_liabilities", "e": "total_equity"},
        "ratio",
        "Liabilities / equity = total liabilities / total equity",
    ),
    _m(
        "long_term_debt_to_equity",
        ("long-term debt to equity", "long term debt to equity"),
        (),
        "l / e",
        {"l": "long_term_debt", "e": "total_equity"},
        "ratio",
        "Long-term debt / equity = long-term debt / total equity",
    ),
)

METRICS: dict[str, Metric] = {m.id: m for m in _LIST}


def _name_pattern(name: str) -> re.Pattern[str]:
    if re.search(r"[\u4e00-\u9fff]", name):
        return re.compile(re.escape(name))
    body = re.escape(name).replace(r"\ ", r"\s+")
    # "change in operating income" is growth, but not "change in operating income % margin".
    return re.compile(rf"(?<![a-z&]){body}(?![a-z&])(?!\s*%?\s*margin)", re.IGNORECASE)


_NAMES = sorted(((n, m) for m in _LIST for n in (*m.en, *m.zh)), key=lambda x: -len(x[0]))
_PATTERNS = [(_name_pattern(n), m) for n, m in _NAMES]


def metrics_in_text(text: str) -> list[Metric]:
    """Metrics a question names, each once, in the order the question names them; a longer name wins over a
    shorter one inside it ("EBITDA margin" is not "EBITDA"). A name that is only the term a definition in the
    question defines ("Define unadjusted EBITDA as ...") comes last: the question asks about something else."""
    defined = [m.span(g) for m in _DEFINITION.finditer(text) for g in ("name1", "name2") if m.group(g)]
    hits: list[tuple[bool, int, Metric]] = []
    taken: list[tuple[int, int]] = []
    matches = [(m.start(), m.end(), metric) for pattern, metric in _PATTERNS for m in pattern.finditer(text)]
    # Of overlapping names the one ending last wins, then the longest: English puts the head noun last
    # ("unadjusted EBITDA less capex" is EBITDA less capex, "unadjusted EBITDA % margin" a margin).
    for start, end, metric in sorted(matches, key=lambda x: (-x[1], x[0])):
        if any(start < e and end > s for s, e in taken):
            continue
        taken.append((start, end))
        in_definition = any(s <= start and end <= e for s, e in defined)
        hits.append((in_definition, start, metric))
    found: list[Metric] = []
    for _, _, metric in sorted(hits, key=lambda h: (h[0], h[1])):
        if metric not in found:
            found.append(metric)
    return found


def compute(metric: Metric, lookup: Callable[[str, str], float | None]) -> Computed | None:
    """The metric from looked-up amounts, or None when an input is missing (after the alternatives) or a
    division by zero."""
    for expression, inputs in ((metric.expression, metric.inputs), *metric.alternatives):
        values: dict[str, float] = {}
        used: dict[str, tuple[str, str, float]] = {}
        shown: dict[str, str] = {}
        for letter, item in inputs.items():
            value = _input_value(item, lookup)
            if value is None:
                break
            values[letter] = value
            used[letter] = (item.concept, item.period, value)
            shown[letter] = _show_number(value)
        else:
            try:
                result = formulas.evaluate(expression, values)
            except ZeroDivisionError:
                return None
            filled = re.sub(r"\b([a-z])\b", lambda m, shown=shown: shown.get(m.group(1), m.group(1)), expression)
            filled = filled.replace("*", "x")
            out = _show_result(result, metric.unit)
            return Computed(result, metric.unit, f"{filled} = {out}", used)
    return None


def _input_value(item: Input, lookup: Callable[[str, str], float | None]) -> float | None:
    def one(period: str) -> float | None:
        value = lookup(item.concept, period)
        if value is None:
            return None
        return abs(value) if item.concept in _MAGNITUDE else value

    if item.period == "avg":
        now, before = one("t"), one("t-1")
        return None if now is None or before is None else (now + before) / 2
    if item.period == "delta":
        now, before = one("t"), one("t-1")
        return None if now is None or before is None else now - before
    return one(item.period)


def _show_number(value: float) -> str:
    """A figure as the formula shows it: in the lookup's own scale, grouped, no invented unit."""
    if value == int(value) and abs(value) < 1e15:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.4g}"


def _show_result(value: float, unit: str) -> str:
    if unit == "percent":
        return f"{value * 100:.1f} %"
    if unit == "days":
        return f"{value:,.1f} days"
    if unit == "times":
        return f"{value:,.2f}x"
    if unit == "ratio":
        return f"{value:,.2f}"
    return _show_number(value)


# "X is defined as: <expression>", "Define X as <expression>", "X here is defined as: (<expression>)".
_DEFINITION = re.compile(
    r"(?:(?P<name1>[A-Za-z][\w&%()\- ]{1,60}?)\s+(?:is|here is)\s+defined\s+as"
    r"|define\s+(?P<name2>[A-Za-z][\w&%()\- ]{1,60}?)\s+as)"
    r"\s*:?\s*(?P<expr>[^.?;]+?(?:\.\d[^.?;]*)*)(?=[.?;](?:\s|$)|$)",
    re.IGNORECASE,
)
_ITEM_SPLIT = re.compile(
    r"(\(|\)|\s[+\-*/x]\s|[+*/]|\s-\s|\bdivided by\b|\bplus\b|\bminus\b|\bless\b|\btimes\b)", re.IGNORECASE
)
_OP_WORDS = {"divided by": "/", "plus": "+", "minus": "-", "less": "-", "times": "*", "x": "*"}


def definition_in_question(text: str) -> Metric | None:
    """A metric defined in the question, its items read as concepts and periods, or None."""
    match = _DEFINITION.search(text)
    if not match:
        return None
    name = (match.group("name1") or match.group("name2") or "").strip()
    expr_text = match.group("expr").strip()
    years = [int(y) for y in re.findall(r"(?:19|20)\d{2}", expr_text)]
    latest = max(years) if years else None
    pieces = [p for p in _ITEM_SPLIT.split(expr_text) if p and p.strip()]
    expression: list[str] = []
    inputs: dict[str, Input] = {}
    letters = iter("abcdefghijklmnopqrstuvw")
    for piece in pieces:
        token = piece.strip()
        low = token.lower()
        if token in "()+-*/":
            expression.append(token)
            continue
        if low in _OP_WORDS:
            expression.append(_OP_WORDS[low])
            continue
        if re.fullmatch(r"\d+(?:\.\d+)?", token):
            expression.append(token)
            continue
        concepts = concepts_in_text(token)
        if not concepts:
            return None
        period = "t"
        if re.search(r"\baverage\b|\bavg\b", low):
            period = "avg"
        elif re.search(r"\bchange in\b|\bincrease in\b", low):
            period = "delta"
        elif latest is not None:
            named = [int(y) for y in re.findall(r"(?:19|20)\d{2}", token)]
            if named and max(named) < latest:
                period = "t-1"
        letter = next(letters)
        inputs[letter] = Input(concepts[0], period)
        expression.append(letter)
    expr = " ".join(expression)
    try:
        formulas.names(expr)
    except SyntaxError:
        return None
    name = re.sub(r"^the\s+", "", name, flags=re.IGNORECASE)
    return Metric(
        f"defined:{name.lower()}",
        (name,),
        (),
        expr,
        inputs,
        _defined_unit(name, expr, text),
        f"{name} = {' '.join(expr_text.split())} (as the question defines it)",
    )


def _defined_unit(name: str, expression: str, question: str) -> str:
    """The unit the question asks for, else the library's for a metric of that name, else from the form."""
    divides = "/" in expression
    if divides and re.search(r"in units of percents?|as a %|as a percent|percentage", question, re.IGNORECASE):
        return "percent"
    same = metrics_in_text(name)
    if same:
        return same[0].unit
    if re.search(r"\b36[05]\b", expression):
        return "days"
    return "ratio" if divides else "currency"
