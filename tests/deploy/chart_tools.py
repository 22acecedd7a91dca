"""What the Helm chart tests share: the chart, its value sets, rendering through helm and lookups in the
rendered manifests (the `render` fixture is in conftest.py)."""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from kubernetes_validate.utils import latest_version

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "weaverbird"
DASHBOARD = REPO / "deploy" / "grafana" / "weaverbird-dashboard.json"
CHART_DASHBOARD = CHART / "dashboards" / "weaverbird-dashboard.json"
METRICS = REPO / "deploy" / "metrics.json"

SERVICES = ("embedder", "retriever", "generator", "orchestrator", "ingester")
# The gRPC services plus the HTTP gateway in front of them: every WeaverBird Deployment and settings class.
WORKLOADS = (*SERVICES, "gateway")
NAMESPACE = "weaverbird-test"
RELEASE = "wb"
# Oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and the newest schema available.
KUBE_VERSIONS = ("1.27.0", latest_version())
# Custom resources have no schema in kubernetes-validate; they are checked structurally below instead.
CRD_KINDS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("ray.io/v1", "RayService"),
    ("cert-manager.io/v1", "Certificate"),
    ("kafka.strimzi.io/v1beta2", "KafkaUser"),
}
ALERT_RULES = REPO / "deploy" / "prometheus" / "weaverbird-alerts.yaml"

# --set path of the ingress-nginx request body limit on the gateway's Ingress.
BODY_SIZE_KEY = "gateway.ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-body-size"
NGINX = "nginx.ingress.kubernetes.io/"

SENTINELS = {
    "webApiKey": "sentinel-web-api-key-5f1e",
    "kafkaSaslPassword": "sentinel-kafka-password-a9c2",
    "kafkaSigningKey": "sentinel-kafka-signing-key-4e8a-0123456789",
    "qdrantApiKey": "sentinel-qdrant-key-77d0",
    "generatorApiKey": "sentinel-generator-key-31bb",
    "huggingfaceToken": "sentinel-hf-token-0c4d",
}

# name -> (values files under ci/, --set arguments)
VALUE_SETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "default": ((), ()),
    "cpu": (("cpu-values.yaml",), ()),
    "gpu": (("gpu-values.yaml",), ()),
    "vllm": (("vllm-values.yaml",), ()),
    "external": (("external-values.yaml",), ()),
    "ray": (("ray-values.yaml",), ()),
    "gateway": (("gateway-values.yaml",), ()),
    # mTLS from cert-manager, a rendered access policy, Strimzi users per component.
    "secure": (("secure-values.yaml",), ()),
    # Every secret-backed feature on, with a chart-managed Secret holding recognisable values.
    "secrets": (
        (),
        (
            *(f"secrets.{key}={value}" for key, value in SENTINELS.items()),
            "orchestrator.web.provider=brave",
            "retriever.store=server",
            "retriever.qdrant.url=http://qdrant.db:6333",
            "generator.endpoint=https://llm.example.com/v1",
            "kafkaConnection.bootstrapServers=kafka-0.kafka:9093",
            "kafkaConnection.securityProtocol=SASL_SSL",
            "kafkaConnection.saslMechanism=SCRAM-SHA-512",
            "kafkaConnection.saslUsername=weaverbird",
        ),
    ),
}


# --------------------------------------------------------------------------------------------------
# helm and rendering


def value_args(name: str) -> list[str]:
    files, sets = VALUE_SETS[name]
    args: list[str] = []
    for f in files:
        args += ["-f", str(CHART / "ci" / f)]
    for s in sets:
        args += ["--set", s]
    return args


def run_helm(helm_bin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm_bin, *args], capture_output=True, text=True, timeout=120, check=False)


@functools.cache
def render_cached(helm_bin: str, name: str, sets: tuple[str, ...] = ()) -> tuple[dict[str, Any], ...]:
    extra = [arg for s in sets for arg in ("--set", s)]
    proc = run_helm(helm_bin, "template", RELEASE, str(CHART), "--namespace", NAMESPACE, *value_args(name), *extra)
    assert proc.returncode == 0, f"helm template ({name} {sets}) failed:\n{proc.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(proc.stdout) if doc)


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def component_of(doc: dict[str, Any]) -> str:
    return doc["metadata"]["labels"]["app.kubernetes.io/component"]


def deployments(docs: list[dict[str, Any]], components=SERVICES) -> dict[str, dict[str, Any]]:
    return {component_of(d): d for d in of_kind(docs, "Deployment") if component_of(d) in components}


def configmaps(docs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Settings ConfigMaps by component (the dashboard ConfigMap is left out)."""
    return {component_of(d): d.get("data") or {} for d in of_kind(docs, "ConfigMap") if component_of(d) in WORKLOADS}


def pod_specs(docs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every pod template: Deployments and the RayService head and worker groups."""
    for d in of_kind(docs, "Deployment"):
        yield d["metadata"]["name"], d["spec"]["template"]["spec"]
    for d in of_kind(docs, "RayService"):
        cluster = d["spec"]["rayClusterConfig"]
        yield f"{d['metadata']['name']}/head", cluster["headGroupSpec"]["template"]["spec"]
        for group in cluster["workerGroupSpecs"]:
            yield f"{d['metadata']['name']}/{group['groupName']}", group["template"]["spec"]


# --------------------------------------------------------------------------------------------------


def service(docs: list[dict[str, Any]], component: str) -> dict[str, Any]:
    (service,) = [s for s in of_kind(docs, "Service") if component_of(s) == component]
    return service


def selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    assert "matchExpressions" not in (selector or {}), "extend selects for matchExpressions"
    return (selector or {}).get("matchLabels", {}).items() <= labels.items()


def peer_admits(peer: dict[str, Any], policy_namespace: str, namespace: str, labels: dict[str, str]) -> bool:
    """Whether a NetworkPolicy peer covers a pod with `labels` in `namespace` (ipBlocks never do here)."""
    if "ipBlock" in peer:
        return False
    if "namespaceSelector" in peer:
        in_namespace = selects(peer["namespaceSelector"], {"kubernetes.io/metadata.name": namespace})
    else:
        in_namespace = namespace == policy_namespace
    return in_namespace and selects(peer.get("podSelector"), labels)


def pod_labels(docs: list[dict[str, Any]], component: str) -> dict[str, str]:
    deployment = deployments(docs, (component,))[component]
    return deployment["spec"]["template"]["metadata"]["labels"]


def pod_env(deployment: dict[str, Any]) -> dict[str, Any]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e for e in container.get("env", [])}


def assert_refused(helm_bin: str, args: list[str], message: str) -> None:
    """`helm template` with `args` fails and says `message`."""
    proc = run_helm(helm_bin, "template", RELEASE, str(CHART), *args)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr
