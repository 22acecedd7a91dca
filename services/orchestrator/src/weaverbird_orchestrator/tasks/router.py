"""Which task a question asks for: a lookup, a comparison or calculation, a JSON extraction, or an
analysis with a chart. Rules on the wording (English and Chinese) decide in microseconds; the model can
decide instead (one short call, ORCHESTRATOR_TASK_ROUTING=llm). README, "Questions beyond one lookup",
compares the two on a labelled set.

Order matters: asking for JSON or a chart names the output outright, so those win over the arithmetic
words an extraction or analysis request may also contain."""

from __future__ import annotations

import re
from dataclasses import dataclass

from weaverbird_orchestrator.domain import Task
from weaverbird_orchestrator.tasks.llm import Generator, complete

_EXTRACTION = re.compile(
    r"\bjson\b|\bextract\b|\{[^{}]*:[^{}]*\}|\bkey[- ]value\b|\bas a (?:table|list of pairs|dict)"
    r"|提取|抽取|以\s*\{|格式输出|键值|字典",
    re.IGNORECASE,
)
_ANALYSIS = re.compile(
    r"\bchart\b|\bplot\b|\bgraph\b|\bvisuali[sz]e\b|\bpie\b|\bbar chart|\bline chart"
    r"|\banaly[sz]e\b|\banalysis\b|\breport on\b|\btrend\b|\bbreakdown\b|\bover the (?:last|past) \w+ years"
    r"|图表|饼图|柱状图|折线图|画图|作图|可视化|分析|趋势|走势|报告|构成",
    re.IGNORECASE,
)
_CALCULATION = re.compile(
    r"\bhow much (?:higher|lower|more|less|bigger|smaller|did .* (?:grow|change|increase|decrease|rise|fall|decline))"
    r"|\bdifference\b|\bchange[sd]?\b|\bgrowth\b|\bgrow\b|\bgrew\b|\bincrease[sd]?\b|\bdecrease[sd]?\b"
    r"|\bdecline[sd]?\b|\bratio\b|\bcompare[sd]?\b|\bcompared\b|\bversus\b|\bvs\.?\b|\baverage\b|\bsum of\b"
    r"|\bcalculate\b|\bcompute\b|\bpercentage of\b|\bas a percent(?:age)? of\b|\bshare of\b|\bcagr\b"
    r"|\bmultiple\b|\bper share\b.*\bdivided\b|\bhigher than\b|\blower than\b|\bmore than\b|\bless than\b"
    r"|\btimes (?:larger|bigger|higher)\b|\bturnover\b|\bcoverage\b|\bmargin of\b|\byear[- ]over[- ]year\b"
    r"|增长|增加|减少|下降|下滑|上升|变化|变动|相比|比较|对比|高多少|低多少|多多少|少多少|差额|差值|多少倍|倍数"
    r"|比率|平均|合计|总和|计算|同比|环比|百分点",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TaskChoice:
    task: Task
    decided_by: str = "rules"
    # The words that decided it (empty for a lookup): what a user or a test can check the choice by.
    evidence: str = ""


def classify(question: str) -> TaskChoice:
    """The task the question's wording asks for; a lookup when nothing else is asked."""
    for task, pattern in ((Task.EXTRACTION, _EXTRACTION), (Task.ANALYSIS, _ANALYSIS), (Task.CALCULATION, _CALCULATION)):
        if m := pattern.search(question):
            return TaskChoice(task, "rules", m.group(0))
    return TaskChoice(Task.LOOKUP, "rules")


_WORDS = {
    "lookup": Task.LOOKUP,
    "calculation": Task.CALCULATION,
    "comparison": Task.CALCULATION,
    "extraction": Task.EXTRACTION,
    "json": Task.EXTRACTION,
    "analysis": Task.ANALYSIS,
    "chart": Task.ANALYSIS,
}


def parse_task_word(text: str) -> Task | None:
    """The task the model named (its first known word), or None."""
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in _WORDS:
            return _WORDS[word]
    return None


async def classify_with_llm(generator: Generator, question: str, language: str) -> Task:
    """The model's choice (task "classify"); the rules' when its answer names no task."""
    completion = await complete(generator, "classify", question, (), language, max_tokens=4)
    return parse_task_word(completion.text) or classify(question).task
