"""The HTTP gateway's doors (a real uvicorn process): no anonymous admin, no cross-site writes, no foreign
Host names, malformed or oversized requests refused at once, and no server paths in what clients see.

Behind it: a scripted orchestrator, and a scripted ingester guarded by the real AuthInterceptor with the
policy and tokens `weaverbird up` writes (the web token is the gateway's default, the CLI's is admin).
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fixtures.gateway_server import GatewayServer
from fixtures.guarded_ingester import SERVER_PATH, GuardedIngester
from fixtures.scripted_orchestrator import ScriptedOrchestrator, answer_events
from weaverbird.v1 import common_pb2, orchestrator_pb2
from weaverbird_cli.security import LocalSecurity
from weaverbird_cli.stack import SERVICES

pytestmark = pytest.mark.integration

BODY_LIMIT_KB = 16
HEADER_LIMIT_KB = 8
ATTACKER = "http://attacker.example"
DOC = "0123456789abcdef"


@dataclass
class Gateway:
    url: str
    port: int
    ingester: GuardedIngester
    orchestrator: ScriptedOrchestrator
    admin_token: str
    web_token: str


def _script(request: orchestrator_pb2.AskRequest) -> list[orchestrator_pb2.AskEvent]:
    cited = orchestrator_pb2.Citation(
        number=1, title="Northwind FY2024", source=SERVER_PATH, origin=common_pb2.ORIGIN_LOCAL, score=0.6
    )
    return answer_events("Revenue rose [1].", citations=[cited])


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("gateway-security")
    security = LocalSecurity.create(home / "tls", SERVICES)
    env = {
        "GATEWAY_DEFAULT_TOKEN": security.token("web"),
        "GATEWAY_MAX_BODY_KB": str(BODY_LIMIT_KB),
        "GATEWAY_MAX_HEADER_KB": str(HEADER_LIMIT_KB),
    }
    with (
        GuardedIngester(security.policy) as ingester,
        ScriptedOrchestrator(_script) as orchestrator,
        GatewayServer(orchestrator.addr, ingester.addr, home / "gateway.log", env) as server,
    ):
        yield Gateway(
            server.base_url, server.port, ingester, orchestrator, security.token("cli"), security.token("web")
        )


@pytest.fixture
def client(gateway: Gateway) -> Iterator[httpx.Client]:
    gateway.ingester.calls.clear()
    with httpx.Client(base_url=gateway.url, timeout=20) as http:
        yield http


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# --- 1. no anonymous admin ----------------------------------------------------------------------------


def test_a_delete_without_credentials_is_401_and_never_uses_the_default_token(
    gateway: Gateway, client: httpx.Client
) -> None:
    response = client.delete(f"/api/documents/{DOC}")
    assert response.status_code == 401, response.text
    assert response.json()["detail"].startswith("credentials required")
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "DeleteDocument" not in gateway.ingester.methods()


def test_the_web_token_may_ask_and_add_but_not_delete(gateway: Gateway, client: httpx.Client) -> None:
    assert client.get("/api/documents").status_code == 200  # the default (web) token, sent for the page
    added = client.post("/api/documents/upload", files={"file": ("note.txt", b"Revenue rose.", "text/plain")})
    assert added.status_code == 201, added.text
    refused = client.delete(f"/api/documents/{DOC}", headers=_bearer(gateway.web_token))
    assert refused.status_code == 403, refused.text
    assert "needs admin" in refused.json()["detail"]
    assert "DeleteDocument" not in gateway.ingester.methods()


def test_a_wrong_token_is_401_invalid_credentials(gateway: Gateway, client: httpx.Client) -> None:
    response = client.delete(f"/api/documents/{DOC}", headers=_bearer("not-a-known-token"))
    assert response.status_code == 401
    assert response.json()["detail"].startswith("invalid credentials")
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    basic = client.get("/api/documents", headers={"Authorization": "Basic YWxpY2U6c2VjcmV0"})
    assert basic.status_code == 401 and basic.headers["www-authenticate"].startswith("Bearer")


def test_an_admin_token_deletes(gateway: Gateway, client: httpx.Client) -> None:
    response = client.delete(f"/api/documents/{DOC}", headers=_bearer(gateway.admin_token))
    assert response.status_code == 200, response.text
    assert response.json()["document_id"] == DOC
    assert gateway.ingester.methods() == ["DeleteDocument"]


# --- 2. cross-site writes -----------------------------------------------------------------------------

WRITES = [
    ("POST", "/api/ask", {"json": {"question": "Northwind revenue?"}}),
    ("POST", "/api/retrieve", {"json": {"question": "Northwind revenue?"}}),
    ("POST", "/api/documents", {"json": {"url": "https://example.com/report.html"}}),
    ("POST", "/api/documents/upload", {"files": {"file": ("x.txt", b"forged", "text/plain")}}),
    ("DELETE", f"/api/documents/{DOC}", {}),
]


@pytest.mark.parametrize(("method", "path", "body"), WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES])
@pytest.mark.parametrize(
    "forged",
    [{"Origin": ATTACKER}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}],
    ids=["foreign-origin", "null-origin", "fetch-metadata"],
)
def test_every_write_forged_from_another_site_is_403(
    gateway: Gateway, client: httpx.Client, method: str, path: str, body: dict, forged: dict[str, str]
) -> None:
    # Even with the admin's token (a browser would attach cookies or a token the page stored).
    headers = {**forged, **_bearer(gateway.admin_token)}
    asked = len(gateway.orchestrator.requests)
    response = client.request(method, path, headers=headers, **body)
    assert response.status_code == 403, response.text
    assert response.json()["detail"].startswith("cross-site request refused")
    assert gateway.ingester.calls == [] and len(gateway.orchestrator.requests) == asked


def test_writes_from_the_gateways_own_page_pass(gateway: Gateway, client: httpx.Client) -> None:
    own = {"Origin": f"http://127.0.0.1:{gateway.port}", "Sec-Fetch-Site": "same-origin"}
    upload = client.post(
        "/api/documents/upload", headers=own, files={"file": ("q3.md", b"# Q3\nRevenue rose.", "text/markdown")}
    )
    assert upload.status_code == 201, upload.text
    deleted = client.delete(f"/api/documents/{DOC}", headers={**own, **_bearer(gateway.admin_token)})
    assert deleted.status_code == 200, deleted.text


def test_cors_stays_closed(client: httpx.Client) -> None:
    preflight = client.options(
        "/api/documents", headers={"Origin": ATTACKER, "Access-Control-Request-Method": "DELETE"}
    )
    listed = client.get("/api/documents", headers={"Origin": ATTACKER})
    assert "access-control-allow-origin" not in preflight.headers
    assert "access-control-allow-origin" not in listed.headers


# --- 3. host names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["attacker.example:8080", "attacker.example", "127.0.0.1.nip.io", "localhost@evil"])
def test_a_foreign_host_is_400_on_reads_and_writes(gateway: Gateway, client: httpx.Client, host: str) -> None:
    listed = client.get("/api/documents", headers={"Host": host})
    deleted = client.delete(f"/api/documents/{DOC}", headers={"Host": host, **_bearer(gateway.admin_token)})
    for response in (listed, deleted):
        assert response.status_code == 400, response.text
        assert "host name is not served" in response.json()["detail"]
    assert gateway.ingester.calls == []


@pytest.mark.parametrize("host", ["localhost", "localhost:{port}", "127.0.0.1:{port}", "[::1]:{port}"])
def test_the_local_names_are_served_with_any_port(gateway: Gateway, client: httpx.Client, host: str) -> None:
    assert client.get("/api/documents", headers={"Host": host.format(port=gateway.port)}).status_code == 200


def test_probes_answer_whatever_host_they_use(client: httpx.Client) -> None:
    assert client.get("/healthz", headers={"Host": "10.1.2.3:8080"}).status_code == 200


def test_more_host_names_come_from_the_setting(gateway: Gateway, tmp_path: Path) -> None:
    env = {"GATEWAY_ALLOWED_HOSTS": '["kb.example.com", "*.corp.example"]'}
    addr = gateway.orchestrator.addr
    with GatewayServer(addr, gateway.ingester.addr, tmp_path / "gw.log", env) as server:
        with httpx.Client(base_url=server.base_url, timeout=20) as http:
            ask = {"question": "Northwind revenue?"}
            assert http.post("/api/retrieve", json=ask, headers={"Host": "kb.example.com"}).status_code != 400
            assert http.get("/openapi.json", headers={"Host": "kb.example.com"}).status_code == 200
            assert http.get("/openapi.json", headers={"Host": "wiki.corp.example:443"}).status_code == 200
            assert http.get("/openapi.json", headers={"Host": "localhost"}).status_code == 400
            same_site_page = {"Host": "kb.example.com", "Origin": "https://kb.example.com"}
            assert http.post("/api/ask", json=ask, headers=same_site_page).status_code == 200


# --- 4. malformed and oversized requests ---------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), [("GET", "/api/documents"), ("POST", "/api/ask")])
@pytest.mark.parametrize("value", [b"Bearer \xe9", b"Bearer \xc3\xa9t\xc3\xa9", b"Bearer a b", b"Bearer"])
def test_a_malformed_authorization_header_is_400_at_once(
    client: httpx.Client, method: str, path: str, value: bytes
) -> None:
    body = {"json": {"question": "Northwind revenue?"}} if method == "POST" else {}
    response = client.request(method, path, headers={"Authorization": value}, timeout=10, **body)
    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith("malformed Authorization header")
    assert 'error="invalid_request"' in response.headers["www-authenticate"]


def _raw(port: int, request: bytes) -> bytes:
    """Sends `request` as is and reads the response until the server closes or 10 s pass."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
                if b"\r\n\r\n" in received and b"connection: close" in received.lower():
                    break
        except (TimeoutError, ConnectionResetError):
            pass
        return received


def test_headers_over_the_limit_get_431(gateway: Gateway, client: httpx.Client) -> None:
    big = b"x" * (HEADER_LIMIT_KB * 1024 + 1024)
    whole = _raw(gateway.port, b"GET /api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + big + b"\r\n\r\n")
    assert whole.startswith(b"HTTP/1.1 431 "), whole[:200]
    assert b"GATEWAY_MAX_HEADER_KB" in whole
    # A head that never ends (the 64 MiB header) is cut off by the HTTP parser soon after the
    # limit: the server answers 431 and closes (the close may reset the connection before we read it).
    sent, answer = 0, b""
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as sock:
        try:
            sock.sendall(b"GET /api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            while sent < 64 * 1024 * 1024 and not answer:
                sock.sendall(b"x" * 16384)
                sent += 16384
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    answer = sock.recv(4096) or b"closed"
        except (BrokenPipeError, ConnectionResetError):
            answer = answer or b"reset"
    # Kernel socket buffers take a few MiB the server never read; an unbounded server takes all 64.
    assert sent < 16 * 1024 * 1024, f"{sent} bytes of header sent without an answer"
    assert answer.startswith((b"HTTP/1.1 431 ", b"reset", b"closed")), answer[:200]
    fits = client.get("/api/documents", headers={"X-Big": "x" * (HEADER_LIMIT_KB * 1024 // 2)})
    assert fits.status_code == 200
    assert gateway.ingester.methods() == ["ListDocuments"]


def test_a_declared_body_over_the_limit_gets_413_before_it_is_sent(gateway: Gateway) -> None:
    # Only the head is sent: the answer cannot have waited for the 100 MB it announces.
    head = (
        b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100000000\r\n\r\n"
    )
    response = _raw(gateway.port, head)
    assert response.startswith(b"HTTP/1.1 413 "), response[:200]
    assert b"GATEWAY_MAX_BODY_KB" in response and b'"code":"PAYLOAD_TOO_LARGE"' in response


def test_a_chunked_body_is_cut_off_at_the_limit(gateway: Gateway, client: httpx.Client) -> None:
    def body() -> Iterator[bytes]:  # a generator: httpx sends it chunked, with no Content-Length
        yield b'{"url": "https://example.com/a.html", "metadata": {"title": "'
        for _ in range(BODY_LIMIT_KB * 2):
            yield b"x" * 1024
        yield b'"}}'

    asked = len(gateway.orchestrator.requests)
    response = client.post("/api/documents", content=body(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413, response.text
    assert response.json()["code"] == "PAYLOAD_TOO_LARGE"
    assert gateway.ingester.calls == [] and len(gateway.orchestrator.requests) == asked


def test_a_question_over_the_schema_limit_is_422(client: httpx.Client) -> None:
    response = client.post("/api/retrieve", json={"question": "x" * 2001})
    assert response.status_code == 422 and "question" in response.json()["detail"]


# --- 5. what clients see of paths and names ------------------------------------------------------------


def test_lists_details_and_citations_show_no_server_path(gateway: Gateway, client: httpx.Client) -> None:
    listed = client.get("/api/documents").json()["documents"]
    shown = client.get(f"/api/documents/{DOC}").json()["document"]
    with client.stream("POST", "/api/ask", json={"question": "Northwind revenue?"}) as answer:
        text = answer.read().decode()
    assert [d["source"] for d in listed] == ["northwind-fy2024.md"] and shown["source"] == "northwind-fy2024.md"
    assert '"source": "northwind-fy2024.md"' in text
    for seen in (str(listed), str(shown), text):
        assert "/home/alice" not in seen


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("report\x00.exe.txt", "report.exe.txt"),
        ("../../etc/cron.d/job.md", "job.md"),
        ("C:\\Users\\alice\\Desktop\\q3 report.md", "q3 report.md"),
        ("evil\u202etxt.md", "eviltxt.md"),
        ("tab\there\x7f.txt", "tabhere.txt"),
    ],
)
def test_upload_names_lose_path_parts_and_control_characters(
    gateway: Gateway, client: httpx.Client, sent: str, stored: str
) -> None:
    # Framed by hand: httpx would percent-encode the control characters a hostile client sends raw.
    boundary = "securitytestboundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{sent}"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\nRevenue rose.\r\n--{boundary}--\r\n"
    ).encode()
    response = client.post(
        "/api/documents/upload", content=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert response.status_code == 201, response.text
    ((method, request),) = gateway.ingester.calls
    assert method == "AddDocument"
    assert request.filename == stored and request.source == stored  # type: ignore[attr-defined]
    assert response.json()["title"] == stored


# --- 6. the contract says so ---------------------------------------------------------------------------


def test_openapi_declares_the_refusals_and_the_question_limits(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    for path, method in [
        ("/api/ask", "post"),
        ("/api/retrieve", "post"),
        ("/api/documents", "post"),
        ("/api/documents/upload", "post"),
    ]:
        assert {"401", "403", "413", "431"} <= set(spec["paths"][path][method]["responses"]), path
    deleting = spec["paths"]["/api/documents/{document_id}"]["delete"]["responses"]
    assert {"401", "403", "431"} <= set(deleting)
    question = spec["components"]["schemas"]["AskBody"]["properties"]["question"]
    assert question["minLength"] == 1 and question["maxLength"] == 2000
