"""Structured extraction (TASK_EXTRACTION): the model copies values into JSON, code validates them.

A requested shape is either a record (keys "revenue", "net income": one value each) or a mapping written
like "{stock name: NAV share %}" (any number of entries, each an item's name mapped to its value). A
mapping travels as one key holding a colon, "stock name: NAV share %", so AskRequest.json_keys carries
both kinds unchanged.

Validation: the output parses (the first JSON object is taken from around code fences or prose, and that
is reported), every requested key is there, every figure is in the passages (numeric_check's matching:
"1,284.6", "1284.6 million" and "12.8亿" all read as written), each figure is stated for its own label
(not a neighbour's: "revenue of A and net income of B", a table's row and column), and nothing is
invented: unrequested keys of a record are dropped (reported), a mapping's entry names must appear in the
passages. An invalid first output gets one repair call listing its problems; if that is still invalid the
outcome says so, and is never marked valid.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from weaverbird_orchestrator.domain import Example, Passage
from weaverbird_orchestrator.outcomes import ExtractionOutcome
from weaverbird_orchestrator.tasks.grounding import figure_text, names, short, stated_with, unsupported_figures
from weaverbird_orchestrator.tasks.llm import Generator, complete

# ---------------------------------------------------------------------------------------------
# The requested keys, read from the question
# ---------------------------------------------------------------------------------------------

_BRACES = re.compile(r"[{｛]([^{}｛｝]+)[}｝]")
_KEY_LIST = re.compile(
    # "with (the following) keys a, b", "fields: a, b"; not "key figures" or "列出" / "关键指标".
    r"(?i:\b(?:with|using|having|containing)\s+(?:the\s+)?(?:following\s+)?(?:keys|fields|columns|attributes)\b"
    r"(?:\s+(?:named|called))?\s*[:：]?|\b(?:keys|fields|columns|attributes)\s*[:：])\s*(?P<en>[^.?!;\n。？！；]+)"
    r"|(?<!关)(?:键|字段|属性)名?(?:为|是|包括|包含|分别为|分别是|[:：])\s*[:：]?\s*(?P<zh>[^.?!;\n。？！；]+)"
)
_LIST_SEPARATOR = re.compile(r"\s*(?:[,，、;；/]|\band\b|\bor\b|以及|和|及|与)\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’「」『』`《》<>‹›"
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|「([^」]+)」')
# Right-hand sides that describe a value's type, not what the value is: {"revenue": number} is a record.
_TYPE_WORDS = frozenset(
    "number numeric value values float integer int string str text null ... … ? 数值 数字 值 文本".split()
)
# "as JSON", "in JSON format" after a key list is not a key.
_LIST_TAIL = re.compile(r"(?i)\s+(?:as|in|into|from|for the|of the)\s+json\b.*$|\s*(?:的)?(?:json|JSON)(?:格式)?.*$")
MAX_KEYS = 30


def _clean_key(text: str) -> str:
    return " ".join(text.strip().strip(_QUOTES).strip().split())


def keys_from_question(question: str) -> list[str]:
    """The keys a question asks for: ["revenue", "net income"], or ["stock name: NAV share %"] for a
    mapping written "{stock name: NAV share %}"; [] when it names none (the model then picks keys)."""
    braces = _BRACES.search(question)
    if braces:
        pairs = [p for p in re.split(r"\s*[,，、;；]\s*", braces.group(1)) if p.strip()]
        halves = [[_clean_key(h) for h in re.split(r"\s*[:：]\s*", p, maxsplit=1)] for p in pairs]
        if len(halves) == 1 and len(halves[0]) == 2 and all(halves[0]) and halves[0][1].lower() not in _TYPE_WORDS:
            return [f"{halves[0][0]}: {halves[0][1]}"]
        keys = [h[0] for h in halves if h[0] and h[0] not in ("...", "…")]
        if keys:
            return _unique(keys)
    match = _KEY_LIST.search(question)
    if not match:
        return []
    listed = _LIST_TAIL.sub("", match.group("en") or match.group("zh") or "")
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(listed)]
    if quoted:  # "selling, general and administrative" stays one key only when quoted
        return _unique(k for k in (_clean_key(q) for q in quoted) if k)
    return _unique(k for k in (_clean_key(p) for p in _LIST_SEPARATOR.split(listed)) if k)


def _unique(keys: Iterator[str] | Sequence[str]) -> list[str]:
    out: list[str] = []
    for key in keys:
        if key not in out:
            out.append(key)
    return out[:MAX_KEYS]


def entry_shape(keys: Sequence[str]) -> tuple[str, str] | None:
    """(name label, value label) when `keys` asks for a mapping ("stock name: NAV share %"), else None."""
    if len(keys) == 1:
        name, colon, value = re.sub("：", ":", keys[0]).partition(":")
        if colon and name.strip() and value.strip():
            return name.strip(), value.strip()
    return None


# ---------------------------------------------------------------------------------------------
# Parsing the model's output
# ---------------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


@dataclass(frozen=True)
class ParsedJson:
    value: Any  # the first JSON object, or None
    notes: tuple[str, ...]  # what had to be ignored around it


def first_json_object(text: str) -> ParsedJson:
    """The first JSON object in a model's output, tolerating a code fence, prose around it and trailing
    commas; what was tolerated is named in `notes`."""
    stripped = text.strip()
    notes: list[str] = []
    fence = _FENCE.search(stripped)
    if fence:
        notes.append("the JSON was inside a code fence")
        stripped = fence.group(1).strip()
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(stripped) if ch == "{"):
        for candidate, note in ((stripped[start:], ""), (_TRAILING_COMMA.sub(r"\1", stripped[start:]), "commas")):
            try:
                value, end = decoder.raw_decode(candidate)
            except json.JSONDecodeError:
                continue
            if not isinstance(value, dict):
                continue
            if note:
                notes.append("trailing commas were removed")
            if stripped[:start].strip() or candidate[end:].strip():
                notes.append("text around the JSON was ignored")
            return ParsedJson(value, tuple(notes))
    return ParsedJson(None, tuple(notes))


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


def _norm_key(key: str) -> str:
    return re.sub(r"[\s_\-]+", " ", key).strip().casefold()


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def validate_json(text: str, keys: Sequence[str], passages: Sequence[str]) -> ExtractionOutcome:
    """Checks one model output against the requested keys and the passages' figures (no model call)."""
    parsed = first_json_object(text)
    keys = tuple(keys)
    if parsed.value is None:
        return ExtractionOutcome("", None, False, keys, ("the output holds no JSON object",), False, keys, raw=text)
    notes = list(parsed.notes)
    errors: list[str] = []
    shape = entry_shape(keys)
    parsed_value = _nulls_as_null(parsed.value, notes)
    if shape is not None:
        value = _unwrap(parsed_value, passages, notes)
        # An entry without a value says nothing: it goes (reported); a mapping of nothing but those is empty.
        empty = [str(k) for k, v in value.items() if v is None]
        if empty:
            notes.append("entries without a value were dropped: " + ", ".join(f'"{short(k)}"' for k in empty))
            value = {k: v for k, v in value.items() if v is not None}
        errors += _mapping_errors(value, shape, passages)
        missing: tuple[str, ...] = () if value else keys
        nulls: tuple[str, ...] = ()
    else:
        value, missing, nulls = _record(parsed_value, keys, notes)
        errors += [f'missing key "{k}"' for k in missing]
        for path, leaf in _leaves(value, ""):
            unsupported = unsupported_figures(leaf, passages)
            errors += [f'"{path}": {figure} is not in the passages' for figure in unsupported]
            # A top-level key the passages name must come with its own value, not a neighbour's.
            if not unsupported and path in value and stated_with(path, leaf, passages, list(value)) is False:
                errors.append(f'"{short(path)}": the passages do not state {figure_text(leaf)} for it')
        if not value:
            errors.append("the JSON object is empty")
    document = json.dumps(value, ensure_ascii=False)
    return ExtractionOutcome(
        document, value, not errors, missing, tuple(errors), False, keys, tuple(notes), nulls, raw=text
    )


