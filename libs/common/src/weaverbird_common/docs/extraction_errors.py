"""Why a document could not be read: unreadable bytes, an exceeded budget, a cancelled parse.

Shared by the loaders and the format readers (pdf_text, html_text); the budget errors cross back
from worker processes, so they pickle with their limit.
"""

from __future__ import annotations


class UnreadableDocument(Exception):
    """The bytes cannot be turned into text (corrupt, encrypted, scanned, empty or unsupported)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OverBudget(UnreadableDocument):
    """The document exceeds an extraction budget (docs.budgets); the message names the limit.

    A subclass of UnreadableDocument, so callers that only know that class still refuse it cleanly.
    """

    def __init__(self, reason: str, limit: float) -> None:
        super().__init__(reason)
        self.limit = limit

    def __reduce__(self) -> tuple[type[OverBudget], tuple[str, float]]:
        return type(self), (self.reason, self.limit)  # survives the trip back from a worker process


class DocumentTooLarge(OverBudget):
    """More bytes than its format's limit: the request is at fault (INVALID_ARGUMENT)."""


class MarkupTooComplex(OverBudget):
    """HTML with more tags than max_html_tags, refused before parsing (INVALID_ARGUMENT)."""


class ExtractionTimedOut(OverBudget):
    """Parsing ran past timeout_s and was killed (RESOURCE_EXHAUSTED: it costs more than we give)."""


class ExtractionCancelled(Exception):
    """The caller cancelled the parse (its client went away); the worker doing it was killed."""
