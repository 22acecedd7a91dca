"""The local stack's security files: what `weaverbird up` writes and how the CLI finds them."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from weaverbird_cli.security import LocalSecurity, cli_credentials
from weaverbird_cli.stack import SERVICES
from weaverbird_common.auth import token_digest


def test_up_writes_certificates_owner_only_tokens_and_a_policy_of_digests(tmp_path: Path) -> None:
    security = LocalSecurity.create(tmp_path / "tls", SERVICES)
    for identity in (*SERVICES, "launcher", "cli", "gateway"):
        files = security.files(identity)
        assert files.cert.exists() and stat.S_IMODE(files.key.stat().st_mode) == 0o600
    policy = json.loads(security.policy.read_text())
    assert stat.S_IMODE(security.policy.stat().st_mode) == 0o600
    cli_token = security.token("cli")
    text = security.policy.read_text()
    assert cli_token not in text and token_digest(cli_token) in text  # digests only, never tokens
    assert policy["certificates"]["ingester"] == ["service", "admin"]
    assert policy["certificates"]["orchestrator"] == ["service"]
    assert "cli" not in policy["certificates"]  # the CLI's certificate opens TLS; its token names its roles
    # A second start keeps the tokens (a CLI session stays valid) and the CA.
    ca = security.files("cli").ca.read_bytes()
    again = LocalSecurity.create(tmp_path / "tls", SERVICES)
    assert again.token("cli") == cli_token and again.files("cli").ca.read_bytes() == ca


def test_the_cli_uses_the_local_files_only_when_up_made_them(tmp_path: Path) -> None:
    assert cli_credentials(tmp_path) is None
    LocalSecurity.create(tmp_path / "tls", SERVICES)
    assert cli_credentials(tmp_path) is not None
