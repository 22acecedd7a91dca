"""The HTTP gateway (a real uvicorn process) in front of the real stack: Server-Sent Events, retrieval,
adding URLs and files, upload limits and types, gRPC errors as HTTP statuses, health and the page."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fixtures.gateway_server import GatewayServer, free_port
from fixtures.web_servers import LANWAN_PATH, PageServer
from weaverbird_cli.stack import LocalStack

pytestmark = pytest.mark.integration

UPLOAD_LIMIT_BYTES = 64 * 1024  # GATEWAY_MAX_UPLOAD_MB below, so the 413 test sends little
DEMO_QUESTION = "What was Northwind Robotics' revenue in fiscal 2024?"
# The order AskStream promises; prompt is absent when the model is not asked, further_reading when K = J.
EVENT_ORDER = ["route", "prompt", "token", "citations", "further_reading", "done"]


@pytest.fixture(scope="module")
def gateway(stack: LocalStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("gateway") / "gateway.log"
    env = {"GATEWAY_MAX_UPLOAD_MB": str(UPLOAD_LIMIT_BYTES / (1024 * 1024))}
    with GatewayServer(stack.config.addr("orchestrator"), stack.config.addr("ingester"), log, env) as server:
        yield server.base_url


@pytest.fixture(scope="module")
def client(gateway: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gateway, timeout=300) as http:
        yield http


def read_sse(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    """(event, data) pairs of a text/event-stream body, parsed as the page's own reader does."""
    events: list[tuple[str, dict[str, Any]]] = []
    name, data = "message", []
    for line in response.iter_lines():
        if line == "":
            if data:
                events.append((name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    return events


def ask(client: httpx.Client, body: dict[str, Any]) -> tuple[httpx.Response, list[tuple[str, dict[str, Any]]]]:
    with client.stream("POST", "/api/ask", json=body) as response:
        if response.status_code != 200:
            response.read()
            return response, []
        return response, read_sse(response)


def test_ask_streams_route_tokens_citations_and_done_in_order(client: httpx.Client) -> None:
    # The passage path's stream (a fact answer cites only the pages its figures come from).
    response, events = ask(client, {"question": DEMO_QUESTION, "top_k": 4, "top_j": 2, "facts": False})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    names = [name for name, _ in events]
    assert names[0] == "route" and names[-1] == "done", names
    ranks = [EVENT_ORDER.index(name) for name in names]
    assert ranks == sorted(ranks), names  # route, prompt, token..., citations, further_reading, done
    route = events[0][1]
    assert route["route"] == "local" and route["top_k"] == 4 and route["top_j"] == 2
    assert route["best_local_score"] >= route["threshold"]
    assert route["timings"]["embed_ms"] > 0
    text = "".join(data["text"] for name, data in events if name == "token")
    done = events[-1][1]
    assert text.strip() or done["replacement_answer"], "neither streamed text nor a replacement"
    citations = next(data["citations"] for name, data in events if name == "citations")
    assert [c["number"] for c in citations] == [1, 2]
    assert all(c["origin"] == "local" and c["text"] for c in citations)
    assert any(c["source"].endswith("en-northwind-robotics-fy2024.md") for c in citations)
    further = next(data["passages"] for name, data in events if name == "further_reading")
    assert [p["number"] for p in further] == [3, 4]  # K - J passages, numbered after the citations
    assert done["answer_check"] in ("supported", "unsupported", "no_numbers")
    assert done["completion_tokens"] > 0 and done["model_id"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"question": ""}, 422, "question: String should have at least 1 character"),  # the schema's minLength
        ({"question": "x" * 2001}, 422, "question: String should have at most 2000 characters"),
        ({"question": "   "}, 400, "question must not be empty"),
        ({"question": DEMO_QUESTION, "top_k": 2, "top_j": 3}, 400, "top_j must be between 1 and top_k (2), got 3"),
        ({"question": DEMO_QUESTION, "threshold": 3}, 400, "threshold"),
        ({"question": DEMO_QUESTION, "top_k": "many"}, 422, "top_k"),
        ({"question": DEMO_QUESTION, "topk": 3}, 422, "topk"),
        ({"question": DEMO_QUESTION, "filters": {"origin": "moon"}}, 422, "filters.origin"),
        ({}, 422, "question"),
    ],
)
def test_bad_questions_get_a_clear_status_and_message(
    client: httpx.Client, body: dict[str, Any], status: int, message: str
) -> None:
    response, events = ask(client, body)
    assert response.status_code == status, response.text
    assert events == []
    error = response.json()
    assert message in error["detail"]
    assert error["status"] == status and error["code"] == "INVALID_ARGUMENT"
    assert "Traceback" not in response.text


def test_retrieve_returns_the_route_and_ranked_passages_with_filters(client: httpx.Client) -> None:
    response = client.post(
        "/api/retrieve", json={"question": DEMO_QUESTION, "top_k": 3, "top_j": 1, "filters": {"language": "en"}}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["route"]["route"] == "local"
    assert body["route"]["filter"]["language"] == "en"
    assert len(body["passages"]) == 3
    assert body["passages"][0]["source"].endswith(".md")


def test_saving_a_url_adds_it_synchronously_or_queues_it(client: httpx.Client, web_page_server: PageServer) -> None:
    url = web_page_server.url(LANWAN_PATH)
    added = client.post("/api/documents", json={"url": url})
    assert added.status_code == 201, added.text
    document = added.json()
    assert document["chunks"] >= 1 and not document["queued"]
    assert "蓝湾半导体" in document["title"]
    found = client.post(
        "/api/retrieve",
        json={"question": "蓝湾半导体2025年营业收入", "top_k": 2, "filters": {"document_id": document["document_id"]}},
    ).json()
    # Pages saved from the web keep origin "web" and their URL as the source (the ingester's rule).
    assert found["passages"] and all(p["source"] == url for p in found["passages"])
    queued = client.post("/api/documents", json={"url": url, "asynchronous": True})
    assert queued.status_code == 202, queued.text
    assert queued.json()["queued"] and queued.json()["document_id"] == document["document_id"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/report.pdf", "http"),
        ("http://127.0.0.1:9/private.html", "127.0.0.1"),  # not on the ingester's allow-list: SSRF guard
    ],
)
def test_unsafe_or_malformed_urls_are_refused_with_400(client: httpx.Client, url: str, message: str) -> None:
    response = client.post("/api/documents", json={"url": url})
    assert response.status_code == 400, response.text
    assert message in response.json()["detail"]


