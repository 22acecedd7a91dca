"""What can stop a record short of being stored, and what the consumer does about each."""

from __future__ import annotations

from weaverbird_common.errors import DeadlineExceeded, Overloaded, Unavailable
from weaverbird_common.ingest_messages import DeadLetterReason

# Errors meaning "the knowledge base is not there right now": retried without limit, never dead-lettered.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (Unavailable, DeadlineExceeded, Overloaded)


class Transient(Exception):
    """A dependency failed; the record stays uncommitted and is retried after a back-off."""


class Stopping(Exception):
    """stop() was called while waiting to retry; the record is left for the next consumer."""


class Permanent(Exception):
    """The record cannot be ingested; it goes to the dead-letter topic."""

    def __init__(self, reason: DeadLetterReason, error: BaseException, attempts: int) -> None:
        super().__init__(f"{reason}: {error}")
        self.reason: DeadLetterReason = reason
        self.error = error
        self.attempts = attempts
