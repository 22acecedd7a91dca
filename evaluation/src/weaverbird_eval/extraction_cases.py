# ruff: noqa: E501  (the request table below keeps one request and its gold answer per line)
"""The 30 requests of the extraction measurement (extraction.py), their gold answers and passages.

Gold answers are hand-read off the contexts (null for a key the context does not hold). Passages are what
retrieval would hand over: a TAT-QA table with the first two paragraphs of its report; a Fin-Eva context
with one unrelated context beside it (in turn before and after it), so a value copied from the wrong
passage shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weaverbird_orchestrator.domain import Passage

from weaverbird_eval import datasets

# ---------------------------------------------------------------------------------------------
# The requests (written for this measurement) and their gold answers (read off the contexts)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    language: str
    kind: str  # "json" | "chart"
    context: str  # "tatqa:<uid prefix>" or "fineva:<file stem>:<row id>"
    question: str
    # json: {key: value or None}; chart: {"type": ..., "series": [{category: value}, ...]}
    gold: dict[str, Any]


EN = "en"
ZH = "zh"
DOC, EVENT = "financial_document_extraction", "financial_event_interpretation"

CASES: tuple[Case, ...] = (
    # English: TAT-QA dev tables.
    Case("en-json-1", EN, "json", "tatqa:3ffd9053", "Extract the 2019 sales by contract type as {contract type: 2019 sales}.",
         {"Fixed Price": "1,452.4", "Other": "44.1"}),
    Case("en-json-2", EN, "json", "tatqa:6bf238a5", "Return the 2019 income statement expense as JSON with keys defined contribution schemes, defined benefit schemes.",
         {"defined contribution schemes": "166", "defined benefit schemes": "57"}),
    Case("en-json-3", EN, "json", "tatqa:cc4f089d", "Extract the fiscal 2019 valuation assumptions as JSON with keys expected life, risk-free interest rate, volatility, dividend yield.",
         {"expected life": "4.6", "risk-free interest rate": "2.7%", "volatility": "24%", "dividend yield": "1.7%"}),
    Case("en-json-4", EN, "json", "tatqa:5127ef77", "Extract fiscal year 2018 net sales by region as {region: net sales}.",
         {"APAC": "479,987", "EMEA": "277,898", "Americas": "259,105", "JPKO": "183,191"}),
    Case("en-json-5", EN, "json", "tatqa:0f012382", "Give the pro forma results for fiscal 2019 as JSON with keys revenues, net income, number of employees.",
         {"revenues": "$1,073.3", "net income": "$106.4", "number of employees": None}),
    Case("en-json-6", EN, "json", "tatqa:b05fde22", "Extract the 2019 figures as JSON with keys adjusted operating profit, net debt, net debt to EBITDA.",
         {"adjusted operating profit": "282.7", "net debt": "295.2", "net debt to EBITDA": "0.9"}),
    Case("en-json-7", EN, "json", "tatqa:bcbd7783", "Extract Q4 2019 operating revenues by segment as {segment: Q4 2019 revenue}.",
         {"Bell Wireless": "2,493", "Bell Wireline": "3,138", "Bell Media": "879"}),
    Case("en-json-8", EN, "json", "tatqa:22f634eb", "Return the 2018 stock-based compensation cost as JSON with keys cost, selling general and administrative, research development and engineering.",
         {"cost": "$82", "selling general and administrative": "361", "research development and engineering": "67"}),
    Case("en-chart-1", EN, "chart", "tatqa:3ffd9053", "Draw a line chart of total sales from 2017 to 2019.",
         {"type": "line", "series": [{"2017": 1107.7, "2018": 1202.9, "2019": 1496.5}]}),
    Case("en-chart-2", EN, "chart", "tatqa:285a1ced", "Show the 2019 other operating expenses by component as a bar chart.",
         {"type": "bar", "series": [{"Impairment charges": 94.2, "Net losses on sales or disposals of assets": 45.1, "Other operating expenses": 27.0}]}),
    Case("en-chart-3", EN, "chart", "tatqa:5127ef77", "Chart the share of each region in fiscal 2018 net sales.",
         {"type": "pie", "series": [{"APAC": 40.0, "EMEA": 23.1, "Americas": 21.6, "JPKO": 15.3}]}),
    Case("en-chart-4", EN, "chart", "tatqa:00a5764e", "Plot the expected volatility over the years.",
         {"type": "line", "series": [{"2017": 27.1, "2018": 28.7, "2019": 28.3}]}),
    Case("en-chart-5", EN, "chart", "tatqa:22f634eb", "Compare pre-tax and net stock-based compensation cost for 2017 to 2019 in a chart.",
         {"type": "line", "series": [{"2017": 534, "2018": 510, "2019": 679}, {"2017": 403, "2018": 393, "2019": 524}]}),
    Case("en-chart-6", EN, "chart", "tatqa:47fb3538", "Draw a pie chart of the 2019 fees: statutory audit fees versus audit-related fees.",
         {"type": "pie", "series": [{"Statutory Audit": 4105000, "Audit-Related Fees": 209005}]}),
    Case("en-chart-7", EN, "chart", "tatqa:bd57880a", "Make a bar chart of employee severance and related costs by year.",
         {"type": "bar", "series": [{"2017": 724, "2018": 7845, "2019": 7169}]}),
    # Chinese: Fin-Eva contexts.
    Case("zh-json-1", ZH, "json", f"fineva:{DOC}:1", "以{金属: 收盘价}的格式提取LME各金属的收盘价。",
         {"铜": "8491美元/吨", "铝": "2255美元/吨", "锌": "2410美元/吨", "铅": "2100美元/吨", "镍": "21054美元/吨", "锡": "28363美元/吨"}),
    Case("zh-json-2", ZH, "json", f"fineva:{DOC}:102", "以JSON格式提取哈尔斯第三季度业绩，键为营业收入、净利润、基本每股收益。",
         {"营业收入": "7.69亿元", "净利润": "1.07亿元", "基本每股收益": "0.24元"}),
    Case("zh-json-3", ZH, "json", f"fineva:{EVENT}:23", "以JSON格式提取密尔克卫2022年业绩，字段为营业收入、净利润、基本每股收益。",
         {"营业收入": "115.76亿元", "净利润": "6.05亿元", "基本每股收益": "3.68元"}),
    Case("zh-json-4", ZH, "json", f"fineva:{DOC}:188", "以{类别: 金额}的格式提取前三季度跨境电商进出口、出口和进口金额。",
         {"进出口": "1.7万亿元", "出口": "1.3万亿元", "进口": "0.4万亿元"}),
    Case("zh-json-5", ZH, "json", f"fineva:{EVENT}:205", "以{股票名称: 净买入金额}的格式提取港股通（沪）方面获净买入的股票。",
         {"美团-W": "3.59亿港元", "中芯国际": "3.1亿港元"}),
    Case("zh-json-6", ZH, "json", f"fineva:{EVENT}:187", "以JSON格式提取截至10月19日的融资余额，键为上交所融资余额、深交所融资余额、两市合计。",
         {"上交所融资余额": "8113.76亿元", "深交所融资余额": "7283.12亿元", "两市合计": "15396.88亿元"}),
    Case("zh-json-7", ZH, "json", f"fineva:{DOC}:48", "以JSON格式提取国联股份的业绩预告，键为净利润、营业收入。",
         {"净利润": "10.05亿元至10.1亿元", "营业收入": None}),
    Case("zh-json-8", ZH, "json", f"fineva:{EVENT}:200", "以JSON格式提取民政部发布的数据，字段为城乡低保对象、低保资金、特困人员。",
         {"城乡低保对象": "3995.2万人", "低保资金": "1436.8亿元", "特困人员": "469.4万人"}),
    Case("zh-chart-1", ZH, "chart", f"fineva:{EVENT}:79", "用饼图展示重庆前三季度三大产业增加值。",
         {"type": "pie", "series": [{"第一产业": 1429.67, "第二产业": 8830.19, "第三产业": 11984.02}]}),
    Case("zh-chart-2", ZH, "chart", f"fineva:{EVENT}:50", "画出2020年至2022年深市现金分红总额的走势图。",
         {"type": "line", "series": [{"2020": 3671, "2021": 4061, "2022": 4267}]}),
    Case("zh-chart-3", ZH, "chart", f"fineva:{DOC}:118", "用柱状图展示LME各金属的收盘价。",
         {"type": "bar", "series": [{"铜": 7991, "铝": 2200, "锌": 2450, "铅": 2054, "镍": 18728, "锡": 24812}]}),
    Case("zh-chart-4", ZH, "chart", f"fineva:{EVENT}:222", "用图表展示全球半导体市场各地区的份额。",
         {"type": "pie", "series": [{"中国": 34.4, "美国": 21.7, "欧洲": 8.5, "日本": 8.3, "其他": 27.1}]}),
    Case("zh-chart-5", ZH, "chart", f"fineva:{EVENT}:154", "用柱状图比较江西前三季度三大产业增加值。",
         {"type": "bar", "series": [{"第一产业": 1376.4, "第二产业": 10373.4, "第三产业": 11903.4}]}),
    Case("zh-chart-6", ZH, "chart", f"fineva:{EVENT}:187", "用图表对比上交所和深交所的融资余额。",
         {"type": "bar", "series": [{"上交所": 8113.76, "深交所": 7283.12}]}),
    Case("zh-chart-7", ZH, "chart", f"fineva:{DOC}:188", "用饼图展示前三季度跨境电商出口和进口的构成。",
         {"type": "pie", "series": [{"出口": 1.3, "进口": 0.4}]}),
)  # fmt: skip

# Unrelated Fin-Eva contexts put beside a Chinese request's own (Fin-Eva row ids in the event file).
DISTRACTORS = ("66", "94", "69", "58")


def _passage(number: int, unit: datasets.Unit) -> Passage:
    return Passage(unit.id, unit.text, 1.0, unit.id, unit.title or "财联社", unit.id, 0, "local")


def case_passages(cases: Sequence[Case], data: Path) -> dict[str, list[Passage]]:
    """The passages each request is asked over, read from the shared data folder."""
    tatqa = {u.id: u for u in datasets.tatqa(data).units}
    fineva = datasets.fineva(data)
    fineva_units = {u.id: u for u in fineva.units}
    by_row = {q.id: fineva_units[next(iter(q.relevant))] for q in fineva.queries}
    out: dict[str, list[Passage]] = {}
    for index, case in enumerate(cases):
        source, _, rest = case.context.partition(":")
        if source == "tatqa":
            table = next(u for uid, u in tatqa.items() if uid.startswith(rest) and uid.endswith("#table"))
            uid = table.id.removesuffix("#table")
            paragraphs = [tatqa[f"{uid}#p{n}"] for n in (1, 2) if f"{uid}#p{n}" in tatqa]
            units = [table, *paragraphs]
        else:
            own = by_row[rest]
            turn = index % len(DISTRACTORS)
            rotated = [by_row[f"{EVENT}:{d}"] for d in DISTRACTORS[turn:] + DISTRACTORS[:turn]]
            distractor = next(u for u in rotated if u.id != own.id)
            units = [own, distractor] if index % 2 == 0 else [distractor, own]
        out[case.id] = [_passage(n, u) for n, u in enumerate(units, start=1)]
    return out
