"""The knowledge base's catalog as the orchestrator sees it: which companies (and their other names)
the KB holds, read from the retriever's Catalog RPC and refreshed as the KB grows."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from weaverbird_common.errors import WeaverbirdError
from weaverbird_common.questions import alias_map

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Catalog:
    """Companies of the KB with the aliases its documents use, and the points it held when read."""

    companies: Mapping[str, Sequence[str]] = field(default_factory=dict)
    points: int = 0
    # Fiscal years of each company's documents (no entry: none carry a year).
    years: Mapping[str, Sequence[int]] = field(default_factory=dict)
    # (year, quarter) of each company's quarterly documents (no entry: none are quarterly).
    quarters: Mapping[str, Sequence[tuple[int, int]]] = field(default_factory=dict)
    # Chunks of each company's documents that carry no year (no entry: none); they may cover any year.
    undated: Mapping[str, int] = field(default_factory=dict)
    # Each company's newest document date, ISO (no entry: some of its chunks carry no date).
    latest: Mapping[str, str] = field(default_factory=dict)
    # Each company's document kinds ("10K", "10Q"; no entry: some of its documents are of no known kind).
    kinds: Mapping[str, Sequence[str]] = field(default_factory=dict)

    # Derived once per catalog read, not per question (the catalog is shared until the next refresh).
    @cached_property
    def aliases(self) -> dict[str, str]:
        """alias -> company, for reading company filters out of a question."""
        return alias_map(self.companies)

    @cached_property
    def display(self) -> dict[str, str]:
        """company key -> the name a reader knows it by ("Northwind Robotics" for NORTHWIND_ROBOTICS): its
        first alias written in mixed case or in Chinese, else the key in words. Keys stay inside."""
        return {key: display_name(key, aliases) for key, aliases in self.companies.items()}

    @cached_property
    def names(self) -> list[str]:
        """Every company name and alias the catalog knows."""
        return [*self.companies, *self.aliases]


def display_name(key: str, aliases: Sequence[str]) -> str:
    """Catalog.display for one company."""
    for alias in aliases:
        if any(c.islower() for c in alias) or any("\u4e00" <= c <= "\u9fff" for c in alias):
            return alias
    if any("\u4e00" <= c <= "\u9fff" for c in key):
        return key
    return " ".join(w if len(w) <= 3 else w.capitalize() for w in key.replace("_", " ").split())


class CatalogCache:
    """Serves the last catalog read; a background task re-reads it, so no question waits on facet calls.

    The KB grows in the background (web pages through Kafka, uploads, deletions), so a fixed list would go
    stale; a read per question would cost a round trip of facet queries. The task re-reads every
    `ttl_s` seconds, and at once when `invalidate()` is called (the orchestrator queued a web page) or when
    `points` (the collection's point count: one cheap call, polled every `poll_s`) says the KB changed.
    Only the first question of a fresh process waits for a read. A failed read keeps the previous
    catalog: filters from a slightly old catalog are better than none. `ttl_s` 0 reads on every question
    (tests), without a background task.
    """

    def __init__(
        self,
        read: Callable[[], Awaitable[Catalog]],
        ttl_s: float,
        points: Callable[[], Awaitable[int]] | None = None,
        poll_s: float = 5.0,
    ) -> None:
        self._read = read
        self._ttl_s = ttl_s
        self._points = points
        self._poll_s = poll_s
        self._catalog = Catalog()
        self._read_once = False
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.reads = 0  # catalog reads so far (tests and logs)
        self._seen_points: int | None = None

    async def get(self) -> Catalog:
        if self._ttl_s <= 0 or not self._read_once:
            async with self._lock:
                if self._ttl_s <= 0 or not self._read_once:  # another request may have read it meanwhile
                    await self._refresh()
        if self._ttl_s > 0 and self._task is None:
            # A fresh context: the task would otherwise inherit the first caller's deadline (a context
            # variable, deadline.py) and every refresh after that deadline would fail.
            self._task = asyncio.create_task(self._run(), name="catalog-refresh", context=contextvars.Context())
        return self._catalog

    def invalidate(self) -> None:
        """Read again now, off the request path (the KB was seen to change)."""
        self._wake.set()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _refresh(self) -> None:
        try:
            self._catalog = await self._read()
        except WeaverbirdError as exc:
            log.warning("catalog refresh failed, keeping the previous one: %s", exc)
        self._read_once = True
        self.reads += 1

    async def _changed(self) -> bool:
        """Whether the collection's point count moved since the last poll (the catalog's count before the
        first): an ingest or a delete. Compared poll to poll, so a catalog that counts differently from
        the collection cannot cause a read per poll."""
        if self._points is None:
            return False
        try:
            now = await self._points()
        except WeaverbirdError:
            return False  # the next poll or the timer will tell
        before = self._catalog.points if self._seen_points is None else self._seen_points
        self._seen_points = now
        return now != before

    async def _run(self) -> None:
        last = time.monotonic()
        while True:
            wait = min(self._poll_s, self._ttl_s) if self._points else self._ttl_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)
            woken = self._wake.is_set()
            self._wake.clear()
            try:
                if woken or time.monotonic() - last >= self._ttl_s or await self._changed():
                    async with self._lock:
                        await self._refresh()
                    last = time.monotonic()
            except Exception:  # an unexpected error must not end the refreshes for the process's life
                log.exception("catalog refresh failed unexpectedly; trying again at the next poll")
