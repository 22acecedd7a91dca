"""Search providers against SearxNG/Brave/Tavily-shaped fakes on 127.0.0.1: parsing and failures."""

from __future__ import annotations

import json
import socket

import pytest
from fixtures.search_server import SearchHit, SearchServer
from weaverbird_orchestrator.web import (
    BraveProvider,
    ProviderConfigError,
    SearchProvider,
    SearchResult,
    SearxngProvider,
    TavilyProvider,
    WebSearchFailed,
    build_provider,
)

pytest_plugins = ["fixtures.web_servers"]

HITS = [
    SearchHit(
        "https://news.example/aurora-fy2025", "Aurora Tidal Power FY2025 &amp; outlook", "Revenue of $4.82 billion"
    ),
    SearchHit("https://ir.example/atp/results", "<strong>Aurora</strong> results", "Net income <strong>$612m</strong>"),
    SearchHit("ftp://files.example/atp.pdf", "Not fetchable", "skipped: not http(s)"),
    SearchHit("https://news.example/aurora-fy2025", "Duplicate", "skipped: repeated URL"),
    SearchHit("https://blog.example/tidal", "Tidal power primer", ""),
]
EXPECTED = [
    SearchResult(
        "https://news.example/aurora-fy2025", "Aurora Tidal Power FY2025 & outlook", "Revenue of $4.82 billion"
    ),
    SearchResult("https://ir.example/atp/results", "Aurora results", "Net income $612m"),
    SearchResult("https://blog.example/tidal", "Tidal power primer", ""),
]


def providers(server: SearchServer) -> list[SearchProvider]:
    return [
        SearxngProvider(server.base_url),
        BraveProvider(server.brave_key, base_url=server.base_url),
        TavilyProvider(server.tavily_key, base_url=server.base_url),
    ]


async def test_parse_results(web_search_server: SearchServer) -> None:
    web_search_server.set_results({"aurora": HITS})
    for provider in providers(web_search_server):
        results = await provider.search("Aurora Tidal Power revenue 2025", count=5, timeout_s=5.0)
        assert results == EXPECTED, provider.name


async def test_count_limits_results(web_search_server: SearchServer) -> None:
    web_search_server.set_results({"aurora": HITS})
    for provider in providers(web_search_server):
        assert await provider.search("aurora", count=2, timeout_s=5.0) == EXPECTED[:2], provider.name


async def test_requests_follow_each_api(web_search_server: SearchServer) -> None:
    for provider in providers(web_search_server):
        assert await provider.search("蓝湾半导体 2025年 营业收入", count=3, timeout_s=5.0) == []
    searxng, brave, tavily = web_search_server.requests
    assert searxng.method == "GET" and searxng.query == {"q": ["蓝湾半导体 2025年 营业收入"], "format": ["json"]}
    assert brave.path == "/res/v1/web/search" and brave.query["count"] == ["3"]
    assert brave.headers["x-subscription-token"] == web_search_server.brave_key
    assert tavily.method == "POST" and tavily.headers["authorization"] == f"Bearer {web_search_server.tavily_key}"
    assert json.loads(tavily.body) == {"query": "蓝湾半导体 2025年 营业收入", "max_results": 3}


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("fail", "HTTP 500"), ("hang", "timeout"), ("bad-json", "invalid JSON response")],
)
async def test_failures_raise_web_search_failed(web_search_server: SearchServer, mode: str, reason: str) -> None:
    web_search_server.set_mode(mode)  # type: ignore[arg-type]
    for provider in providers(web_search_server):
        with pytest.raises(WebSearchFailed) as caught:
            await provider.search("aurora", count=3, timeout_s=0.5)
        assert caught.value.reason == reason, provider.name


async def test_bad_api_key(web_search_server: SearchServer) -> None:
    for provider in (
        BraveProvider("wrong", base_url=web_search_server.base_url),
        TavilyProvider("wrong", base_url=web_search_server.base_url),
    ):
        with pytest.raises(WebSearchFailed, match=r"HTTP 401 \(bad API key\?\)"):
            await provider.search("aurora", count=3, timeout_s=5.0)


async def test_unreachable_provider() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(WebSearchFailed, match="cannot reach searxng"):
        await SearxngProvider(f"http://127.0.0.1:{port}").search("aurora", count=3, timeout_s=5.0)


def test_build_provider() -> None:
    searxng = build_provider("SearxNG", base_url="http://127.0.0.1:8888/", api_key=None)
    assert isinstance(searxng, SearxngProvider) and searxng.base_url == "http://127.0.0.1:8888"
    brave = build_provider("brave", base_url=None, api_key="k")
    assert isinstance(brave, BraveProvider) and brave.base_url == "https://api.search.brave.com"
    tavily = build_provider("tavily", base_url="http://127.0.0.1:9/", api_key="k")
    assert isinstance(tavily, TavilyProvider) and tavily.name == "tavily"


@pytest.mark.parametrize(
    ("name", "base_url", "api_key", "message"),
    [
        ("searxng", None, None, "searxng needs a base URL"),
        ("brave", None, None, "brave needs an API key"),
        ("tavily", "http://127.0.0.1:9", "", "tavily needs an API key"),
        ("google", None, "k", "unknown search provider 'google'; choose one of searxng, brave, tavily"),
        ("searxng", "127.0.0.1:8888", None, "must start with http"),
    ],
)
def test_build_provider_errors(name: str, base_url: str | None, api_key: str | None, message: str) -> None:
    with pytest.raises(ProviderConfigError, match=message.replace("?", r"\?")):
        build_provider(name, base_url=base_url, api_key=api_key)