# Strings a model writes for "no value": read as null, so they can be neither a value nor a reason to check.
_NULL_WORDS = frozenset({"null", "none", "n/a", "na", "nan", "-", "—", "–", "", "无", "暂无", "不适用", "未披露"})


def _nulls_as_null(value: Any, notes: list[str]) -> Any:
    """The object with "null", "N/A", "无" ... strings as real nulls (noted when there were any)."""
    found: list[bool] = []

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, str) and node.strip().casefold() in _NULL_WORDS:
            found.append(True)
            return None
        return node

    out = walk(value)
    if found:
        notes.append('"null"-like strings were read as null')
    return out


def _unwrap(value: dict[str, Any], passages: Sequence[str], notes: list[str]) -> dict[str, Any]:
    """A mapping the model wrapped in one outer key ({"holdings": {...}}) is the mapping itself: the inner
    keys are names from the passages. ({"<stock>": {"share": ...}} is a nested entry, not a wrapper.)"""
    if len(value) == 1:
        (outer, inner), *_ = value.items()
        if isinstance(inner, dict) and inner and all(any(names(str(k), t) for t in passages) for k in inner):
            notes.append(f'the entries were wrapped in "{short(str(outer))}"')
            return inner
    return value


def _mapping_errors(value: dict[str, Any], shape: tuple[str, str], passages: Sequence[str]) -> list[str]:
    name_label, value_label = shape
    if not value:
        return [f"no entries: expected one per {name_label}"]
    errors = []
    for name, entry in value.items():
        if not any(names(str(name), text) for text in passages):
            errors.append(f'"{short(str(name))}" is not a {name_label} named in the passages')
            continue
        if isinstance(entry, dict | list):
            errors.append(f'"{short(str(name))}": expected a single {value_label}, not a nested value')
            continue
        unsupported = unsupported_figures(entry, passages)
        for figure in unsupported:
            errors.append(f'"{short(str(name))}": {figure} is not in the passages')
        if not unsupported and stated_with(str(name), entry, passages, [str(n) for n in value]) is False:
            errors.append(f'"{short(str(name))}": the passages do not state {figure_text(entry)} for it')
    return errors


