"""The web-search interface the orchestrator's web path depends on; backends live in `providers`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search-engine hit: the page to fetch and what the engine said about it."""

    url: str
    title: str
    snippet: str


class WebSearchFailed(Exception):
    """The search engine gave no usable answer; `reason` is short ("timeout", "HTTP 500")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SearchProvider(Protocol):
    """A web search backend, chosen from settings when the orchestrator starts."""

    name: str

    async def search(self, query: str, count: int, timeout_s: float) -> list[SearchResult]:
        """Up to `count` results for `query`, best first.

        Raises:
            WebSearchFailed: HTTP error, timeout (reason "timeout") or an unreadable response.
        """
        ...
