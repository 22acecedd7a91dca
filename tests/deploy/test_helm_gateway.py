"""The chart's HTTP gateway: Deployment, Service, Ingress and the network policies around it."""

from __future__ import annotations

import re

import chart_tools as ct
import pytest
import yaml


def _chart_version() -> str:
    return yaml.safe_load((ct.CHART / "Chart.yaml").read_text())["appVersion"]


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_gateway_is_probed_over_http_and_served_on_port_80(render, name: str) -> None:
    docs = render(name)
    gateway = ct.deployments(docs, ("gateway",))["gateway"]
    (container,) = gateway["spec"]["template"]["spec"]["containers"]
    assert container["image"].split("/")[-2:] == ["weaverbird", f"gateway:{_chart_version()}"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": 8080}, "one HTTP port, no gRPC or metrics port"
    paths = {probe: container[probe]["httpGet"] for probe in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert paths["livenessProbe"]["path"] == "/healthz"
    assert paths["startupProbe"]["path"] == "/healthz"
    assert paths["readinessProbe"]["path"] == "/readyz"
    assert all(p["port"] in ("http", 8080) for p in paths.values())
    # /readyz waits up to GATEWAY_READY_TIMEOUT_S (2 s) on the orchestrator: the probe must wait longer.
    assert container["readinessProbe"]["timeoutSeconds"] > 2
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]

    service = ct.service(docs, "gateway")
    (port,) = service["spec"]["ports"]
    assert port["port"] == 80
    assert ports.get(port["targetPort"], port["targetPort"]) == 8080
    assert service["spec"]["selector"].items() <= gateway["spec"]["template"]["metadata"]["labels"].items()

    env = ct.configmaps(docs)["gateway"]
    assert env["GATEWAY_HOST"] == "0.0.0.0" and env["GATEWAY_PORT"] == "8080"
    for peer in ("orchestrator", "ingester"):
        peer_service = ct.service(docs, peer)
        grpc = next(p["port"] for p in peer_service["spec"]["ports"] if p["name"] == "grpc")
        assert env[f"GATEWAY_{peer.upper()}_ADDR"] == f"{peer_service['metadata']['name']}:{grpc}"
    assert not any(key.startswith(("GATEWAY_GRPC", "GATEWAY_METRICS", "OTEL_")) for key in env)


def test_gateway_upload_limit_and_image_come_from_values(render) -> None:
    env = ct.configmaps(render("default"))["gateway"]
    assert float(env["GATEWAY_MAX_UPLOAD_MB"]) == 50
    docs = render(
        "default", ("gateway.maxUploadMB=20", "global.image.registry=ghcr.io/acme", "gateway.image.tag=1.2.3")
    )
    assert ct.configmaps(docs)["gateway"]["GATEWAY_MAX_UPLOAD_MB"] == "20"
    (container,) = ct.deployments(docs, ("gateway",))["gateway"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "ghcr.io/acme/weaverbird/gateway:1.2.3"
    assert not ct.of_kind(render("default", ("gateway.enabled=false",)), "Ingress")
    assert "gateway" not in ct.deployments(render("default", ("gateway.enabled=false",)), ct.WORKLOADS)


def _nginx_size_bytes(value: str) -> int:
    match = re.fullmatch(r"(\d+)([kmg]?)", value.lower())
    assert match, value
    return int(match.group(1)) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[match.group(2)]


def test_gateway_ingress_is_off_by_default_and_streams_when_on(render) -> None:
    assert not ct.of_kind(render("default"), "Ingress")
    docs = render("gateway")
    (ingress,) = ct.of_kind(docs, "Ingress")
    spec = ingress["spec"]
    assert spec["ingressClassName"] == "nginx"
    (rule,) = spec["rules"]
    assert rule["host"] == "weaverbird.example.com"
    assert spec["tls"] == [{"hosts": ["weaverbird.example.com"], "secretName": "weaverbird-example-com-tls"}]
    (path,) = rule["http"]["paths"]
    assert path["path"] == "/" and path["pathType"] == "Prefix"
    service = ct.service(docs, "gateway")
    assert path["backend"]["service"]["name"] == service["metadata"]["name"]
    assert path["backend"]["service"]["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}

    annotations = ingress["metadata"]["annotations"]
    assert annotations[f"{ct.NGINX}proxy-buffering"] == "off", "SSE tokens must not wait in a proxy buffer"
    assert int(annotations[f"{ct.NGINX}proxy-read-timeout"]) >= 600
    assert annotations["cert-manager.io/cluster-issuer"] == "letsencrypt-prod"  # values add to the defaults
    upload_mb = float(ct.configmaps(docs)["gateway"]["GATEWAY_MAX_UPLOAD_MB"])
    assert upload_mb == 100
    # The gateway takes the file plus 64 KiB of multipart framing; nginx must let at least that through.
    assert _nginx_size_bytes(annotations[f"{ct.NGINX}proxy-body-size"]) >= upload_mb * 1024**2 + 64 * 1024

    # Defaults: every host, no TLS, a body limit derived from the default upload limit.
    (plain,) = ct.of_kind(render("default", ("gateway.ingress.enabled=true",)), "Ingress")
    assert "host" not in plain["spec"]["rules"][0] and "tls" not in plain["spec"]
    assert plain["metadata"]["annotations"][f"{ct.NGINX}proxy-body-size"] == "51m"
    # An explicit, large enough limit is kept; "0" (no limit) too.
    for size in ("64m", "0"):
        (given,) = ct.of_kind(
            render("default", ("gateway.ingress.enabled=true", f"{ct.BODY_SIZE_KEY}={size}")), "Ingress"
        )
        assert given["metadata"]["annotations"][f"{ct.NGINX}proxy-body-size"] == size


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_gateway_reaches_only_orchestrator_and_ingester(render, name: str) -> None:
    """Both ends agree: the gateway's egress names only DNS, the orchestrator and the ingester, and of all
    the WeaverBird policies only those two admit the gateway's pods to a service port."""
    docs = render(name)
    policies = {ct.component_of(p): p for p in ct.of_kind(docs, "NetworkPolicy")}
    gateway = ct.pod_labels(docs, "gateway")
    peers_of = {c: ct.pod_labels(docs, c) for c in ct.deployments(docs, (*ct.WORKLOADS, "llm"))}

    reached = set()
    for rule in policies["gateway"]["spec"]["egress"]:
        assert all("ipBlock" not in peer for peer in rule["to"]), "no address ranges from the gateway"
        for peer in rule["to"]:
            if ct.selects(peer.get("podSelector"), {"k8s-app": "kube-dns"}) and "namespaceSelector" in peer:
                assert {p["port"] for p in rule["ports"]} == {53}
                continue
            hits = {c for c, labels in peers_of.items() if ct.peer_admits(peer, ct.NAMESPACE, ct.NAMESPACE, labels)}
            assert len(hits) == 1, f"an egress peer of the gateway selects {hits}"
            assert [p["port"] for p in rule["ports"]] == ["grpc"]
            reached |= hits
    assert reached == {"orchestrator", "ingester"}

    # The metrics scrapers (default: every namespace) are admitted to the metrics ports, and to the LLM
    # server's one HTTP port; the gateway's own egress keeps it off those.
    scrapers = yaml.safe_load((ct.CHART / "values.yaml").read_text())["networkPolicy"]["metricsScrapers"]
    admitting = set()
    for component, policy in policies.items():
        for rule in policy["spec"]["ingress"]:
            if [p["port"] for p in rule["ports"]] == ["metrics"]:
                continue
            named = [peer for peer in rule["from"] if peer not in scrapers]
            if any(ct.peer_admits(peer, ct.NAMESPACE, ct.NAMESPACE, gateway) for peer in named):
                assert [p["port"] for p in rule["ports"]] == ["grpc"], component
                admitting.add(component)
    assert admitting == {"orchestrator", "ingester"}


def test_gateway_accepts_http_only_from_its_clients(render) -> None:
    docs = render("default")
    policies = {ct.component_of(p): p for p in ct.of_kind(docs, "NetworkPolicy")}
    (rule,) = policies["gateway"]["spec"]["ingress"]  # no metrics port to admit scrapers to
    assert rule["ports"] == [{"port": "http", "protocol": "TCP"}]
    controller = {"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"}
    assert any(ct.peer_admits(p, ct.NAMESPACE, "ingress-nginx", controller) for p in rule["from"])
    neighbour = ct.pod_labels(docs, "orchestrator")
    assert not any(ct.peer_admits(p, ct.NAMESPACE, ct.NAMESPACE, neighbour) for p in rule["from"])

    # The CI set narrows the sources to the controller pods: other pods of that namespace stay out.
    (narrow,) = {ct.component_of(p): p for p in ct.of_kind(render("gateway"), "NetworkPolicy")}["gateway"]["spec"][
        "ingress"
    ]
    assert any(ct.peer_admits(p, ct.NAMESPACE, "ingress-nginx", controller) for p in narrow["from"])
    assert not any(ct.peer_admits(p, ct.NAMESPACE, "ingress-nginx", {"app": "other"}) for p in narrow["from"])

    # Narrowing the entry points' clients to another namespace still lets the gateway in.
    docs = render(
        "default", ("networkPolicy.clients[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=api",)
    )
    gateway = ct.pod_labels(docs, "gateway")
    for component in ("orchestrator", "ingester"):
        policy = next(p for p in ct.of_kind(docs, "NetworkPolicy") if ct.component_of(p) == component)
        rule = next(r for r in policy["spec"]["ingress"] if r["ports"][0]["port"] == "grpc")
        assert any(ct.peer_admits(p, ct.NAMESPACE, ct.NAMESPACE, gateway) for p in rule["from"]), component
        assert not any(ct.peer_admits(p, ct.NAMESPACE, ct.NAMESPACE, {"app": "stranger"}) for p in rule["from"]), (
            component
        )

    # No clients at all: the rule is left out (an empty `from` would admit everyone).
    docs = render("default", ("networkPolicy.gatewayClients=null",))
    policy = next(p for p in ct.of_kind(docs, "NetworkPolicy") if ct.component_of(p) == "gateway")
    assert policy["spec"]["ingress"] == []
