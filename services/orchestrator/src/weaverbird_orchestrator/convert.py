"""Conversions between orchestrator protos and the flow's plain types; nothing else."""

from __future__ import annotations

from collections.abc import Sequence

from weaverbird.v1 import common_pb2, orchestrator_pb2
from weaverbird_common.proto_fields import message_from

from weaverbird_orchestrator.domain import (
    GenerationDone,
    Passage,
    PromptPrepared,
    Route,
    RouteDecision,
    Stage,
    Task,
    Timings,
    Turn,
)
from weaverbird_orchestrator.events import TaskExtras
from weaverbird_orchestrator.peers import filter_proto

_ROUTE = {Route.LOCAL: orchestrator_pb2.ROUTE_LOCAL, Route.WEB: orchestrator_pb2.ROUTE_WEB}
_ORIGIN = {"local": common_pb2.ORIGIN_LOCAL, "web": common_pb2.ORIGIN_WEB}
_TASK = {
    Task.LOOKUP: common_pb2.TASK_LOOKUP,
    Task.CALCULATION: common_pb2.TASK_CALCULATION,
    Task.EXTRACTION: common_pb2.TASK_EXTRACTION,
    Task.ANALYSIS: common_pb2.TASK_ANALYSIS,
}
_TASK_BY_PROTO = {v: k for k, v in _TASK.items()}
_ANSWER_CHECK = {
    "supported": orchestrator_pb2.ANSWER_CHECK_SUPPORTED,
    "unsupported": orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED,
    "no_numbers": orchestrator_pb2.ANSWER_CHECK_NO_NUMBERS,
    "refused": orchestrator_pb2.ANSWER_CHECK_REFUSED,
}


def request_filters(request: orchestrator_pb2.AskRequest) -> dict[str, str | int]:
    if not request.HasField("filter"):
        return {}
    flt = request.filter
    out: dict[str, str | int] = {}
    for name in ("document_id", "company", "year", "quarter", "language", "doc_type"):
        if flt.HasField(name):
            out[name] = getattr(flt, name)
    if flt.HasField("origin"):
        out["origin"] = "web" if flt.origin == common_pb2.ORIGIN_WEB else "local"
    return out


def request_task(request: orchestrator_pb2.AskRequest) -> Task | None:
    """The task the request names; None = decide from the question."""
    return _TASK_BY_PROTO.get(request.task)


def request_history(request: orchestrator_pb2.AskRequest) -> list[Turn]:
    return [Turn(t.role, t.text) for t in request.history]


def timings_proto(t: Timings) -> orchestrator_pb2.StageTimings:
    return orchestrator_pb2.StageTimings(**vars(t))


def route_proto(d: RouteDecision) -> orchestrator_pb2.RouteEvent:
    return message_from(
        orchestrator_pb2.RouteEvent,
        d,
        route=_ROUTE[d.route],
        filter=filter_proto(d.filters),
        timings=timings_proto(d.timings),
        task=_TASK.get(d.task, common_pb2.TASK_UNSPECIFIED) if d.task else common_pb2.TASK_UNSPECIFIED,
        route_reason=d.reason,
        notices=[message_from(orchestrator_pb2.Notice, n) for n in d.notices],
    )


def stage_proto(s: Stage) -> orchestrator_pb2.StageEvent:
    return message_from(orchestrator_pb2.StageEvent, s)


def citation_proto(number: int, p: Passage, cited: bool = False) -> orchestrator_pb2.Citation:
    return message_from(
        orchestrator_pb2.Citation,
        p,
        number=number,
        origin=_ORIGIN.get(p.origin, common_pb2.ORIGIN_LOCAL),
        cited_in_answer=cited,
    )


def citations_proto(passages: list[Passage], cited: set[int]) -> list[orchestrator_pb2.Citation]:
    return [citation_proto(i, p, i in cited) for i, p in enumerate(passages, start=1)]


def further_proto(passages: list[Passage], first_number: int) -> list[orchestrator_pb2.Citation]:
    # Numbered after the cited passages so every passage of one answer has a distinct number.
    return [citation_proto(i, p) for i, p in enumerate(passages, start=first_number)]


def done_proto(
    g: GenerationDone,
    d: RouteDecision,
    conversation_id: str,
    answer_check: str = "",
    unsupported_numbers: Sequence[str] = (),
    answer_cites_passages: bool = False,
    replacement_answer: str = "",
    task: Task = Task.LOOKUP,
    extras: TaskExtras | None = None,
    replacement_reason: str = "",
) -> orchestrator_pb2.AnswerDone:
    done = message_from(
        orchestrator_pb2.AnswerDone,
        g,
        timings=timings_proto(d.timings),
        conversation_id=conversation_id,
        answer_check=_ANSWER_CHECK.get(answer_check, orchestrator_pb2.ANSWER_CHECK_UNSPECIFIED),
        unsupported_numbers=list(unsupported_numbers),
        answer_cites_passages=answer_cites_passages,
        replacement_answer=replacement_answer,
        replacement_reason=replacement_reason if replacement_answer else "",
        task=_TASK[task],
    )
    if extras is not None:
        _add_extras(done, extras)
    return done


def _add_extras(done: orchestrator_pb2.AnswerDone, extras: TaskExtras) -> None:
    """The task's structured parts; the outcome types come from tasks/ (duck-typed here)."""
    if (c := extras.calculation) is not None:
        done.calculation.CopyFrom(
            message_from(
                orchestrator_pb2.Calculation,
                c,
                figures=[message_from(orchestrator_pb2.Figure, f) for f in c.figures],
                result=c.result if c.result is not None else 0.0,
            )
        )
    if (x := extras.structured) is not None:
        done.structured.CopyFrom(message_from(orchestrator_pb2.StructuredAnswer, x))
    if (ch := extras.chart) is not None:
        done.chart.CopyFrom(
            message_from(
                orchestrator_pb2.ChartSpec,
                ch,
                series=[message_from(orchestrator_pb2.ChartSeries, s) for s in ch.series],
            )
        )


def prompt_proto(p: PromptPrepared) -> orchestrator_pb2.PromptEvent:
    return message_from(orchestrator_pb2.PromptEvent, p)
