"""The gateway's pure checks: Host and Origin parsing, the Authorization header's syntax, server paths
kept from clients and upload names cleaned. The HTTP behaviour is in tests/integration/test_gateway_security.py."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from weaverbird_gateway.credentials import check_authorization, unauthorized
from weaverbird_gateway.errors import GatewayError
from weaverbird_gateway.paths import without_server_path
from weaverbird_gateway.schemas import DocumentMeta
from weaverbird_gateway.settings import GatewaySettings
from weaverbird_gateway.sites import host_allowed, host_name, origin_allowed
from weaverbird_gateway.uploads import MAX_FILENAME_CHARS, safe_filename

LOCAL = ["localhost", "127.0.0.1", "[::1]"]


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8080", "localhost"),
        ("LOCALHOST.", "localhost"),
        ("[::1]:8080", "[::1]"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1", None),
        ("localhost:80x", None),
        ("localhost@evil.example", None),
        ("h\u00e9te", None),
        ("", None),
    ],
)
def test_host_names_are_parsed_with_ports_and_ipv6(header: str, name: str | None) -> None:
    assert host_name(header) == name


def test_hosts_match_exactly_or_by_a_subdomain_pattern() -> None:
    assert host_allowed("[::1]", LOCAL) and not host_allowed("attacker.example", LOCAL)
    assert host_allowed("wiki.corp.example", ["*.corp.example"])
    assert not host_allowed("corp.example.evil", ["*.corp.example"])
    assert not host_allowed("evilcorp.example", ["*.corp.example"])
    assert host_allowed("anything", ["*"])


@pytest.mark.parametrize(
    ("origin", "host", "extra", "allowed"),
    [
        ("http://127.0.0.1:8080", "127.0.0.1:8080", [], True),
        ("https://kb.example.com", "kb.example.com", [], True),
        ("http://127.0.0.1:3000", "127.0.0.1:8080", [], False),  # another port is another origin
        ("http://attacker.example", "127.0.0.1:8080", [], False),
        ("null", "127.0.0.1:8080", [], False),
        ("http://127.0.0.1:8080/path", "127.0.0.1:8080", [], False),
        ("https://app.example.com", "gateway:8080", ["https://app.example.com/"], True),
    ],
)
def test_writes_come_from_the_same_origin_or_a_listed_one(origin: str, host: str, extra: list, allowed: bool) -> None:
    assert origin_allowed(origin, host, extra) is allowed


@pytest.mark.parametrize("header", ["Bearer abc-DEF_1.2~3+4/5==", "bearer token", "  Bearer x  "])
def test_well_formed_bearer_headers_pass(header: str) -> None:
    check_authorization(header)


@pytest.mark.parametrize(
    ("header", "status"),
    [
        ("Bearer \u00e9", 400),
        ("Bearer a\x00b", 400),
        ("Bearer a b", 400),
        ("Bearer", 400),
        ("Bearer\u00e9 x", 400),
        ("Basic YWxpY2U6c2VjcmV0", 401),
        ("Token abc", 401),
    ],
)
def test_malformed_or_foreign_authorization_is_refused(header: str, status: int) -> None:
    with pytest.raises(GatewayError) as refused:
        check_authorization(header)
    assert refused.value.status == status
    assert refused.value.headers["WWW-Authenticate"].startswith("Bearer")


def test_401_says_whether_credentials_were_missing_or_wrong() -> None:
    missing, wrong = unauthorized(credentials_sent=False), unauthorized(credentials_sent=True)
    assert missing.message.startswith("credentials required") and wrong.message.startswith("invalid credentials")
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    assert "error=" not in missing.headers["WWW-Authenticate"]


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("/home/alice/weaverbird/demo/kb/en/a.md", "a.md"),
        ("file:///srv/kb/annual%20report.pdf", "annual report.pdf"),
        ("C:\\Users\\alice\\kb\\b.md", "b.md"),
        ("~/kb/c.md", "c.md"),
        ("../../etc/passwd", "passwd"),
        ("demo/kb/en/a.md", "demo/kb/en/a.md"),  # relative to where it was ingested: kept
        ("a.md", "a.md"),
        ("https://example.com/ir/2024.html", "https://example.com/ir/2024.html"),
        ("Northwind FY2024", "Northwind FY2024"),
    ],
)
def test_clients_never_see_absolute_server_paths(stored: str, shown: str) -> None:
    assert without_server_path(stored) == shown


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("report\x00.txt", "report.txt"),
        ("../../etc/cron.d/job.md", "job.md"),
        ("C:\\fakepath\\q3.pdf", "q3.pdf"),
        ("evil\u202etxt.md", "eviltxt.md"),
        ("  spaced   name .md ", "spaced name .md"),
        ("..", ""),
        ("年报 2024.pdf", "年报 2024.pdf"),
    ],
)
def test_upload_names_keep_only_a_clean_last_part(sent: str, kept: str) -> None:
    assert safe_filename(sent) == kept


def test_long_upload_names_keep_their_extension() -> None:
    name = safe_filename("a" * 1000 + ".pdf")
    assert len(name) == MAX_FILENAME_CHARS and name.endswith(".pdf")


def test_titles_and_companies_given_with_a_document_are_shown_on_one_clean_line() -> None:
    meta = DocumentMeta(title="Q3\x00 report\u202e\nfinal", company="  Acme\tCorp ")
    assert meta.title == "Q3 report final" and meta.company == "Acme Corp"


def test_a_default_token_gRPC_could_not_send_is_refused_at_start_without_being_printed() -> None:
    with pytest.raises(ValidationError) as refused:
        GatewaySettings(orchestrator_addr="127.0.0.1:1", ingester_addr="127.0.0.1:2", default_token="sec ret\u00e9")
    assert "RFC 6750" in str(refused.value) and "sec ret" not in str(refused.value)
