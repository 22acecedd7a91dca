"""Holds a streamed answer back from its first figure until the whole answer has been checked.

Tokens cannot be taken back once sent, and a wrong figure is the costliest error a financial answer can
make. Under the `replace` policy the stream therefore shows the words before the first figure as fast as
the model writes them ("Revenue was "), and the rest only after the numeric check: a supported answer
then arrives whole, and an unsupported one never shows its figures (the done event carries the
insufficient-information answer instead). Years, dates and citation markers are not figures and pass.
"""

from __future__ import annotations

import re

from weaverbird_orchestrator.numeric_check import mentions

# What follows a number decides what it is: "2023" may still become "2023 million", "2,023" or "10-K".
# It is settled once a character follows that no unit, scale word or digit group can start with (年, "]",
# a bracket) or once 12 characters follow it (longer than any unit word the check reads, " percent").
_SETTLED_AFTER = 12
_CANNOT_EXTEND = re.compile(r"[.,]?\s?[^\s\d.,%A-Za-z万亿千百十个\-]")


class FigureGuard:
    """Feed it the answer piece by piece; it returns what may be shown now, and the rest at the end."""

    def __init__(self) -> None:
        self._text = ""
        self._released = 0
        self._holding = False

    @property
    def holding(self) -> bool:
        """True once the answer has shown a figure: everything after it waits for the check."""
        return self._holding

    def feed(self, piece: str) -> str:
        """Adds a piece of the answer; returns the text that may be shown now (often empty)."""
        self._text += piece
        if self._holding:
            return ""
        safe = len(self._text)
        for mention in mentions(self._text):
            tail = self._text[mention.end :]
            settled = len(tail) >= _SETTLED_AFTER or bool(_CANNOT_EXTEND.match(tail))
            if settled and not mention.figure:
                continue
            # The first figure, or a number that may still turn into one: show nothing from here on.
            safe = mention.start
            self._holding = settled
            break
        return self._release(max(safe, self._released))

    @property
    def released(self) -> int:
        """How many characters of the answer have been shown: only what follows may still change."""
        return self._released

    def finish(self, supported: bool, text: str | None = None) -> str:
        """The held rest of the answer when its figures were supported (or it had none); else nothing.

        `text`: the answer as it will stand, when only its held part was changed (citations re-pointed)."""
        if text is not None:
            if text[: self._released] != self._text[: self._released]:
                raise ValueError("only the held part of an answer may change")
            self._text = text
        return self._release(len(self._text)) if supported else ""

    def _release(self, end: int) -> str:
        shown, self._released = self._text[self._released : end], max(end, self._released)
        return shown
