# ruff: noqa: E501  (the request table below keeps one request and its gold answer per line)
"""JSON extraction and chart data with the real model: validation, repair, and what the user is left with.

`python -m weaverbird_eval.extraction --llm-endpoint http://127.0.0.1:8091`

30 requests written for this measurement (15 English over TAT-QA dev tables, 15 Chinese over Fin-Eva
contexts, each set 8 JSON extractions and 7 charts) go through the orchestrator's own steps
(tasks/extraction.extract_json, tasks/chart.chart_spec) with the generator's task prompts, streamed
from an OpenAI-compatible server. Passages are what retrieval would hand over: a TAT-QA table with the
first two paragraphs of its report; a Fin-Eva context with one unrelated context beside it (in turn
before and after it), so a value copied from the wrong passage shows.

Each request carries a hand-read gold answer (the values as the context states them; null for a key the
context does not hold), so beyond the validator's verdict the report says whether a *valid* output is
also *right*: validation checks keys and that figures are in the passages, not that the right row was
copied. Runs with the deployment's few-shot setting (2 examples from the banks) and without examples.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from weaverbird_generator.context_focus import focus
from weaverbird_generator.llm_client import ChatClient
from weaverbird_generator.prompt import Passage as PromptPassage
from weaverbird_generator.settings import LOCAL_CONTEXT_BUDGET
from weaverbird_generator.tasks import task_module
from weaverbird_generator.tasks.common import Example as PromptExample
from weaverbird_generator.tasks.common import TaskRequest
from weaverbird_orchestrator.domain import Example, GenerationDone, Passage, Task, Turn
from weaverbird_orchestrator.numeric_check import answer_figures, mentions
from weaverbird_orchestrator.tasks.chart import ChartOutcome, chart_spec
from weaverbird_orchestrator.tasks.examples import default_bank
from weaverbird_orchestrator.tasks.extraction import (
    ExtractionOutcome,
    extract_json,
    figure_text,
    first_json_object,
    keys_from_question,
    unsupported_figures,
)

from weaverbird_eval import datasets

DEFAULT_DATA = Path("..") / "shared" / "data"
DEFAULT_OUT = Path("benchmarks") / "results" / "eval"


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


# ---------------------------------------------------------------------------------------------
# The model, in-process: the generator's task prompts over an OpenAI-compatible server
# ---------------------------------------------------------------------------------------------


@dataclass
class Call:
    task: str
    text: str
    seconds: float
    prompt_tokens: int
    completion_tokens: int


@dataclass
class ModelGenerator:
    """What the generator service does for a task call (prompt module, optional focus, stream), without gRPC.

    Temperature 0 is sent as 0 (greedy); the service would send its default instead (see report).
    """

    client: ChatClient
    context_budget: int = LOCAL_CONTEXT_BUDGET
    calls: list[Call] = field(default_factory=list)

    async def generate(
        self,
        question: str,
        passages: list[Passage],
        language: str,
        temperature: float,
        max_tokens: int,
        *,
        task: str = "",
        examples: Sequence[Example] = (),
        instruction: str = "",
        history: Sequence[Turn] = (),
    ) -> AsyncIterator[str | GenerationDone]:
        module = task_module(task)
        numbered = [PromptPassage(i, p.title, p.text, p.source) for i, p in enumerate(passages, start=1)]
        if module.FOCUS and self.context_budget:
            numbered = focus(question, numbered, self.context_budget)
        request = TaskRequest(
            question,
            numbered,
            language,
            [PromptExample(e.question, e.answer) for e in examples],
            instruction,  # type: ignore[arg-type]
        )
        started, parts = time.perf_counter(), []
        done = GenerationDone("stop", 0, 0, "eval")
        async for delta in self.client.stream(
            module.build_messages(request), max_tokens=max_tokens or module.MAX_TOKENS, temperature=temperature
        ):
            if delta.is_final:
                done = GenerationDone(delta.finish_reason or "stop", delta.prompt_tokens or 0,
                                      delta.completion_tokens or 0, "eval")  # fmt: skip
            elif delta.text:
                parts.append(delta.text)
                yield delta.text
        text = "".join(parts)
        self.calls.append(Call(task, text, time.perf_counter() - started, done.prompt_tokens, done.completion_tokens))
        yield done


def examples_for(task: Task, language: str, question: str, k: int) -> tuple[list[Example], str]:
    """The deployment's few-shot examples (the orchestrator's example bank), and how they were chosen."""
    if k == 0:
        return [], "none"
    return list(default_bank().select(task, language, question, k)), "example bank (bigram similarity)"


# ---------------------------------------------------------------------------------------------
# Scoring against the gold answers
# ---------------------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", str(text).casefold())


def _magnitudes(value: Any) -> list[tuple[float, float]]:
    """(as written, scale applied) of every number of a value, year-like ones too ("2100" USD/t)."""
    text = figure_text(value)
    if not text:
        return []
    found = [(abs(f.raw), abs(f.value)) for f in answer_figures(text)]
    years = [text[m.start : m.end] for m in mentions(text) if not m.figure]
    return found + [(float(y), float(y)) for y in years if re.fullmatch(r"\d{4}", y)]


def same_value(model: Any, gold: Any) -> bool:
    """Every figure of the gold value is among the model value's (as written, or with its scale applied)."""
    if gold is None:
        return model is None
    found, wanted = _magnitudes(model), _magnitudes(gold)
    return bool(wanted) and all(
        any(math.isclose(m[0], w[0], rel_tol=1e-6) or math.isclose(m[1], w[1], rel_tol=1e-6) for m in found)
        for w in wanted
    )


