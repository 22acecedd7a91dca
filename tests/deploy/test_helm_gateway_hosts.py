"""The chart tells the gateway which host names and origins to serve (GATEWAY_ALLOWED_HOSTS / _ORIGINS),
and the gateway's own settings class reads what the chart renders."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import chart_tools as ct
import pytest
import yaml
from weaverbird_gateway.settings import GatewaySettings
from weaverbird_gateway.sites import host_allowed

SERVICE = f"{ct.RELEASE}-weaverbird-gateway"


def _gateway_env(helm: str, *sets: str) -> dict[str, str]:
    args = [a for s in sets for a in ("--set", s)]
    proc: subprocess.CompletedProcess[str] = ct.run_helm(
        helm, "template", ct.RELEASE, str(ct.CHART), "--namespace", ct.NAMESPACE, *args
    )
    assert proc.returncode == 0, proc.stderr
    docs: list[dict[str, Any]] = [d for d in yaml.safe_load_all(proc.stdout) if d]
    return ct.configmaps(docs)["gateway"]


def _settings(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> GatewaySettings:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return GatewaySettings()  # type: ignore[call-arg]


def test_the_ingress_host_and_the_service_names_are_served(helm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env = _gateway_env(
        helm,
        "gateway.ingress.enabled=true",
        "gateway.ingress.host=kb.example.com",
        "gateway.allowedHosts={*.corp.example}",
        "gateway.allowedOrigins={https://portal.example.com}",
    )
    settings = _settings(env, monkeypatch)
    for name in (
        "kb.example.com",
        SERVICE,
        f"{SERVICE}.{ct.NAMESPACE}.svc.cluster.local",
        "localhost",
        "wiki.corp.example",
    ):
        assert host_allowed(name, settings.allowed_hosts), name
    assert not host_allowed("attacker.example", settings.allowed_hosts)
    assert settings.allowed_origins == ["https://portal.example.com"]


def test_without_an_ingress_only_loopback_and_the_service_are_served(helm: str) -> None:
    hosts = json.loads(_gateway_env(helm)["GATEWAY_ALLOWED_HOSTS"])
    assert "*" not in hosts and "localhost" in hosts and SERVICE in hosts
    assert all("example" not in h for h in hosts)


def test_an_ingress_for_every_host_serves_every_host_unless_names_are_listed(helm: str) -> None:
    every = json.loads(_gateway_env(helm, "gateway.ingress.enabled=true")["GATEWAY_ALLOWED_HOSTS"])
    listed = json.loads(
        _gateway_env(helm, "gateway.ingress.enabled=true", "gateway.allowedHosts={kb.example.com}")[
            "GATEWAY_ALLOWED_HOSTS"
        ]
    )
    assert "*" in every and "*" not in listed and "kb.example.com" in listed


def test_the_default_token_stays_opt_in(helm: str) -> None:
    assert "GATEWAY_DEFAULT_TOKEN" not in _gateway_env(helm)
