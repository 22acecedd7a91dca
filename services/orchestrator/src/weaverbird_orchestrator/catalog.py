"""The knowledge base's catalog as the orchestrator sees it: which companies (and their other names)
the KB holds, read from the retriever's Catalog RPC and refreshed as the KB grows."""

from __future__ import annotations

import asyncio
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
    """Serves the last catalog read; re-reads it at most every `ttl_s` seconds, one read at a time.

    The KB grows in the background (web pages through Kafka), so a fixed list would go stale; a read per
    question would cost a round trip of facet queries. A failed read keeps the previous catalog: filters
    from a slightly old catalog are better than none.
    """

    def __init__(self, read: Callable[[], Awaitable[Catalog]], ttl_s: float) -> None:
        self._read = read
        self._ttl_s = ttl_s
        self._catalog = Catalog()
        self._read_at = float("-inf")
        self._lock = asyncio.Lock()

    async def get(self) -> Catalog:
        if time.monotonic() - self._read_at < self._ttl_s:
            return self._catalog
        async with self._lock:
            if time.monotonic() - self._read_at >= self._ttl_s:  # another request may have refreshed it
                try:
                    self._catalog = await self._read()
                except WeaverbirdError as exc:
                    log.warning("catalog refresh failed, keeping the previous one: %s", exc)
                self._read_at = time.monotonic()
        return self._catalog

    def invalidate(self) -> None:
        """Read again on the next question (e.g. after the KB was seen to change)."""
        self._read_at = float("-inf")