def _find(name: str, options: Sequence[str]) -> str | None:
    """The option naming the same thing (normalised): equal, else the shortest one containing it ("铜" finds
    "LME期铜", "进出口" finds "跨境电商进出口" before "出口"), else the longest one it contains."""
    wanted = _norm(name)
    exact = [o for o in options if _norm(o) == wanted]
    if exact:
        return exact[0]
    longer = [o for o in options if wanted in _norm(o)]
    shorter = [o for o in options if _norm(o) and _norm(o) in wanted]
    return min(longer, key=len, default=None) or max(shorter, key=len, default=None)


def score_json(value: Any, gold: dict[str, Any]) -> tuple[int, int]:
    """(gold values the output has right, gold values)."""
    if not isinstance(value, dict):
        return 0, len(gold)
    right = 0
    for name, wanted in gold.items():
        key = _find(name, [str(k) for k in value])
        if key is None:
            right += wanted is None  # an absent key is right only where the context has no value
        else:
            right += same_value(value[key], wanted)
    return right, len(gold)


def score_chart(outcome: ChartOutcome, gold: dict[str, Any]) -> tuple[int, int, bool]:
    """(gold values right, gold values, type as expected)."""
    total = sum(len(s) for s in gold["series"])
    spec = outcome.spec
    if spec is None:
        return 0, total, False
    right = 0
    for wanted in gold["series"]:
        best = 0
        for series in spec.series:
            hits = 0
            for category, value in wanted.items():
                found = _find(category, spec.categories)
                if found is not None:
                    got = series.values[spec.categories.index(found)]
                    hits += math.isclose(got, value, rel_tol=5e-3)
            best = max(best, hits)
        right += best
    return right, total, spec.type == gold["type"]


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------


@dataclass
class Record:
    case: str
    language: str
    kind: str
    examples: int
    outcome: str  # "first_try" | "repaired" | "invalid"
    errors: list[str]
    notes: list[str]
    result: Any  # the JSON value or the chart spec
    gold_right: int
    gold_total: int
    type_expected: bool | None
    first_output_figures: int  # figures in the model's first output
    first_output_unsupported: int  # of which no passage holds
    dropped_values: int  # chart values dropped as unsupported
    calls: int
    seconds: float
    outputs: list[str]
    examples_from: str = ""


def _first_output_figures(text: str, passages: Sequence[str]) -> tuple[int, int]:
    parsed = first_json_object(text).value
    leaves: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        else:
            leaves.append(node)

    walk(parsed)
    figures = sum(len(_magnitudes(leaf)) for leaf in leaves)
    return figures, sum(len(unsupported_figures(leaf, passages)) for leaf in leaves)


async def run_case(case: Case, passages: list[Passage], client: ChatClient, k: int) -> Record:
    generator = ModelGenerator(client)
    texts = [p.text for p in passages]
    started = time.perf_counter()
    if case.kind == "json":
        examples, chosen = examples_for(Task.EXTRACTION, case.language, case.question, k)
        keys = keys_from_question(case.question)
        got: ExtractionOutcome = await extract_json(generator, case.question, passages, case.language, keys, examples)
        outcome = "first_try" if got.valid and not got.repaired else "repaired" if got.valid else "invalid"
        right, total = score_json(got.value, case.gold)
        result, errors, notes, type_expected, dropped = got.value, got.errors, got.notes, None, 0
    else:
        examples, chosen = examples_for(Task.ANALYSIS, case.language, case.question, k)
        chart = await chart_spec(generator, case.question, passages, case.language, examples)
        outcome = "invalid" if chart.spec is None else "repaired" if chart.repaired else "first_try"
        right, total, type_expected = score_chart(chart, case.gold)
        result = asdict(chart.spec) if chart.spec else None
        errors, notes = chart.errors, chart.notes
        dropped = sum("dropped" in e and "series" not in e.split(":")[0] for e in chart.errors)
    seconds = time.perf_counter() - started
    first = generator.calls[0].text if generator.calls else ""
    figures, unsupported = _first_output_figures(first, texts)
    return Record(
        case.id, case.language, case.kind, k, outcome, list(errors), list(notes), result, right, total,
        type_expected, figures, unsupported, dropped, len(generator.calls), round(seconds, 1),
        [c.text for c in generator.calls], chosen,
    )  # fmt: skip


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole}" + (f" ({part / whole:.0%})" if whole else "")


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    groups = sorted({(r.examples, r.kind, r.language) for r in records})
    for k, kind, language in groups:
        rs = [r for r in records if (r.examples, r.kind, r.language) == (k, kind, language)]
        valid = [r for r in rs if r.outcome != "invalid"]
        entry = {
            "examples": k,
            "kind": kind,
            "language": language,
            "requests": len(rs),
            "valid_first_try": sum(r.outcome == "first_try" for r in rs),
            "valid_after_repair": sum(r.outcome == "repaired" for r in rs),
            "invalid_reported": sum(r.outcome == "invalid" for r in rs),
            "valid_and_all_gold_right": sum(r.gold_right == r.gold_total for r in valid),
            "valid_but_a_gold_value_missed": sum(r.gold_right < r.gold_total for r in valid),
            "gold_values_right": sum(r.gold_right for r in rs),
            "gold_values": sum(r.gold_total for r in rs),
            "first_output_figures": sum(r.first_output_figures for r in rs),
            "first_output_figures_unsupported": sum(r.first_output_unsupported for r in rs),
            "calls": sum(r.calls for r in rs),
            "seconds_p50": round(statistics.median(r.seconds for r in rs), 1),
        }
        if kind == "chart":
            entry["type_as_expected"] = sum(bool(r.type_expected) for r in rs)
            entry["values_dropped"] = sum(r.dropped_values for r in rs)
        out[f"k{k}-{kind}-{language}"] = entry
    return out


