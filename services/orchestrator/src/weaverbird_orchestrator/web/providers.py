"""Web search backends: SearxNG (self-hosted), Brave Search API and Tavily, chosen by name at startup.

Each call opens its own short-lived HTTP client: the web path runs only when local retrieval is
weak, so connection reuse would save little and a long-lived client would need closing.
Provider addresses come from operator configuration and are trusted (no SSRF guard here); the
pages they return are not, and go through `weaverbird_common.web.UrlGuard` when fetched.
"""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

import httpx

from weaverbird_orchestrator.web.search import SearchProvider, SearchResult, WebSearchFailed

PROVIDERS = ("searxng", "brave", "tavily")
# Both paid APIs cap results per request at 20.
_MAX_COUNT = 20
_TAG_RE = re.compile(r"<[^>]+>")
_STATUS_HINTS = {
    401: " (bad API key?)",
    403: " (forbidden: API key or JSON format not enabled?)",
    429: " (rate limited)",
}


class ProviderConfigError(ValueError):
    """The search provider settings are incomplete or unknown; raised at startup."""


class _JsonApi:
    """Shared HTTP plumbing: one request, errors mapped to WebSearchFailed with a short reason."""

    name = "json-api"

    def __init__(self, base_url: str) -> None:
        if not re.match(r"^https?://", base_url):
            raise ProviderConfigError(f"{self.name}: base URL must start with http:// or https:// (got {base_url!r})")
        self.base_url = base_url.rstrip("/")

    async def _call(self, method: str, path: str, timeout_s: float, **kwargs: Any) -> Any:
        try:
            # asyncio.timeout bounds the whole exchange; httpx's timeout applies per socket operation
            # only, so a server trickling bytes would otherwise hold us far longer.
            async with asyncio.timeout(timeout_s):
                async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as client:
                    response = await client.request(method, f"{self.base_url}{path}", **kwargs)
        except (TimeoutError, httpx.TimeoutException):
            raise WebSearchFailed("timeout") from None
        except httpx.HTTPError as exc:
            raise WebSearchFailed(f"cannot reach {self.name}: {type(exc).__name__}") from exc
        if response.status_code != 200:
            hint = _STATUS_HINTS.get(response.status_code, "")
            raise WebSearchFailed(f"HTTP {response.status_code}{hint}")
        try:
            return response.json()
        except ValueError:
            raise WebSearchFailed("invalid JSON response") from None


class _KeyedApi(_JsonApi):
    """A hosted API called with a key, at its own address unless a base URL is given (tests: a fake)."""

    default_url = ""

    def __init__(self, api_key: str, base_url: str | None = None) -> None:
        super().__init__(self.default_url if base_url is None else base_url)
        self._api_key = api_key


class SearxngProvider(_JsonApi):
    """A SearxNG instance's JSON API (`json` must be listed under `search.formats` in its settings).

    Args:
        base_url: The instance root, e.g. "http://searxng:8080".
    """

    name = "searxng"

    async def search(self, query: str, count: int, timeout_s: float) -> list[SearchResult]:
        """See `SearchProvider.search`."""
        data = await self._call("GET", "/search", timeout_s, params={"q": query, "format": "json"})
        return _parse(_path(data, "results"), "content", count)


class BraveProvider(_KeyedApi):
    """Brave Search API (web search endpoint).

    Args:
        api_key: Sent as X-Subscription-Token.
        base_url: Default "https://api.search.brave.com"; tests point it at a local fake.
    """

    name = "brave"
    default_url = "https://api.search.brave.com"

    async def search(self, query: str, count: int, timeout_s: float) -> list[SearchResult]:
        """See `SearchProvider.search`."""
        data = await self._call(
            "GET",
            "/res/v1/web/search",
            timeout_s,
            params={"q": query, "count": max(1, min(count, _MAX_COUNT))},
            headers={"X-Subscription-Token": self._api_key, "Accept": "application/json"},
        )
        # A query with no web results has no "web" key at all.
        results = _path(data, "web", "results") if isinstance(data, dict) and "web" in data else []
        return _parse(results, "description", count)


class TavilyProvider(_KeyedApi):
    """Tavily search API.

    Args:
        api_key: Sent as "Authorization: Bearer <key>".
        base_url: Default "https://api.tavily.com"; tests point it at a local fake.
    """

    name = "tavily"
    default_url = "https://api.tavily.com"

    async def search(self, query: str, count: int, timeout_s: float) -> list[SearchResult]:
        """See `SearchProvider.search`."""
        data = await self._call(
            "POST",
            "/search",
            timeout_s,
            json={"query": query, "max_results": max(1, min(count, _MAX_COUNT))},
            headers={"Authorization": f"Bearer {self._api_key}"},
        )
        return _parse(_path(data, "results"), "content", count)


def build_provider(name: str, *, base_url: str | None, api_key: str | None) -> SearchProvider:
    """The provider called `name` ("searxng", "brave" or "tavily"), configured.

    Args:
        name: Provider name, case-insensitive.
        base_url: Required for SearxNG (self-hosted, no default); optional override otherwise.
        api_key: Required for Brave and Tavily; ignored by SearxNG.

    Raises:
        ProviderConfigError: Unknown name, missing base URL or API key, or a malformed base URL.
    """
    key = name.strip().lower()
    if key == "searxng":
        if not base_url:
            raise ProviderConfigError("searxng needs a base URL (the address of your SearxNG instance)")
        return SearxngProvider(base_url)
    if key in ("brave", "tavily"):
        if not api_key:
            raise ProviderConfigError(f"{key} needs an API key")
        cls = BraveProvider if key == "brave" else TavilyProvider
        return cls(api_key, base_url or None)
    raise ProviderConfigError(f"unknown search provider {name!r}; choose one of {', '.join(PROVIDERS)}")


def _path(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            raise WebSearchFailed(f"unexpected response: no {'.'.join(keys)}")
        data = data[key]
    return data


def _parse(items: Any, snippet_key: str, count: int) -> list[SearchResult]:
    """SearchResults from a JSON list, skipping entries without an http(s) URL and repeats."""
    if not isinstance(items, list):
        raise WebSearchFailed("unexpected response: results is not a list")
    results: list[SearchResult] = []
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        url = str(item.get("url") or "").strip()
        if not url.lower().startswith(("http://", "https://")) or url in seen:
            continue
        seen.add(url)
        results.append(SearchResult(url=url, title=_clean(item.get("title")), snippet=_clean(item.get(snippet_key))))
        if len(results) >= count:
            break
    return results


def _clean(value: object) -> str:
    # Brave marks query terms with <strong>; entities appear in all three.
    return " ".join(html.unescape(_TAG_RE.sub("", str(value or ""))).split())
