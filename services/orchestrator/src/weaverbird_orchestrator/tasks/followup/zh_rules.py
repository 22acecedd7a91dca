"""Chinese follow-ups made standalone by rules: "那2023年呢？", "净利润呢？", "它的营收是多少？" read
against the previous question (its company, period and metric)."""

from __future__ import annotations

import re

from weaverbird_common.periods import YEAR_DIGITS

from weaverbird_orchestrator.tasks.followup.slots import Names, Span, as_question, company_names, known_company_span

ZH_CUE = re.compile(r"^\s*(?:那么|那|还有|另外|再看看|再问一下|换成|换作|如果是|同样地?|请问)\s*")
_ZH_TAIL = re.compile(r"(?:的情况|的呢|呢|吗|怎么样|如何)?\s*[?？。!！]*\s*$")
# Words that stand for the earlier company: replaced by its name.
ZH_PRONOUN = re.compile(
    r"它们|它|(?<![尤极])其(?![他中余实次])|该公司|这家公司|该集团|该企业|此公司|(?<![子分])公司(?=的)"
)
# Words that point back without naming ("这笔交易", "该项目"): the name goes in front of them.
ZH_POINTER = re.compile(r"这|该|(?<![因如])此(?!外)|上述|双方|对应|同期")
_ZH_PERIOD = re.compile(
    rf"(?P<year>{YEAR_DIGITS}\s*(?:财年|年度|年)|今年|去年|上年|明年)?"
    r"(?P<sub>前三季度|前三季|第?[一二三四1-4]季度|[一二三四1-4]季报|上半年|下半年|全年|半年度|年度"
    r"|\d{1,2}\s*[-—至~]\s*\d{1,2}\s*月份?|\d{1,2}\s*月份?)?"
)
_ZH_METRIC = re.compile(
    "|".join(
        sorted(
            "营业收入 营收 收入 归母净利润 扣非净利润 净利润 净利 净亏损 亏损 毛利率 净利率 基本每股收益 每股收益 "
            "经营活动现金流 现金流 分红 股息 总资产 净资产 负债 资产负债率 市盈率 市值 股价 销量 产量 发电量 "
            "预售金额 增持金额 减持 回购 营业利润 利润总额 研发费用 成本 毛利 利润".split(),
            key=len,
            reverse=True,
        )
    )
)
_ZH_ORG_SUFFIX = re.compile(
    r"(?:股份有限公司|有限责任公司|有限公司|集团|控股|股份|科技|技术|公司|银行|证券|基金|保险|医疗|医药|药业|生物|"
    r"电子|电力|能源|材料|新材|软件|数据|智能|光电|矿业|实业|电气|通信|信息|汽车|环保|传媒)"
)
_ZH_ENTITY_END = re.compile(
    rf"{YEAR_DIGITS}\s*年|第?[一二三四1-4]季度|前三季|上半年|下半年|全年|今年|去年|\d{1, 2}\s*月|的|预计|拟|计划|公布|"
    r"发布|披露|公告|旗下|子公司|控股股东|股东|高管|以|在|是否|是|有(?!限)|为什么|为何|如何|怎么|目前|近期|此次|本次|将|对|"
    r"与|和|收到|获得|中标|宣布|表示|实现|同比|主要|" + _ZH_METRIC.pattern
)
_ZH_QUESTION_WORD = re.compile(r"什么|多少|哪|如何|怎么|怎样|是否|吗|几|为何|为什么|谁|何时")


def _zh_period(text: str) -> re.Match[str] | None:
    for m in _ZH_PERIOD.finditer(text):
        if m.group("year") or m.group("sub"):
            return m
    return None


def zh_entity(text: str, names: Names, *, strict: bool = False) -> Span | None:
    """The company a Chinese question is about: a known one, else the name it opens with (up to a period,
    "的" or a verb, cut after the last company-type suffix). `strict`: only names with such a suffix."""
    if span := known_company_span(text, names):
        return span
    lead = ZH_CUE.match(text)
    start = lead.end() if lead else 0
    m = re.match(r"[\u4e00-\u9fffA-Za-z0-9*（）()．.]{2,30}?(?=" + _ZH_ENTITY_END.pattern + ")", text[start:])
    if not m:
        return None
    name = m.group()
    suffixes = list(_ZH_ORG_SUFFIX.finditer(name))
    if suffixes:
        name = name[: suffixes[-1].end()]
    elif strict or len(name) > 8:
        return None
    if len(name) < 2 or ZH_PRONOUN.match(name) or ZH_POINTER.match(name):
        return None
    return Span(start, start + len(name), name)


def _zh_replace_period(previous: str, new: re.Match[str], text: str) -> str:
    """`previous` with its period replaced by the follow-up's (`text` = the follow-up's period phrase):
    a year alone replaces the year, a quarter or month alone the part within the year."""
    old = _zh_period(previous)
    if old is None:
        entity = zh_entity(previous, company_names((), {}))
        at = entity.end if entity else 0
        return previous[:at] + text + previous[at:]
    if new.group("year") and new.group("sub"):
        return previous[: old.start()] + text + previous[old.end() :]
    part = "year" if new.group("year") else "sub"
    if old.group(part):
        return previous[: old.start(part)] + text + previous[old.end(part) :]
    at = old.end("year") if part == "sub" else old.start()
    return previous[:at] + text + previous[at:]


def zh_resolve(question: str, previous: str, names: Names) -> str:
    prev_entity = zh_entity(previous, names)
    prev_period = _zh_period(previous)
    body = ZH_CUE.sub("", question.strip(), count=1)
    elliptical = bool(re.search(r"呢\s*[?？]?\s*$", body)) or (len(body) <= 8 and not _ZH_QUESTION_WORD.search(body))
    if elliptical:  # "X呢？": X is a period, a metric (maybe with a new company) or a company
        phrase = _ZH_TAIL.sub("", body)
        phrase = re.sub(r"^(?:它的|它们的|其|它)", "", phrase).strip()
        if not phrase:
            return previous
        period = _zh_period(phrase)
        if period and len(phrase) - (period.end() - period.start()) <= 2:
            return as_question(_zh_replace_period(previous, period, phrase), "zh")
        metric = _ZH_METRIC.search(phrase)
        if metric:
            owner = phrase[: metric.start()].rstrip("的")
            new_metric = phrase[metric.start() :]
            out = previous
            old_metric = _ZH_METRIC.search(out)
            if old_metric:
                out = out[: old_metric.start()] + new_metric + out[old_metric.end() :]
            else:
                out = f"{out.rstrip('?？。 ')}的{new_metric}是多少"
            if owner and prev_entity and not _zh_period(owner):
                entity = zh_entity(out, names)
                if entity:
                    out = out[: entity.start] + owner + out[entity.end :]
            return as_question(out, "zh")
        if prev_entity:
            return as_question(previous[: prev_entity.start] + phrase + previous[prev_entity.end :], "zh")
        return as_question(phrase + previous, "zh")
    # A whole question: put the earlier company (and period) where it points back, or in front.
    own_entity = zh_entity(body, names, strict=True)
    own_period = _zh_period(body)
    name = "" if own_entity or prev_entity is None else prev_entity.text
    if not own_period and prev_period:
        name += prev_period.group()
    if not name:
        return as_question(body, "zh")
    if pronoun := ZH_PRONOUN.search(body):
        return as_question(body[: pronoun.start()] + name + body[pronoun.end() :], "zh")
    if pointer := ZH_POINTER.search(body):
        return as_question(body[: pointer.start()] + name + body[pointer.start() :], "zh")
    return as_question(name + body, "zh")
