"""Follow-up questions made standalone before retrieval: "and in 2023?" after a revenue question.

Retrieval and the company / year filters read one question, so a follow-up that leans on the conversation
("What about its capex?", "那2023年呢？") is rewritten first. Rules carry the company, period and metric
over from the latest user turns that named them and replace whatever the follow-up names itself; the
model can do the same (task "rewrite"), checked and backed by the rules. Only user turns are read for
slots: an assistant's answer is full of years and figures that are not what the user asked about.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from weaverbird_common.errors import WeaverbirdError
from weaverbird_common.questions import CJK_RE, detect_language, filters_from_question, normalize_company
from weaverbird_common.questions import short_company_name as _short

from weaverbird_orchestrator.domain import Turn
from weaverbird_orchestrator.tasks.llm import Generator, complete

log = logging.getLogger(__name__)

_NO_ALIASES: Mapping[str, str] = {}

# ---------------------------------------------------------------------------------------------
# What a question names: company span, period spans (English)
# ---------------------------------------------------------------------------------------------

_EN_CUE = re.compile(
    r"^\s*(?:(?:and|but|so|also|ok(?:ay)?|then|now)\b\s*,?\s*)*"
    r"(?:(?:what|how)\s+about|what\s+of|same\s+(?:question\s+)?for)?\b\s*,?\s*",
    re.IGNORECASE,
)
_EN_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|has|have|had|can|could|"
    r"will|would|should|may|might|please|give|list|show|tell|compare|explain|describe)\b",
    re.IGNORECASE,
)
# Words that stand for the company of an earlier turn; the possessive forms become "<company>'s".
_EN_POSSESSIVE = re.compile(r"\b(?:its|their)\b", re.IGNORECASE)
_EN_SUBJECT = re.compile(
    r"\b(?:it|they|them|(?:the|this|that|same)\s+(?:company|firm|business|group|issuer))\b(?!')", re.IGNORECASE
)
_EN_SAME_PERIOD = re.compile(
    r"(?:\b(?P<prep>in|for|during|of|as\s+of)\s+)?\b(?:that|the\s+same)\s+(?:fiscal\s+)?(?:year|quarter|period)\b",
    re.IGNORECASE,
)
_EN_PRONOUN = re.compile(
    rf"{_EN_POSSESSIVE.pattern}|{_EN_SUBJECT.pattern}|{_EN_SAME_PERIOD.pattern}"
    r"|\b(?:the\s+same\s+(?:filing|report|10-?K|10-?Q)|that\s+(?:filing|report))\b",
    re.IGNORECASE,
)
# A year as written: 2022, FY2022, FY 2022, FY22 (a two-digit year only after FY).
_EN_YEAR = re.compile(
    r"(?:\bFY\s*'?(?P<y2>\d{2})(?!\d))|(?<![\d.,$])(?P<y>(?:19|20)\d{2})(?![\d%]|,\d|\.\d)", re.IGNORECASE
)
_EN_QUARTER = re.compile(
    r"\bQ(?P<q>[1-4])\b|\b(?P<q2>[1-4])Q\b|\b(?P<w>first|second|third|fourth)\s+(?:fiscal\s+)?quarter\b",
    re.IGNORECASE,
)
_QUARTER_WORDS = ("first", "second", "third", "fourth")
# Words a slot-only follow-up ("and at the end of FY2021?") wraps around its company or period.
_EN_FILLER = frozenset(
    "in for at of the end during as year fiscal fy quarter s about and what how then same period data based on".split()
)
_EN_NOT_NAMES = frozenset(
    "what who how it that there here this which where when why let he she they we you".split()
)  # "What's" is no company


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class _Names:
    """The companies a KB knows: names, alias -> company, and matching key -> company for finding where
    a question writes one."""

    known: Sequence[str]
    aliases: Mapping[str, str]
    keys: Mapping[str, str]


def _names(known: Sequence[str], aliases: Mapping[str, str]) -> _Names:
    keys: dict[str, str] = {}
    for name, company in [*((c, c) for c in known), *aliases.items()]:
        for form in (name, _short(name)):
            key = normalize_company(form)
            if len(key) >= 2 and not key.isdigit():
                keys.setdefault(key, company)
    return _Names(tuple(known), aliases, keys)


def _known_company_span(text: str, names: _Names) -> _Span | None:
    """Where the text writes the company it names. Which company that is, is decided as the retrieval
    filters decide it (questions.filters_from_question: case rules for tickers, whole words); this only
    finds the words that wrote it."""
    company = filters_from_question(text, names.known, aliases=names.aliases).get("company")
    if not company:
        return None
    wanted = {key for key, owner in names.keys.items() if owner == company}
    words = list(re.finditer(r"[0-9A-Za-z&.\-]+", text))
    found: list[_Span] = []
    for i in range(len(words)):
        for n in range(min(6, len(words) - i), 0, -1):  # longest name first: "American Water Works"
            run = words[i : i + n]
            if normalize_company("".join(w.group() for w in run)) in wanted:
                found.append(_Span(run[0].start(), run[-1].end(), text[run[0].start() : run[-1].end()]))
                break
        if found:
            break
    upper = text.upper()
    for key in wanted:
        if CJK_RE.search(key) and (pos := upper.find(key)) >= 0:
            found.append(_Span(pos, pos + len(key), text[pos : pos + len(key)]))
    return min(found, key=lambda s: s.start) if found else None


_EN_NAME = r"(?:[A-Z0-9][\w&.\-]*)(?:\s+(?:[A-Z0-9][\w&.\-]*|&))*"
_EN_POSSESSIVE_NAME = re.compile(rf"\b(?P<n>{_EN_NAME})['’]s?\b")
# "... for Acme?", "... at Acme in FY2023?"
_EN_TRAILING_NAME = re.compile(
    rf"\b(?:for|of|at|by)\s+(?P<n>{_EN_NAME})(?:\s+(?:in|for|during|as\s+of)\s+[^?]*)?\s*[?.!]?\s*$"
)


def _en_company(text: str, names: _Names) -> _Span | None:
    """The company a question names: a known one, else a capitalised possessive ("Acme's") or a trailing
    "for Acme" that is not a period."""
    if span := _known_company_span(text, names):
        return span
    for pattern in (_EN_POSSESSIVE_NAME, _EN_TRAILING_NAME):
        for m in pattern.finditer(text):
            name = m.group("n").strip()
            first = name.split()[0].lower()
            if first in _EN_NOT_NAMES or _EN_YEAR.fullmatch(name) or _EN_QUARTER.fullmatch(name):
                continue
            if re.fullmatch(r"(?:FY|Q[1-4])?\s*'?\d{2,4}", name, re.IGNORECASE):
                continue
            return _Span(m.start("n"), m.start("n") + len(name), name)
    return None


def _en_years(text: str) -> list[tuple[_Span, int]]:
    out = []
    for m in _EN_YEAR.finditer(text):
        group = "y" if m.group("y") else "y2"
        digits = m.group(group)
        year = int(digits) if len(digits) == 4 else 2000 + int(digits)
        out.append((_Span(m.start(group), m.end(group), digits), year))
    return out


def _en_period(text: str) -> str:
    """The latest period as written ("FY2018", "Q2 of FY2024"), or ""."""
    years = _en_years(text)
    if not years:
        return ""
    span, _ = max(years, key=lambda item: (item[1], item[0].start))
    start = span.start
    before = text[:start]
    if fy := re.search(r"(?:\bFY\s*'?|\bfiscal\s+(?:year\s+)?)$", before, re.IGNORECASE):
        start = fy.start()
    if q := re.search(
        rf"(?:{_EN_QUARTER.pattern})\s*(?:of\s+)?$", text[:start], re.IGNORECASE
    ):  # "Q2 of FY2024" keeps its quarter
        start = q.start()
    return text[start : span.end]


def _shift_years(text: str, new_year: int) -> str:
    """Every year in `text` moved by the same amount so that its latest becomes `new_year` ("between
    FY2021 and FY2022" asked again "in 2023" is "between FY2022 and FY2023"), each kept in its form."""
    years = _en_years(text)
    if not years:
        return text
    delta = new_year - max(y for _, y in years)
    out, last = [], 0
    for span, year in years:
        moved = year + delta
        out += [text[last : span.start], str(moved) if len(span.text) == 4 else f"{moved % 100:02d}"]
        last = span.end
    return "".join([*out, text[last:]])


def _set_quarter(text: str, quarter: int) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group("q"):
            return f"Q{quarter}"
        if m.group("q2"):
            return f"{quarter}Q"
        return m.group().replace(m.group("w"), _QUARTER_WORDS[quarter - 1])

    return _EN_QUARTER.sub(sub, text, count=1)


def _question(text: str, language: str) -> str:
    text = " ".join(text.split()).strip()
    if language == "zh":
        return text.rstrip("?？。.!！ ") + "？"
    text = text.rstrip("?.! ")
    return (text[:1].upper() + text[1:] + "?") if text else text


def _add_en_slots(text: str, company: str, period: str) -> str:
    """Puts the company where a pronoun stands for it (else "for <company>"), and the period where "that
    year" stands for it (else "in <period>"), into a question that names neither."""
    if company:
        replaced = _EN_POSSESSIVE.sub(f"{company}'s", text)
        replaced = _EN_SUBJECT.sub(company, replaced)
        text = replaced if replaced != text else f"{text.rstrip('?.! ')} for {company}"
    if period:

        def same_period(m: re.Match[str]) -> str:
            prep = m.group("prep")
            return f"{prep} {period}" if prep else f"in {period}"

        replaced = _EN_SAME_PERIOD.sub(same_period, text)
        text = replaced if replaced != text else f"{text.rstrip('?.! ')} in {period}"
    return text


def _en_resolve(question: str, previous: str, names: _Names) -> str:
    """The English follow-up as a standalone question, `previous` being the last user question made
    standalone."""
    prev_company = _en_company(previous, names)
    prev_period = _en_period(previous)
    body = _EN_CUE.sub("", question, count=1).strip().rstrip("?.! ")
    if not body:
        return previous
    if _EN_QUESTION_START.match(body):  # a whole question: fill in what it leaves out
        own_company = _en_company(body, names)
        own_period = _en_years(body) or _EN_QUARTER.search(body)
        return _question(
            _add_en_slots(
                body,
                "" if own_company or not prev_company else prev_company.text,
                "" if own_period else prev_period,
            ),
            "en",
        )
    # A slot or a phrase ("at the end of FY2021", "3M", "its capex"): the previous question with it.
    company = _en_company(body, names)
    years = _en_years(body)
    quarter = _EN_QUARTER.search(body)
    rest = body
    for span in [company, *(s for s, _ in years)]:
        if span is not None:
            rest = rest.replace(span.text, " ")
    rest = _EN_QUARTER.sub(" ", rest)
    leftover = [w for w in re.findall(r"[A-Za-z0-9&]+", rest) if w.lower() not in _EN_FILLER]
    if not leftover and (company or years or quarter):
        out = previous
        if company:
            if prev_company:
                out = out[: prev_company.start] + company.text + out[prev_company.end :]
            else:
                out = f"{out.rstrip('?.! ')} for {company.text}"
        if years:
            new_year = max(y for _, y in years)
            out = _shift_years(out, new_year) if _en_years(out) else f"{out.rstrip('?.! ')} in {new_year}"
        if quarter:
            q = quarter.group("q") or quarter.group("q2") or _QUARTER_WORDS.index(quarter.group("w").lower()) + 1
            out = _set_quarter(out, int(q)) if _EN_QUARTER.search(out) else out
        return _question(out, "en")
    # A metric or other phrase: ask for it about the earlier company and period.
    phrase = _add_en_slots(
        body,
        "" if company or not prev_company else prev_company.text,
        "" if years or quarter else prev_period,
    )
    return _question(f"What about {phrase}", "en")


# ---------------------------------------------------------------------------------------------
# Chinese
# ---------------------------------------------------------------------------------------------

_ZH_CUE = re.compile(r"^\s*(?:那么|那|还有|另外|再看看|再问一下|换成|换作|如果是|同样地?|请问)\s*")
_ZH_TAIL = re.compile(r"(?:的情况|的呢|呢|吗|怎么样|如何)?\s*[?？。!！]*\s*$")
# Words that stand for the earlier company: replaced by its name.
_ZH_PRONOUN = re.compile(
    r"它们|它|(?<![尤极])其(?![他中余实次])|该公司|这家公司|该集团|该企业|此公司|(?<![子分])公司(?=的)"
)
# Words that point back without naming ("这笔交易", "该项目"): the name goes in front of them.
_ZH_POINTER = re.compile(r"这|该|(?<![因如])此(?!外)|上述|双方|对应|同期")
_ZH_PERIOD = re.compile(
    r"(?P<year>(?:19|20)\d{2}\s*(?:财年|年度|年)|今年|去年|上年|明年)?"
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
    r"(?:19|20)\d{2}\s*年|第?[一二三四1-4]季度|前三季|上半年|下半年|全年|今年|去年|\d{1,2}\s*月|的|预计|拟|计划|公布|"
    r"发布|披露|公告|旗下|子公司|控股股东|股东|高管|以|在|是否|是|有(?!限)|为什么|为何|如何|怎么|目前|近期|此次|本次|将|对|"
    r"与|和|收到|获得|中标|宣布|表示|实现|同比|主要|" + _ZH_METRIC.pattern
)
_ZH_QUESTION_WORD = re.compile(r"什么|多少|哪|如何|怎么|怎样|是否|吗|几|为何|为什么|谁|何时")


def _zh_period(text: str) -> re.Match[str] | None:
    for m in _ZH_PERIOD.finditer(text):
        if m.group("year") or m.group("sub"):
            return m
    return None


def _zh_entity(text: str, names: _Names, *, strict: bool = False) -> _Span | None:
    """The company a Chinese question is about: a known one, else the name it opens with (up to a period,
    "的" or a verb, cut after the last company-type suffix). `strict`: only names with such a suffix."""
    if span := _known_company_span(text, names):
        return span
    lead = _ZH_CUE.match(text)
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
    if len(name) < 2 or _ZH_PRONOUN.match(name) or _ZH_POINTER.match(name):
        return None
    return _Span(start, start + len(name), name)


def _zh_replace_period(previous: str, new: re.Match[str], text: str) -> str:
    """`previous` with its period replaced by the follow-up's (`text` = the follow-up's period phrase):
    a year alone replaces the year, a quarter or month alone the part within the year."""
    old = _zh_period(previous)
    if old is None:
        entity = _zh_entity(previous, _names((), {}))
        at = entity.end if entity else 0
        return previous[:at] + text + previous[at:]
    if new.group("year") and new.group("sub"):
        return previous[: old.start()] + text + previous[old.end() :]
    part = "year" if new.group("year") else "sub"
    if old.group(part):
        return previous[: old.start(part)] + text + previous[old.end(part) :]
    at = old.end("year") if part == "sub" else old.start()
    return previous[:at] + text + previous[at:]


def _zh_resolve(question: str, previous: str, names: _Names) -> str:
    prev_entity = _zh_entity(previous, names)
    prev_period = _zh_period(previous)
    body = _ZH_CUE.sub("", question.strip(), count=1)
    elliptical = bool(re.search(r"呢\s*[?？]?\s*$", body)) or (len(body) <= 8 and not _ZH_QUESTION_WORD.search(body))
    if elliptical:  # "X呢？": X is a period, a metric (maybe with a new company) or a company
        phrase = _ZH_TAIL.sub("", body)
        phrase = re.sub(r"^(?:它的|它们的|其|它)", "", phrase).strip()
        if not phrase:
            return previous
        period = _zh_period(phrase)
        if period and len(phrase) - (period.end() - period.start()) <= 2:
            return _question(_zh_replace_period(previous, period, phrase), "zh")
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
                entity = _zh_entity(out, names)
                if entity:
                    out = out[: entity.start] + owner + out[entity.end :]
            return _question(out, "zh")
        if prev_entity:
            return _question(previous[: prev_entity.start] + phrase + previous[prev_entity.end :], "zh")
        return _question(phrase + previous, "zh")
    # A whole question: put the earlier company (and period) where it points back, or in front.
    own_entity = _zh_entity(body, names, strict=True)
    own_period = _zh_period(body)
    name = "" if own_entity or prev_entity is None else prev_entity.text
    if not own_period and prev_period:
        name += prev_period.group()
    if not name:
        return _question(body, "zh")
    if pronoun := _ZH_PRONOUN.search(body):
        return _question(body[: pronoun.start()] + name + body[pronoun.end() :], "zh")
    if pointer := _ZH_POINTER.search(body):
        return _question(body[: pointer.start()] + name + body[pointer.start() :], "zh")
    return _question(name + body, "zh")


# ---------------------------------------------------------------------------------------------
# Public
# ---------------------------------------------------------------------------------------------


def _user_questions(history: Sequence[Turn]) -> list[str]:
    return [t.text.strip() for t in history if t.role == "user" and t.text.strip()]


def needs_rewrite(
    question: str,
    history: Sequence[Turn],
    known_companies: Sequence[str] = (),
    aliases: Mapping[str, str] = _NO_ALIASES,
) -> bool:
    """Whether the question leans on the conversation: it points back ("its", "that year", "它的"), is
    elliptical ("and in 2023?", "what about 3M?", "那2023年呢？"), or names no company while an earlier
    user turn did. A question that stands alone, or one without earlier user turns, needs none."""
    earlier = _user_questions(history)
    text = question.strip()
    if not earlier or not text:
        return False
    names = _names(known_companies, aliases)
    if detect_language(text) == "zh":
        if re.search(r"呢\s*[?？]?\s*$", text) or _ZH_CUE.match(text) or _ZH_PRONOUN.search(text):
            return True
        if _ZH_POINTER.search(text) or len(re.sub(r"[?？。，,\s]", "", text)) <= 6:
            return True
        if _zh_entity(text, names, strict=True) is None and len(text) <= 15:
            return any(_zh_entity(q, names) is not None for q in earlier)
        return False
    if re.match(r"^\s*(?:and|but|also|what\s+about|how\s+about|what\s+of|same\s+for|then)\b", text, re.IGNORECASE):
        return True
    if _EN_PRONOUN.search(text) or len(text.split()) <= 3:
        return True
    # Names no company while the conversation did: a KB question without one means the same company.
    if names.keys:
        if _known_company_span(text, names) is None:
            return any(_known_company_span(q, names) is not None for q in earlier)
        return False
    # No catalog: a question with no capitalised word after its first names nobody.
    if not any(re.match(r"[A-Z0-9]", w) for w in text.split()[1:]):
        return any(_en_company(q, names) is not None for q in earlier)
    return False


def rewrite_with_rules(
    question: str,
    history: Sequence[Turn],
    known_companies: Sequence[str] = (),
    aliases: Mapping[str, str] = _NO_ALIASES,
) -> str:
    """The question made standalone from the latest user turns (company, period, metric carried over,
    whatever the follow-up names replaced); unchanged when it needs no rewrite. Earlier follow-ups are
    resolved in turn, so "and in 2022?" then "what about its net PP&E?" keeps both the year and company."""
    names = _names(known_companies, aliases)
    previous = ""
    seen: list[Turn] = []
    for text in _user_questions(history):
        previous = _resolve(text, previous, seen, names) if previous else text
        seen.append(Turn("user", text))
    if not previous or not needs_rewrite(question, history, known_companies, aliases):
        return question
    return _resolve(question, previous, seen, names)


def _resolve(
    question: str,
    previous: str,
    seen: Sequence[Turn],
    names: _Names,
) -> str:
    if not needs_rewrite(question, seen, names.known, names.aliases):
        return question
    latin = re.search("[A-Za-z]{3}", question)
    if detect_language(question) == "zh" or (detect_language(previous) == "zh" and not latin):
        return _zh_resolve(question, previous, names)
    return _en_resolve(question, previous, names)


# ---------------------------------------------------------------------------------------------
# The model's rewrite, checked
# ---------------------------------------------------------------------------------------------

_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:standalone|rewritten|rewrite|complete|full|new)?\s*(?:question|query)\s*[:：]\s*(?:\*\*)?\s*"
    r"|^\s*(?:改写后的问题|改写后|独立问题|完整问题|问题|改写)\s*[:：]\s*",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# The turns sent with a rewrite request (the prompt reads the last user turns among them).
