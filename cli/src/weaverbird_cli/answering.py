"""One question asked over AskStream and printed as it arrives (shared by `ask` and `chat`): the route line,
each task stage, the answer text, sources, then the task's calculation, JSON and chart, and the done line.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from weaverbird.v1 import common_pb2, orchestrator_pb2, orchestrator_pb2_grpc

from weaverbird_cli import render
from weaverbird_cli.progress import Status

DEFAULT_CHART_DIR = Path("var") / "charts"
ASK_TIMEOUT_S = 600  # the default model on a CPU, and an analysis runs several rounds


@dataclass(frozen=True)
class AskOptions:
    """What `ask` and `chat` send besides the question; None = the deployment's default."""

    top_k: int | None = None
    top_j: int | None = None
    threshold: float | None = None
    task: str | None = None  # a key of render.TASKS; None = decided from the question
    json_keys: tuple[str, ...] = ()
    max_rounds: int | None = None
    chart_dir: Path = DEFAULT_CHART_DIR


def ask_request(
    question: str, options: AskOptions, history: Sequence[common_pb2.Turn] = ()
) -> orchestrator_pb2.AskRequest:
    request = orchestrator_pb2.AskRequest(question=question, history=history, json_keys=options.json_keys)
    if options.top_k:
        request.top_k = options.top_k
    if options.top_j:
        request.top_j = options.top_j
    if options.threshold is not None:
        request.threshold = options.threshold
    if options.task is not None:
        request.task = render.TASKS[options.task]  # type: ignore[assignment]
    if options.max_rounds is not None:
        request.max_rounds = options.max_rounds
    return request


@dataclass(frozen=True)
class Answer:
    """What the user was shown as the answer (the replacement when it was withheld), for the history."""

    text: str
    done: orchestrator_pb2.AnswerDone | None
    chart: Path | None = None


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40]


def write_chart(spec: Any, chart_dir: Path, now: datetime | None = None) -> Path:
    """The chart as a PNG in `chart_dir`, named by time and title, never over an earlier one."""
    from weaverbird_cli.charts import write_chart_png  # matplotlib is loaded only when a chart comes

    stem = "-".join(x for x in ("chart", f"{now or datetime.now():%Y%m%d-%H%M%S}", _slug(str(spec.title))) if x)
    path = chart_dir / f"{stem}.png"
    copy = 1
    while path.exists():
        copy += 1
        path = chart_dir / f"{stem}-{copy}.png"
    return write_chart_png(spec, path)


class AnswerPrinter:
    """Prints one answer's events as they arrive. The route line waits for the prompt's size (it follows
    within milliseconds when a model answers) or for the first stage or token."""

    def __init__(self, question: str, chart_dir: Path, out: TextIO | None = None, status: Status | None = None) -> None:
        self._question = question
        self._chart_dir = chart_dir
        self._out = out or sys.stdout
        self._status = status or Status()
        self._route: orchestrator_pb2.RouteEvent | None = None
        self._line_open = False  # answer text printed without its closing newline
        self.text = ""
        self.done: orchestrator_pb2.AnswerDone | None = None
        self.chart: Path | None = None

    def _print(self, text: str = "", end: str = "\n") -> None:
        print(text, end=end, file=self._out, flush=True)

    def _print_route(self, prompt: orchestrator_pb2.PromptEvent | None = None) -> None:
        if self._route is not None:
            self._status.clear()
            self._print(render.route_report(self._route, prompt, asked=self._question))
            self._print()
            self._route = None

    def _close_line(self) -> None:
        if self._line_open:
            self._print()
            self._line_open = False

    def handle(self, event: orchestrator_pb2.AskEvent) -> None:
        kind = event.WhichOneof("event")
        if kind == "route":
            self._route = event.route
            self._status.show("preparing the prompt")
        elif kind == "prompt":
            self._print_route(event.prompt)
            self._status.show(f"reading {event.prompt.prompt_tokens} prompt tokens")
        elif kind == "stage":
            self._print_route()
            self._status.clear()
            self._close_line()
            self._print(render.stage_line(event.stage))
            self._status.show(f"next step after {event.stage.stage}")
        elif kind == "token":
            self._print_route()
            self._status.clear()
            self._print(event.token, end="")
            self._line_open = not event.token.endswith("\n")
            self.text += event.token
        elif kind == "citations":
            self._print_route()
            self._print("\n\nSources:")
            self._line_open = False
            for c in event.citations.citations:
                self._print(render.citation_line(c))
        elif kind == "further_reading" and event.further_reading.passages:
            self._print("\nFurther reading:")
            for c in event.further_reading.passages:
                self._print(render.citation_line(c))
        elif kind == "done":
            self._print_route()
            self._close_line()
            self._finish(event.done)

    def _finish(self, done: orchestrator_pb2.AnswerDone) -> None:
        self.done = done
        if done.HasField("calculation"):
            self._print("\n" + render.calculation_block(done.calculation))
        if done.HasField("structured"):
            self._print("\n" + render.structured_block(done.structured))
        if done.HasField("chart"):
            try:
                self.chart = write_chart(done.chart, self._chart_dir)
                self._print(f"\nChart: {self.chart}")
            except (ValueError, OSError, ImportError) as exc:
                print(f"\nchart not drawn: {exc}", file=sys.stderr, flush=True)
        self._print("\n" + render.done_line(done))

    def answer(self) -> Answer:
        shown = self.done.replacement_answer if self.done is not None and self.done.replacement_answer else self.text
        return Answer(shown, self.done, self.chart)


def stream_answer(
    stub: orchestrator_pb2_grpc.OrchestratorServiceStub,
    request: orchestrator_pb2.AskRequest,
    chart_dir: Path,
    out: TextIO | None = None,
) -> Answer:
    """Asks and prints; raises grpc.RpcError (after erasing the status line) when the call fails."""
    status = Status()
    printer = AnswerPrinter(request.question, chart_dir, out, status)
    status.show("retrieving")
    try:
        for event in stub.AskStream(request, timeout=ASK_TIMEOUT_S):
            printer.handle(event)
    finally:
        status.close()
    return printer.answer()
