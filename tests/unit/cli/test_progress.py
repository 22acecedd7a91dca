"""The waiting status: drawn and erased on a terminal, silent when output is piped."""

from __future__ import annotations

import io

from weaverbird_cli.progress import Status


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_the_stage_and_then_an_erased_line() -> None:
    term = FakeTerminal()
    status = Status(term, interval_s=60)
    status.show("reading 312 prompt tokens")
    status.clear()
    status.close()
    out = term.getvalue()
    assert "… reading 312 prompt tokens 0 s" in out
    assert out.endswith("\r\033[K")  # erased before the answer is printed


def test_piped_output_gets_no_status_at_all() -> None:
    pipe = io.StringIO()
    status = Status(pipe)
    status.show("retrieving")
    status.close()
    assert pipe.getvalue() == "" and not status.enabled