_SENT_TURNS = 12


def clean_model_rewrite(text: str) -> str:
    """The first line of the model's output without a label ("Question:") or quotes around it."""
    for line in text.strip().splitlines():
        line = _LABEL.sub("", line).strip().strip("\"'“”‘’「」`*").strip()
        if line:
            return line
    return ""


def _company_named(text: str, names: _Names) -> str:
    span = _zh_entity(text, names) if detect_language(text) == "zh" else _en_company(text, names)
    return span.text if span else ""


def plausible_rewrite(
    rewrite: str, question: str, history: Sequence[Turn], language: str, *, company: str = ""
) -> bool:
    """One question in the asked language, not empty, not much longer than what it is built from, not the
    follow-up unchanged, naming `company` (what the rules carry over) when given, and no figure the user
    did not write: a model that answers, or invents a date, instead of rewriting fails this. A year
    before one the user wrote is allowed ("the year before")."""
    if not rewrite:
        return False
    earlier = _user_questions(history)
    budget = len(question) + (len(earlier[-1]) if earlier else 0) + 80
    if len(rewrite) > min(budget, 600) or len(re.findall(r"[?？]", rewrite)) > 1:
        return False
    if detect_language(rewrite) != language:
        return False
    squash = lambda s: re.sub(r"\W", "", s).lower()  # noqa: E731
    if squash(rewrite) == squash(question):
        return False
    if company and normalize_company(company) not in normalize_company(rewrite):
        return False
    asked = set(_NUMBER.findall(" ".join([*earlier, question])))
    asked |= {str(int(n) - 1) for n in asked if re.fullmatch(r"(?:19|20)\d{2}", n)}
    asked |= {n[-2:] for n in asked if re.fullmatch(r"(?:19|20)\d{2}", n)} | {f"20{n}" for n in asked if len(n) == 2}
    return all(n in asked for n in _NUMBER.findall(rewrite))


