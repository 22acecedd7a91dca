"""Terminal rendering of answers (route report, stages, citations, further reading, a task's calculation and
JSON) and of KB documents."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC

from weaverbird.v1 import common_pb2, orchestrator_pb2, retriever_pb2
from weaverbird_common import proto_names

# --task choices: name -> value ("lookup", "calculation", ...).
TASKS = proto_names.numbers(common_pb2.Task)
# kb list --origin choices: name -> value ("local", "web", "user").
DOCUMENT_ORIGINS = proto_names.numbers(retriever_pb2.DocumentOrigin)


def task_name(task: int) -> str:
    return proto_names.short_name(common_pb2.Task, task)


def _origin_name(origin: int) -> str:
    return proto_names.short_name(retriever_pb2.DocumentOrigin, origin, unknown="?")


def route_report(
    route: orchestrator_pb2.RouteEvent, prompt: orchestrator_pb2.PromptEvent | None = None, asked: str | None = None
) -> str:
    """The [route] line; then the question as searched when it is not what was typed (a follow-up
    rewritten with the conversation), and the route's note."""
    t = route.timings
    parts = [
        f"route={proto_names.short_name(orchestrator_pb2.Route, route.route, unknown='?')}",
        f"best_local_score={route.best_local_score:.3f}",
        f"threshold={route.threshold:.3f}",
        f"K={route.top_k} J={route.top_j}",
        f"web={route.web_status}",
        f"embed={t.embed_ms:.1f}ms search={t.local_search_ms:.1f}ms",
    ]
    filters = {f.name: v for f, v in route.filter.ListFields()}
    if filters:
        parts.append(f"filter={filters}")
    if route.task:
        decided = f" (by {route.task_decided_by})" if route.task_decided_by else ""
        parts.append(f"task={task_name(route.task)}{decided}")
    if prompt is not None:
        # What the model reads: on a CPU this, not retrieval, is the wait for the first token.
        parts.append(
            f"prompt={prompt.prompt_tokens}tok (passages {prompt.context_tokens} of "
            f"{prompt.context_tokens_full}tok, from {_numbers(prompt.passages_used)})"
        )
    lines = ["[route] " + " ".join(parts)]
    standalone = route.standalone_question.strip()
    if standalone and (asked is None or standalone != asked.strip()):
        lines.append(f"[standalone question] {standalone}")
    if route.note:
        lines.append(f"[note] {route.note}")
    return "\n".join(lines)


def stage_line(stage: orchestrator_pb2.StageEvent) -> str:
    """One finished stage: "[stage] review round 1 · 812ms · failed · numbers not supported", then the
    sub-questions a plan made (or the one an execute step retrieved for), one per line."""
    parts = [f"[stage] {stage.stage} round {stage.round}", f"{stage.ms:.0f}ms"]
    if stage.stage == "review":
        parts.append("passed" if stage.passed else "failed")
    if stage.detail:
        parts.append(stage.detail)
    return "\n".join([" · ".join(parts), *(f"    - {q}" for q in stage.sub_questions)])


def number(value: float) -> str:
    """1284.6 -> "1,284.6"; 3.0 -> "3": at most 10 significant digits, no trailing zeros."""
    return f"{value:,.10g}"


def calculation_block(calc: orchestrator_pb2.Calculation) -> str:
    """The figures (each with the passage [n] it was read from), the formula and the result code computed."""
    lines = ["Calculation:"]
    for f in calc.figures:
        written = f' (written "{f.text}")' if f.text else ""
        lines.append(f"  [{f.passage}] {f.label} = {number(f.value)} {f.unit}".rstrip() + written)
    if calc.formula:
        lines.append(f"  formula: {calc.formula}")
    computed = f"{number(calc.result)} {calc.unit}".rstrip()
    shown = f' (shown as "{calc.result_text}")' if calc.result_text and calc.result_text != computed else ""
    lines.append(f"  result: {computed}{shown}" if calc.formula or calc.figures else "  no result was computed")
    return "\n".join(lines)


def structured_block(answer: orchestrator_pb2.StructuredAnswer) -> str:
    """The JSON, pretty when it parses, under "JSON (valid)" or "JSON (invalid: why)": invalid output is
    never shown as if it were valid."""
    if answer.valid:
        status = "valid, repaired" if answer.repaired else "valid"
    else:
        why = list(answer.errors)
        if answer.missing_keys:
            why.append("missing keys: " + ", ".join(answer.missing_keys))
        status = "invalid: " + ("; ".join(why) or "not checked")
    try:
        body = json.dumps(json.loads(answer.json), ensure_ascii=False, indent=2) if answer.json else "(none produced)"
    except json.JSONDecodeError:
        body = answer.json
    return f"JSON ({status}):\n{body}"


