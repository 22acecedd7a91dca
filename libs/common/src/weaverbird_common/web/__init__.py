"""Safe web fetching shared by the orchestrator's web path and the ingester: SSRF guard and page fetcher."""

from weaverbird_common.web.fetch import (
    ACCEPTED_TYPES,
    FetchedPage,
    FetchFailure,
    FetchReport,
    PageFetcher,
    PageFetchError,
    PageRejected,
    PageTimedOut,
    PageUnreachable,
)
from weaverbird_common.web.ssrf import UnsafeUrl, UrlGuard, VettedUrl, address_refusal, system_resolver

__all__ = [
    "ACCEPTED_TYPES",
    "FetchFailure",
    "FetchReport",
    "FetchedPage",
    "PageFetchError",
    "PageFetcher",
    "PageRejected",
    "PageTimedOut",
    "PageUnreachable",
    "UnsafeUrl",
    "UrlGuard",
    "VettedUrl",
    "address_refusal",
    "system_resolver",
]
