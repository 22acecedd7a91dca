"""Which task a question asks for: a lookup, a comparison or calculation, a JSON extraction, or an
analysis with a chart. Rules on the wording (English and Chinese) decide in microseconds; the model can
decide instead (one short call, ORCHESTRATOR_TASK_ROUTING=llm), with the rules as its fallback.
`python -m weaverbird_eval.task_routing` compares the two (benchmarks/results/eval/task-routing.md).

Order matters: asking for JSON or a chart names the output outright, so those win over the arithmetic
words an extraction or analysis request may also contain ("extract ... organic growth into JSON",
"a line chart of the growth rate"). A lookup is what is left.

The first cues, written from the dev half of the labelled set only, scored 100 % there and 73 % on the
held-out half: over-fitted. These were revised on the errors of both halves and measured on a fresh part
written before the revision. A fourth part ("report-words", 26 questions) was written before running
the router on it: lookups that name their source (报告 / 年报 / 公告 / "according to the report"), which
a bare 报告 cue had sent to analysis. What the revision taught: a metric's name is no cue. Fund reports state
their "份额净值增长率" and "占基金资产净值比例", banks their "capital ratio", and "报告期" is the reporting
period, not a report to write. So a share, ratio or growth rate counts as a calculation only when nothing
says it is a stated figure, while a question that compares periods, names the arithmetic or gives a
formula always is one."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from weaverbird_orchestrator.domain import Task
from weaverbird_orchestrator.tasks.llm import Generator, complete

log = logging.getLogger(__name__)

# A {key: value} template, with an ASCII or a Chinese colon.
_TEMPLATE = r"\{[^{}]*[:：][^{}]*\}"

_EXTRACTION = re.compile(
    "|".join(
        (
            _TEMPLATE,
            r"(?<![a-z])json(?![a-z])",  # no \b: "以JSON格式" has word characters on both sides
            # "Compute or extract the answer from the cash flow statement" asks for a figure, not JSON.
            r"\bextract\b(?! (?:the |a |an )?(?:answer|figure|value|amount|number)s?\b)",
            r"\bkey[-:]? ?value\b|\bdict(?:ionary)?\b|\bmachine[- ]readable\b",
            r"\bas a (?:table|list of pairs)\b|\blist of objects\b|\binto an? (?:object|array)\b|\bmapping\b",
            r"\bstructured\b",
            r"提取|抽取|以\s*\{|格式输出|键值|字典|结构化",
        )
    ),
    re.IGNORECASE,
)

# The output is a chart: an analysis draws one only when asked (asks_for_chart).
_CHART = (
    r"\bchart\b|\bplot\b|\bgraph\b|\bvisuals?\b|\bvisuali[sz]e\b|\billustrat\w*|\bpie\b",
    r"\bbar chart|\bline chart",
    r"图表|饼图|柱状图|折线图|走势图|一张图|画图|作图|画出|可视化",
)
_CHART_ASKED = re.compile("|".join(_CHART), re.IGNORECASE)

_ANALYSIS = re.compile(
    "|".join(
        (
            *_CHART,
            # The output is an analysis.
            r"\banaly[sz]e\b|\banalysis\b|\banalytical\b|\bassess\b|\bevaluate\b|\bdiscuss\b|\breport on\b",
            r"\btrends?\b|\bevolved?\b|\bdevelop(?:ed)? (?:over|during|since)\b|\bwhat drove\b|\bdrivers\b",
            r"\bstrengths\b|\bweaknesses\b|\bbreakdown\b|\bover the (?:last|past) \w+ years",
            # A report to write ("写一份…报告"); a report named as the source ("根据年度报告", "三季度报告中")
            # is where a lookup's figure stands, and 报告期 is the reporting period of every fund report.
            r"分析|评价|评估|趋势|走势|构成|(?:写|撰写|编写|生成|出具|做|给出|提供)[^，。？?]{0,12}报告(?!期)",
        )
    ),
    re.IGNORECASE,
)

# Arithmetic the question spells out: two figures compared, a change between them, or a formula.
_MORE = r"(?:more|less|fewer|higher|lower|larger|smaller|bigger)"
_CHANGE = r"(?:grow|change|increase|decrease|rise|fall|decline)"
_LINE_ITEM = r"(?:income|assets|liabilities|expenses?|revenue|sales|debt|equity|profit|earnings)"
_CALCULATION = re.compile(
    "|".join(
        (
            rf"\bhow much (?:{_MORE}|did .* {_CHANGE})\b|\bby how much\b|\b{_MORE}\b[^.?]*\b(?:than|or)\b",
            rf"\btimes (?:larger|bigger|higher)\b|\bwhich (?:year|quarter|period|segment|company)\b[^.?]*\b{_MORE}\b",
            r"\bcompare[sd]?\b|\bversus\b|\bvs\.?(?!\w)|\bdifference\b|\bgap\b|\byear[- ]over[- ]year\b",
            r"\bchange[sd]?\b|\bgrow\b|\bgrew\b|\bincrease[sd]?\b|\bdecrease[sd]?\b|\bdecline[sd]?\b",
            r"\baverage\b|\bsum of\b|\bcombined\b|\btotal of\b|\bcalculate\b|\bcompute\b|\bcagr\b",
            r"\bminus\b|\bsubtract\w*|\bdivid(?:e|ed|ing)\b|\bmultiple\b|\bmargin of\b",
            # A formula given with the question: "based on X and Y", "operating income over interest expense".
            r"\b(?:based on|using|defined as)\b[^.?]*\b(?:and|over|minus|divided)\b",
            rf"\b{_LINE_ITEM} over (?!the |a |an |\d)",
            # Chinese: 比 / 较 comparing (not 比例, 比率, 比重, 业绩比较基准), a change asked for, named arithmetic.
            r"(?:比(?![例率重较])|较)[^，。？?]*?(?:高|低|多|少|增|减|升|降|大|小)",
            r"相比|对比|比较(?!基准)|同比|环比|超过|相差|差额|差值|之差|[几多]少?倍|倍数",
            r"(?:增长|增加|减少|下降|下滑|上升|提高|降低|变化|变动)(?:了|多少|几)|幅度|降幅|增幅|几成|百分点",
            r"(?:哪一?年|哪个|哪家|哪只)[^，。？?]*?(?:更|最)(?:高|低|多|少|大|小)",
            r"计算|算出|合计|之和|总和|扣除|减去|除以|平均",
        )
    ),
    re.IGNORECASE,
)

# A metric that is often a stated figure (a share, ratio or growth rate): a calculation unless the
# question says it is stated.
_DERIVED = re.compile(
    r"\b(?:percentage|proportion|fraction|share) of\b|\bas a percent(?:age)? of\b|\bratio of\b[^.?]*\bto\b|\bturnover\b"
    r"|\bcoverage\b|\bgrowth\b|占[^，。？?]{1,20}(?:比重|比例|百分比)|增长率",
    re.IGNORECASE,
)
_STATED = re.compile(
    r"\baccording to\b|\breport(?:ed|s)?\b|\bdisclos\w+|\bstate[ds]?\b|报告期|披露",
    re.IGNORECASE,
)

_RULES = ((Task.EXTRACTION, _EXTRACTION), (Task.ANALYSIS, _ANALYSIS), (Task.CALCULATION, _CALCULATION))


@dataclass(frozen=True)
class TaskChoice:
    task: Task
    decided_by: str = "rules"
    # What decided it: the words the rules matched (empty for a lookup), or the model's reply.
    evidence: str = ""


# A part that asks why: a calculation answers the figures, not this ("and what explains the change?").
_EXPLANATION = re.compile(
    r"\bwhy\b|\bexplain\w*|\bwhat (?:drove|caused|accounts? for)\b|\breasons?\b|\bdrivers?\b|\bdue to what\b"
    r"|为什么|为何|原因|解释|驱动因素|是什么导致|由于什么",
    re.IGNORECASE,
)


def asks_for_explanation(question: str) -> bool:
    """Whether the question also asks why (a multi-part question: the calculation, then the reasons)."""
    return bool(_EXPLANATION.search(" ".join(question.split())))


def asks_for_chart(question: str) -> bool:
    """Whether the question asks for a chart ("plot", "bar chart", "柱状图", "画出"): an analysis spends a
    model call on a chart only then (or when the request asks), never on "分析...趋势" alone."""
    return bool(_CHART_ASKED.search(" ".join(question.split())))


def classify(question: str) -> TaskChoice:
    """The task the question's wording asks for; a lookup when nothing else is asked."""
    text = " ".join(question.split())
    for task, pattern in _RULES:
        if m := pattern.search(text):
            return TaskChoice(task, "rules", m.group(0))
    if (m := _DERIVED.search(text)) and not _STATED.search(text):
        return TaskChoice(Task.CALCULATION, "rules", m.group(0))
    return TaskChoice(Task.LOOKUP, "rules")