def test_an_uploaded_markdown_file_becomes_searchable(client: httpx.Client) -> None:
    note = (
        "---\ntitle: Kestrel Paper Mills 2023 results\ncompany: Kestrel Paper Mills\nyear: 2023\n---\n"
        "# Kestrel Paper Mills 2023 results\n\nKestrel Paper Mills reported revenue of USD 77.7 million in 2023.\n"
    )
    response = client.post(
        "/api/documents/upload",
        files={"file": ("kestrel-paper-mills-2023.md", note.encode(), "text/markdown")},
        data={"language": "en"},
    )
    assert response.status_code == 201, response.text
    document = response.json()
    assert document["title"] == "Kestrel Paper Mills 2023 results" and document["chunks"] >= 1
    found = client.post(
        "/api/retrieve",
        json={"question": "Kestrel Paper Mills revenue 2023", "filters": {"document_id": document["document_id"]}},
    ).json()
    assert any("77.7" in p["text"] and p["source"] == "kestrel-paper-mills-2023.md" for p in found["passages"])


@pytest.mark.parametrize(
    ("name", "content_type", "data", "status", "message"),
    [
        ("tool.exe", "application/octet-stream", b"MZ\x90\x00", 415, "unsupported file type '.exe'"),
        ("notes", "text/plain", b"no extension", 415, "(no extension)"),
        ("report.pdf", "text/html", b"%PDF-1.4", 415, "does not match a .pdf file"),
        ("report.pdf", "application/pdf", b"<html>not a pdf</html>", 400, "not a PDF"),
        ("empty.txt", "text/plain", b"   ", 400, "empty"),
    ],
)
def test_uploads_of_the_wrong_type_or_content_are_refused(
    client: httpx.Client, name: str, content_type: str, data: bytes, status: int, message: str
) -> None:
    response = client.post("/api/documents/upload", files={"file": (name, data, content_type)})
    assert response.status_code == status, response.text
    assert message in response.json()["detail"]


def test_an_upload_over_the_limit_gets_413(client: httpx.Client) -> None:
    big = b"Kestrel Paper Mills revenue line.\n" * (UPLOAD_LIMIT_BYTES // 30)
    response = client.post("/api/documents/upload", files={"file": ("big.txt", big, "text/plain")})
    assert response.status_code == 413, response.text
    assert "limited to" in response.json()["detail"]


def test_a_chunked_upload_without_length_is_cut_off_at_the_limit(client: httpx.Client) -> None:
    boundary = "gatewaytestboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()

    def body() -> Iterator[bytes]:  # a generator: httpx sends it chunked, with no Content-Length
        yield head
        for _ in range(40):
            yield b"x" * 8192
        yield f"\r\n--{boundary}--\r\n".encode()

    response = client.post(
        "/api/documents/upload", content=body(), headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert response.status_code == 413, response.text
    assert "Content-Length" not in response.request.headers


def test_a_missing_file_field_is_422(client: httpx.Client) -> None:
    response = client.post("/api/documents/upload", data={"title": "no file"}, files={"other": ("a.txt", b"x")})
    assert response.status_code == 422
    assert "'file'" in response.json()["detail"]


def test_health_readiness_docs_and_page(client: httpx.Client) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["orchestrator"] == "SERVING"
    spec = client.get("/openapi.json").json()
    assert {"/api/ask", "/api/retrieve", "/api/documents", "/api/documents/upload"} <= set(spec["paths"])
    assert "multipart/form-data" in spec["paths"]["/api/documents/upload"]["post"]["requestBody"]["content"]
    assert "text/event-stream" in spec["paths"]["/api/ask"]["post"]["responses"]["200"]["content"]
    assert "swagger" in client.get("/docs").text.lower()
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    # Nothing the page loads may come from the internet: every src / href is relative or a fragment.
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets and all(not re.match(r"^(?:[a-z]+:)?//", a) for a in assets), assets
    for asset in ("static/app.js", "static/style.css"):
        served = client.get(f"/{asset}")
        assert served.status_code == 200 and "//cdn" not in served.text and "@import" not in served.text
    missing = client.get("/api/nothing-here")
    assert missing.status_code == 404 and missing.json()["detail"] == "Not Found"


def test_services_that_are_down_map_to_503_with_retry_after(tmp_path: Path) -> None:
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    with GatewayServer(dead, dead, tmp_path / "gateway.log") as server, httpx.Client(base_url=server.base_url) as http:
        ready = http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["status"] == "not_ready"
        response = http.post("/api/ask", json={"question": DEMO_QUESTION})
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "1"
        assert response.json() == {
            "detail": "the orchestrator is unavailable; try again shortly",
            "code": "UNAVAILABLE",
            "status": 503,
        }
        added = http.post("/api/documents", json={"url": "https://example.com/a.html"})
        assert added.status_code == 503 and "ingester" in added.json()["detail"]