async def rewrite_with_llm(
    generator: Generator,
    question: str,
    history: Sequence[Turn],
    language: str,
    *,
    known_companies: Sequence[str] = (),
    aliases: Mapping[str, str] = _NO_ALIASES,
) -> str:
    """The model's standalone question (task "rewrite"), or the rules' when the model fails or its output
    is not a plausible rewrite (see plausible_rewrite)."""
    try:
        completion = await complete(generator, "rewrite", question, (), language, history=history[-_SENT_TURNS:])
    except WeaverbirdError as exc:
        log.warning("follow-up rewrite by the model failed (%s); using the rules", exc)
        return rewrite_with_rules(question, history, known_companies, aliases)
    rewrite = clean_model_rewrite(completion.text)
    by_rules = rewrite_with_rules(question, history, known_companies, aliases)
    company = _company_named(by_rules, _names(known_companies, aliases))
    if plausible_rewrite(rewrite, question, history, language, company=company):
        return rewrite
    log.info("model rewrite %r rejected; using the rules", rewrite[:200])
    return by_rules


async def standalone_question(
    question: str,
    history: Sequence[Turn],
    *,
    mode: str,
    generator: Generator,
    known_companies: Sequence[str] = (),
    aliases: Mapping[str, str] = _NO_ALIASES,
    language: str = "",
) -> str:
    """The question to retrieve and answer with: `question` itself when it stands alone (or mode "off"),
    else its rewrite by the rules or the model (mode "llm", which falls back to the rules)."""
    if mode not in ("rules", "llm", "off"):
        raise ValueError(f"unknown follow-up rewrite mode {mode!r}")
    if mode == "off" or not needs_rewrite(question, history, known_companies, aliases):
        return question
    if mode == "rules":
        return rewrite_with_rules(question, history, known_companies, aliases)
    return await rewrite_with_llm(
        generator,
        question,
        history,
        language or detect_language(question),
        known_companies=known_companies,
        aliases=aliases,
    )
