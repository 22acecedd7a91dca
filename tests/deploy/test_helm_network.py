"""The chart's NetworkPolicies: who may call each service and where each may connect (egress)."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import chart_tools as ct
import pytest


def test_network_policies_admit_only_callers(render) -> None:
    docs = render("default")
    policies = {ct.component_of(p): p for p in ct.of_kind(docs, "NetworkPolicy")}
    assert set(policies) == set(ct.WORKLOADS)

    def callers(component: str) -> set[str]:
        rule = next(r for r in policies[component]["spec"]["ingress"] if r["ports"][0]["port"] == "grpc")
        return {p["podSelector"]["matchLabels"]["app.kubernetes.io/component"] for p in rule["from"]}

    assert callers("embedder") == {"orchestrator", "ingester"}
    assert callers("retriever") == {"orchestrator", "ingester"}
    assert callers("generator") == {"orchestrator"}
    # The entry points admit `networkPolicy.clients` (this namespace) and, by name, the gateway.
    for component in ("orchestrator", "ingester"):
        rule = next(r for r in policies[component]["spec"]["ingress"] if r["ports"][0]["port"] == "grpc")
        assert {"podSelector": {}} in rule["from"]
        assert "gateway" in {
            p.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/component") for p in rule["from"]
        }
    for policy in policies.values():
        assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
        assert all(rule["from"] for rule in policy["spec"]["ingress"]), "an empty `from` admits everyone"


# Addresses no pod may reach through the "internet" egress rules: pod, service and VPC ranges,
# loopback, cloud metadata, CGNAT, and their IPv6 counterparts.
PRIVATE_ADDRESSES = (
    "10.0.0.1",
    "10.96.0.10",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "127.0.0.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.251",
    "::1",
    "fd00:ec2::254",
    "fe80::1",
    "::ffff:10.0.0.1",
)


def _egress(docs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {ct.component_of(p): p["spec"]["egress"] for p in ct.of_kind(docs, "NetworkPolicy")}


def _admits(peer: dict[str, Any], address: str) -> bool:
    block = peer.get("ipBlock")
    if block is None:
        return False
    ip = ipaddress.ip_address(address)
    network = ipaddress.ip_network(block["cidr"])
    if ip.version != network.version or ip not in network:
        return False
    return not any(ip in ipaddress.ip_network(e) for e in block.get("except", []))


def _targets(rules: list[dict[str, Any]]) -> dict[str, set[Any]]:
    """What each egress rule reaches, keyed by a readable name of its peers, with its ports."""
    out: dict[str, set[Any]] = {}
    for rule in rules:
        for peer in rule["to"]:
            labels = (peer.get("podSelector") or {}).get("matchLabels", {})
            if "k8s-app" in labels:
                key = "dns"
            elif "app.kubernetes.io/component" in labels:
                key = labels["app.kubernetes.io/component"]
            elif "app.kubernetes.io/instance" in labels:
                key = labels["app.kubernetes.io/instance"]
            elif "ipBlock" in peer:
                key = "internet" if peer["ipBlock"].get("except") else f"any:{peer['ipBlock']['cidr']}"
            elif peer.get("namespaceSelector") == {}:
                key = "cluster"
            else:
                key = json.dumps(peer, sort_keys=True)
            out.setdefault(key, set()).update(p["port"] for p in rule.get("ports", []))
    return out


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_egress_rules_always_name_their_peers(render, name: str) -> None:
    """An egress rule without `to` allows every destination; the internet never includes private ranges."""
    for component, rules in _egress(render(name)).items():
        assert rules, component
        assert _targets(rules).get("dns") == {53}, f"{component}: DNS"
        for rule in rules:
            assert rule.get("to"), f"{component}: an egress rule without peers opens everything"
            for peer in rule["to"]:
                if "ipBlock" in peer and peer["ipBlock"].get("except"):
                    leaked = [a for a in PRIVATE_ADDRESSES if _admits(peer, a)]
                    assert not leaked, f"{component}: internet rule admits {leaked}"


def test_egress_reaches_only_peers_and_configured_dependencies(render) -> None:
    default = {c: _targets(r) for c, r in _egress(render("default")).items()}
    assert default["embedder"] == {"dns": {53}}
    assert default["retriever"] == {"dns": {53}}
    assert default["generator"] == {"dns": {53}}  # llama.cpp in the pod: no LLM endpoint
    # No web provider: the orchestrator reaches its three peers and nothing outside.
    assert default["orchestrator"] == {"dns": {53}, "embedder": {"grpc"}, "retriever": {"grpc"}, "generator": {"grpc"}}
    # The ingester fetches the URLs users add.
    assert default["ingester"] == {"dns": {53}, "embedder": {"grpc"}, "retriever": {"grpc"}, "internet": {80, 443}}
    assert default["gateway"] == {"dns": {53}, "orchestrator": {"grpc"}, "ingester": {"grpc"}}

    cpu = {c: _targets(r) for c, r in _egress(render("cpu")).items()}
    kafka = f"{ct.RELEASE}-kafka"
    assert cpu["orchestrator"] == {
        "dns": {53},
        "embedder": {"grpc"},
        "retriever": {"grpc"},
        "generator": {"grpc"},
        kafka: {9092},
        "cluster": {8080},  # the in-cluster SearxNG
        "internet": {80, 443},  # the pages it finds
    }
    assert cpu["ingester"][kafka] == {9092}
    assert kafka not in cpu["embedder"] and "internet" not in cpu["embedder"]

    gpu = {c: _targets(r) for c, r in _egress(render("gpu")).items()}
    assert gpu["generator"] == {"dns": {53}, "llm": {"http"}, "cluster": {4317}}
    assert gpu["retriever"] == {"dns": {53}, f"{ct.RELEASE}-qdrant": {6333}, "cluster": {4317}}
    assert gpu["llm"] == {"dns": {53}, "internet": {80, 443}}  # weights from the Hub
    assert gpu["orchestrator"]["internet"] == {80, 443}  # Tavily and the pages
    assert {c for c, t in gpu.items() if "internet" in t} == {"orchestrator", "ingester", "llm"}
    # The gateway exports no traces: no collector rule even with global.otel.endpoint set.
    assert gpu["gateway"] == {"dns": {53}, "orchestrator": {"grpc"}, "ingester": {"grpc"}}

    vllm = {c: _targets(r) for c, r in _egress(render("vllm")).items()}
    assert vllm["llm"] == {"dns": {53}}  # weights from a volume, the Hub offline

    external = {c: _targets(r) for c, r in _egress(render("external")).items()}
    assert external["generator"]["internet"] == {443}  # https://llm.prod.example.com/v1
    assert external["retriever"]["any:10.30.4.0/24"] == {6333}
    assert external["orchestrator"]["any:10.20.0.0/16"] == {9096}
    assert external["embedder"] == {"dns": {53}, "cluster": {4317}}

    # Values configure the internet: its ports, and whether the ingester fetches URLs.
    docs = render("default", ("networkPolicy.egress.internet.ports[0].port=8443",))
    assert _targets(_egress(docs)["ingester"])["internet"] == {8443}
    docs = render("default", ("networkPolicy.egress.internet.ingester=false",))
    assert "internet" not in _targets(_egress(docs)["ingester"])


def test_egress_can_be_left_open(render) -> None:
    docs = render("default", ("networkPolicy.egress.enabled=false",))
    for policy in ct.of_kind(docs, "NetworkPolicy"):
        assert policy["spec"]["policyTypes"] == ["Ingress"] and "egress" not in policy["spec"]


def test_egress_extra_rules_are_appended(render) -> None:
    docs = render(
        "default",
        (
            "networkPolicy.egress.extra.orchestrator[0].to[0].ipBlock.cidr=10.40.0.0/24",
            "networkPolicy.egress.extra.orchestrator[0].ports[0].port=8443",
        ),
    )
    rules = _egress(docs)["orchestrator"]
    assert rules[-1] == {"to": [{"ipBlock": {"cidr": "10.40.0.0/24"}}], "ports": [{"port": 8443}]}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "networkPolicy.egress.dns.to=null"], "dns"),
        (["--set", "networkPolicy.egress.extra.ingester[0].ports[0].port=443"], "to"),
    ],
)
def test_egress_without_peers_is_refused(helm: str, args: list[str], message: str) -> None:
    ct.assert_refused(helm, args, message)