def markdown(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        "# JSON extraction and chart data (issue 15, item 3)",
        "",
        f"Model {meta['model']} at {meta['endpoint']}, temperature 0, {meta['requests']} requests "
        f"(15 EN over TAT-QA dev tables, 15 ZH over Fin-Eva contexts; each 8 JSON + 7 charts), with "
        f"few-shot examples per prompt: {' and '.join(str(k) for k in meta['runs'])} "
        f"(chosen by: {', '.join(meta['examples_from']) or '-'}); {meta['done']} runs done. "
        "Shared CPU server (other jobs running): seconds are contended.",
        "",
        "Valid = the validator accepted it (keys, figures in the passages; charts: a spec survived). "
        "Gold = hand-read values of the context: a valid output can still hold a wrong (but real) figure.",
        "",
        "| examples | kind | lang | requests | valid 1st try | valid after repair | invalid (reported) | "
        "valid & all gold right | valid, a gold value wrong or left out | gold values right | figures in 1st outputs "
        "not in passages | chart type as expected | chart values dropped | calls | s/request p50 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary.values():
        lines.append(
            f"| {s['examples']} | {s['kind']} | {s['language']} | {s['requests']} | {s['valid_first_try']} | "
            f"{s['valid_after_repair']} | {s['invalid_reported']} | {s['valid_and_all_gold_right']} | "
            f"{s['valid_but_a_gold_value_missed']} | {_share(s['gold_values_right'], s['gold_values'])} | "
            f"{_share(s['first_output_figures_unsupported'], s['first_output_figures'])} | "
            f"{s.get('type_as_expected', '-')} | {s.get('values_dropped', '-')} | {s['calls']} | "
            f"{s['seconds_p50']} |"
        )
    return "\n".join(lines) + "\n"


async def run(args: argparse.Namespace) -> int:
    cases = [c for c in CASES if not args.cases or c.id in args.cases.split(",")]
    passages = case_passages(cases, args.data)
    client = ChatClient(args.llm_endpoint, timeout_s=args.timeout)
    slots = asyncio.Semaphore(args.concurrency)
    ks = sorted({int(k) for k in args.examples.split(",")}, reverse=True)

    records: list[Record] = []

    async def one(case: Case, k: int) -> None:
        async with slots:
            record = await run_case(case, passages[case.id], client, k)
            print(f"{case.id} k={k}: {record.outcome} gold {record.gold_right}/{record.gold_total} "
                  f"({record.seconds}s, {record.calls} calls)", flush=True)  # fmt: skip
            records.append(record)
            # Written after every request: an interrupted run still leaves its partial report.
            write_report(records, args, len(cases), ks)

    await asyncio.gather(*(one(c, k) for k in ks for c in cases))
    print(write_report(records, args, len(cases), ks))
    return 0


def write_report(records: Sequence[Record], args: argparse.Namespace, requests: int, ks: Sequence[int]) -> str:
    """extraction.md and extraction.json for the records so far; returns the markdown."""
    summary = summarize(records)
    meta = {
        "model": args.model,
        "endpoint": args.llm_endpoint,
        "requests": requests,
        "done": len(records),
        "examples": max(ks),
        "runs": list(ks),
        "examples_from": sorted({r.examples_from for r in records if r.examples}),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    table = markdown(summary, meta)
    (args.out / "extraction.md").write_text(table, encoding="utf-8")
    payload = {"meta": meta, "summary": summary, "records": [asdict(r) for r in records]}
    (args.out / "extraction.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m weaverbird_eval.extraction", description=__doc__)
    parser.add_argument("--llm-endpoint", default="http://127.0.0.1:8091", help="OpenAI-compatible server")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct (q4_k_m)", help="label for the report")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared evaluation data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--examples", default="2,0", help="few-shot examples per prompt, comma list of runs")
    parser.add_argument("--cases", default="", help="comma list of case ids (default: all)")
    parser.add_argument("--concurrency", type=int, default=2, help="requests in flight at once")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per model call")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
