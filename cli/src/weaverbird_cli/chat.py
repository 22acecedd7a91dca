"""`weaverbird chat`: questions one after another, each sent with the conversation so far (client-held), so
a follow-up such as "and in 2023?" is understood. `/reset` starts a new conversation; an empty line or
end of input quits. Works on a terminal (line editing) and with questions piped in, one per line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import TextIO

import grpc
from weaverbird.v1 import orchestrator_pb2_grpc

from weaverbird_cli.answering import AskOptions, ask_request, stream_answer
from weaverbird_cli.conversation import Turn, exchange, history_proto

PROMPT = "you> "
RESET = "/reset"


def questions(stream: TextIO, interactive: bool, read_line: Callable[[str], str] = input) -> Iterator[str]:
    """The questions typed (or piped in), up to an empty line or the end of input. Piped questions are
    echoed after the prompt, so the output reads as a transcript."""
    while True:
        if interactive:
            try:
                line = read_line(PROMPT)
            except EOFError:
                print()
                return
        else:
            line = stream.readline()
            if not line:
                return
            print(PROMPT + line.rstrip("\n"), flush=True)
        line = line.strip()
        if not line:
            return
        yield line


def chat(
    channel: grpc.Channel,
    options: AskOptions,
    max_history_turns: int,
    stream: TextIO | None = None,
    interactive: bool | None = None,
) -> int:
    """Runs the conversation; 0 unless the last question failed."""
    stream = stream or sys.stdin
    if interactive is None:
        interactive = stream.isatty()
    if interactive:
        try:
            import readline  # noqa: F401 (line editing and recall for input())
        except ImportError:
            pass
        print(f"Ask a question; {RESET} starts a new conversation, an empty line quits.")
    stub = orchestrator_pb2_grpc.OrchestratorServiceStub(channel)
    history: list[Turn] = []
    status = 0
    try:
        for question in questions(stream, interactive):
            if question == RESET:
                history.clear()
                print("[new conversation]\n", flush=True)
                continue
            request = ask_request(question, options, history_proto(history, max_history_turns))
            try:
                answer = stream_answer(stub, request, options.chart_dir)
            except grpc.RpcError as exc:
                print(f"\nerror: {exc.code().name}: {exc.details()}\n", file=sys.stderr, flush=True)
                status = 1
                continue
            history += exchange(question, answer.text)
            status = 0
            print(flush=True)
    except KeyboardInterrupt:
        print()
    return status