def _numbers(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers) or "none"


def citation_line(c: orchestrator_pb2.Citation) -> str:
    where = c.source + (f", page {c.page}" if c.page else "")
    origin = "web" if c.origin == common_pb2.ORIGIN_WEB else "local"
    mark = "*" if c.cited_in_answer else " "
    return f" {mark}[{c.number}] {c.title} — {where} ({origin}, score {c.score:.3f})"


# Why an answer whose figures all check out was withheld anyway (AnswerDone.replacement_reason).
_WITHHELD_WHY = {
    "names_nothing": "the answer restated the question without naming what it asks for",
    "lists_nothing": "the answer announced a list without naming any of its items",
}


def check_line(done: orchestrator_pb2.AnswerDone) -> str:
    """What became of an answer with figures no cited passage holds; "" when there is none.

    Withheld (the default policy): the stream stopped before the figures, and the replacement is shown.
    Otherwise the figures were streamed, so the user is told to check them."""
    if done.replacement_answer and done.replacement_reason in _WITHHELD_WHY:
        return f"[withheld] {_WITHHELD_WHY[done.replacement_reason]}.\n{done.replacement_answer}"
    if done.answer_check != orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED:
        return ""
    where = "the passages it cites" if done.answer_cites_passages else "any passage (the answer cites none)"
    figures = ", ".join(done.unsupported_numbers)
    if done.replacement_answer:
        return f"[withheld] the answer's figures ({figures}) are not in {where}.\n{done.replacement_answer}"
    return f"[warning] the answer states figures not found in {where}: {figures}. Check them before use."


def done_line(done: orchestrator_pb2.AnswerDone) -> str:
    """The closing line, after the check warning if any (the streamed answer cannot be taken back)."""
    t = done.timings
    if done.answer_check == orchestrator_pb2.ANSWER_CHECK_REFUSED:
        line = f"[done] no relevant evidence found, the model was not asked · total {t.total_ms:.0f}ms"
    else:
        line = (
            f"[done] {done.finish_reason} · {done.completion_tokens} tokens · model {done.model_id} · "
            f"prompt {done.prompt_tokens} tokens ({done.cached_tokens} cached) · "
            f"first token {t.first_token_ms:.0f}ms · total {t.total_ms:.0f}ms"
        )
    warning = check_line(done)
    return f"{warning}\n{line}" if warning else line


def _when(provenance: retriever_pb2.DocumentProvenance, field: str) -> str:
    if not provenance.HasField(field):
        return "-"
    stamp = getattr(provenance, field).ToDatetime(tzinfo=UTC)
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


def provenance_text(provenance: retriever_pb2.DocumentProvenance) -> str:
    """How the document came in: "web: 'question' (score 0.612)", "user", "local"."""
    origin = _origin_name(provenance.origin)
    if provenance.origin != retriever_pb2.DOCUMENT_ORIGIN_WEB or not provenance.question:
        return origin
    score = f" (score {provenance.best_score:.3f})" if provenance.HasField("best_score") else ""
    return f"{origin}: {provenance.question!r}{score}"


def document_line(doc: retriever_pb2.DocumentSummary) -> str:
    """One row of `weaverbird kb list`."""
    about = " ".join(x for x in (doc.company, str(doc.year) if doc.year else "", doc.language) if x)
    return (
        f"{doc.document_id}  {_when(doc.provenance, 'added_at'):<20}  {doc.title or doc.source}"
        f"  [{about or '-'}; {doc.chunks} chunks]  {provenance_text(doc.provenance)}"
    )


def document_details(doc: retriever_pb2.DocumentSummary, preview: str = "") -> str:
    """`weaverbird kb show`: every field, then the start of the text."""
    p = doc.provenance
    rows = [
        ("document", doc.document_id),
        ("title", doc.title),
        ("source", doc.source),
        ("origin", _origin_name(p.origin)),
        ("added", _when(p, "added_at")),
        ("company", doc.company + (f" (also {', '.join(doc.aliases)})" if doc.aliases else "")),
        ("year", str(doc.year) if doc.year else ""),
        ("quarter", f"Q{doc.quarter}" if doc.quarter else ""),
        ("type", doc.doc_type),
        ("language", doc.language),
        ("published", doc.published_date),
        ("chunks", str(doc.chunks)),
    ]
    if p.question:
        rows.append(("question", p.question))
    if p.HasField("best_score"):
        rows.append(("best score", f"{p.best_score:.3f}"))
    if p.HasField("found_at"):
        rows.append(("found", _when(p, "found_at")))
    text = "\n".join(f"{name + ':':<12}{value}" for name, value in rows if value)
    return f"{text}\n\n{preview}" if preview else text