# The words the classify prompt asks for, plus what a small model says instead (a synonym, or Chinese
# when the question was Chinese).
_WORDS = {
    "lookup": Task.LOOKUP,
    "look-up": Task.LOOKUP,
    "look up": Task.LOOKUP,
    "calculation": Task.CALCULATION,
    "calculate": Task.CALCULATION,
    "comparison": Task.CALCULATION,
    "compare": Task.CALCULATION,
    "extraction": Task.EXTRACTION,
    "extract": Task.EXTRACTION,
    "json": Task.EXTRACTION,
    "analysis": Task.ANALYSIS,
    "analyze": Task.ANALYSIS,
    "analyse": Task.ANALYSIS,
    "chart": Task.ANALYSIS,
    "查询": Task.LOOKUP,
    "查找": Task.LOOKUP,
    "计算": Task.CALCULATION,
    "比较": Task.CALCULATION,
    "提取": Task.EXTRACTION,
    "抽取": Task.EXTRACTION,
    "分析": Task.ANALYSIS,
}
_WORD = re.compile(
    rf"(?<![a-z])({'|'.join(re.escape(w) for w in sorted(_WORDS, key=len, reverse=True))})s?(?![a-z])", re.IGNORECASE
)


def parse_task_word(text: str) -> Task | None:
    """The task the model named first in its reply ("Calculation.", "**json**", "分析"), or None."""
    m = _WORD.search(text)
    return _WORDS[m.group(1).lower()] if m else None


async def llm_choice(generator: Generator, question: str, language: str) -> TaskChoice:
    """The model's choice (task "classify"). The rules decide instead, and decided_by says so, when its
    reply names no task or the call fails: routing is an aid, and never the reason a question fails.
    evidence holds the model's reply (or the error)."""
    try:
        completion = await complete(generator, "classify", question, (), language)
    except Exception as exc:  # any peer error: gRPC status, timeout, connection
        log.warning("task classification by the model failed (%s); the rules decide", exc)
        return TaskChoice(classify(question).task, "rules", f"model failed: {exc}")
    reply = completion.text.strip()
    if (task := parse_task_word(reply)) is not None:
        return TaskChoice(task, "llm", reply)
    return TaskChoice(classify(question).task, "rules", reply)


async def classify_with_llm(generator: Generator, question: str, language: str) -> Task:
    """The model's choice of task; the rules' when its reply names no task or the call fails."""
    return (await llm_choice(generator, question, language)).task
