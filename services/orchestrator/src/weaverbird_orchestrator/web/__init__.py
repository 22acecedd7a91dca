"""The orchestrator's web path: search the web, fetch the top pages and turn them into chunks."""

from weaverbird_orchestrator.web.providers import (
    PROVIDERS,
    BraveProvider,
    ProviderConfigError,
    SearxngProvider,
    TavilyProvider,
    build_provider,
)
from weaverbird_orchestrator.web.search import SearchProvider, SearchResult, WebSearchFailed
from weaverbird_orchestrator.web.web_path import WebGathering, WebPath

__all__ = [
    "PROVIDERS",
    "BraveProvider",
    "ProviderConfigError",
    "SearchProvider",
    "SearchResult",
    "SearxngProvider",
    "TavilyProvider",
    "WebGathering",
    "WebPath",
    "WebSearchFailed",
    "build_provider",
]