def _record(
    value: dict[str, Any], keys: tuple[str, ...], notes: list[str]
) -> tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]:
    """The object with keys spelled as requested, unrequested keys dropped; (object, missing, nulls)."""
    if not keys:
        return value, (), tuple(k for k, v in value.items() if v is None)
    wanted = {_norm_key(k): k for k in keys}
    out: dict[str, Any] = {}
    for key, item in value.items():
        requested = wanted.get(_norm_key(str(key)))
        if requested is None:
            notes.append(f'unrequested key "{key}" was dropped')
        elif requested not in out:
            out[requested] = item
    missing = tuple(k for k in keys if k not in out)
    nulls = tuple(k for k in keys if k in out and out[k] is None)
    return {k: out[k] for k in keys if k in out}, missing, nulls


# ---------------------------------------------------------------------------------------------
# The step: one call, one repair
# ---------------------------------------------------------------------------------------------

_INSTRUCTION = {
    "en": {
        "record": "Keys: {keys}. Output: {skeleton}",
        "mapping": 'One entry per {name}: {{"<{name}>": "<{value}>", ...}}',
        "free": "Output one JSON object.",
        "repair": "Your previous output:\n{previous}\nIts problems:\n{problems}\nWrite the corrected JSON object.",
    },
    "zh": {
        "record": "键：{keys}。格式：{skeleton}",
        "mapping": '每个{name}一个条目：{{"<{name}>": "<{value}>", ...}}',
        "free": "输出一个 JSON 对象。",
        "repair": "你上次的输出：\n{previous}\n其中的问题：\n{problems}\n请写出改正后的 JSON 对象。",
    },
}
_PREVIOUS_CHARS = 800


def shape_instruction(keys: Sequence[str], language: str) -> str:
    """The requested shape as the task prompt's instruction line."""
    words = _INSTRUCTION["zh" if language == "zh" else "en"]
    shape = entry_shape(keys)
    if shape is not None:
        return words["mapping"].format(name=shape[0], value=shape[1])
    if not keys:
        return words["free"]
    quoted = [json.dumps(k, ensure_ascii=False) for k in keys]
    skeleton = "{" + ", ".join(f"{k}: ..." for k in quoted) + "}"
    return words["record"].format(keys=("、" if language == "zh" else ", ").join(quoted), skeleton=skeleton)


def repair_instruction(keys: Sequence[str], language: str, outcome: ExtractionOutcome) -> str:
    words = _INSTRUCTION["zh" if language == "zh" else "en"]
    previous = outcome.raw.strip()[:_PREVIOUS_CHARS] or "(empty)"
    problems = "\n".join(f"- {e}" for e in outcome.errors)
    return shape_instruction(keys, language) + "\n\n" + words["repair"].format(previous=previous, problems=problems)


def _better(first: ExtractionOutcome, second: ExtractionOutcome) -> ExtractionOutcome:
    """Of two invalid outputs, the one that parsed and has fewer problems (the repair can make it worse)."""
    return min((second, first), key=lambda o: (o.value is None, len(o.errors)))


async def extract_json(
    generator: Generator,
    question: str,
    passages: list[Passage],
    language: str,
    keys: Sequence[str],
    examples: Sequence[Example] = (),
) -> ExtractionOutcome:
    """Extracts the requested keys as JSON, validated; one repair call when the first output is invalid."""
    texts = [p.text for p in passages]
    keys = tuple(keys)

    async def attempt(instruction: str) -> ExtractionOutcome:
        output = await complete(
            generator, "json", question, passages, language, examples=examples, instruction=instruction
        )
        return validate_json(output.text, keys, texts)

    outcome = await attempt(shape_instruction(keys, language))
    if outcome.valid:
        return outcome
    repaired = await attempt(repair_instruction(keys, language, outcome))
    if repaired.valid:
        return replace(repaired, repaired=True, attempts=2)
    return replace(_better(outcome, repaired), attempts=2)
