"""The chart's configuration: every variable a declared setting the services accept, secrets kept in the
Secret, peer addresses, and the values the chart or its schema refuses."""

from __future__ import annotations

import base64
import importlib
import json
import os

import chart_tools as ct
import pytest
from pydantic import BaseModel
from pydantic_settings import BaseSettings


def _settings_classes() -> dict[str, type[BaseSettings]]:
    classes = {}
    for svc in ct.WORKLOADS:
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


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_env_names_are_declared_settings_and_accepted(render, name: str, monkeypatch) -> None:
    """Every variable the chart sets is a declared setting, and the settings classes accept the values."""
    docs = render(name)
    classes = _settings_classes()
    configs = ct.configmaps(docs)
    deployments = ct.deployments(docs, ct.WORKLOADS)
    for svc, data in configs.items():
        cls = classes[svc]
        secret_env = ct.pod_env(deployments[svc]) if svc in deployments else {}
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
    for key, value in ct.SENTINELS.items():
        assert value not in plain, f"secrets.{key} leaked outside the Secret"
    (secret,) = [d for d in ct.of_kind(docs, "Secret") if ct.component_of(d) == "secrets"]
    decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert set(decoded.values()) == set(ct.SENTINELS.values())

    deployments = ct.deployments(docs)
    refs = {
        svc: {n: e["valueFrom"]["secretKeyRef"] for n, e in ct.pod_env(d).items() if "valueFrom" in e}
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
    assert not ct.of_kind(docs, "Secret")
    names = {
        e["valueFrom"]["secretKeyRef"]["name"]
        for d in ct.deployments(docs).values()
        for e in ct.pod_env(d).values()
        if "valueFrom" in e
    }
    assert names == {"weaverbird-external"}


@pytest.mark.parametrize("name", ct.VALUE_SETS)
def test_peer_addresses_name_rendered_services(render, name: str) -> None:
    docs = render(name)
    services = {s["metadata"]["name"]: {p["port"] for p in s["spec"]["ports"]} for s in ct.of_kind(docs, "Service")}
    for svc, data in ct.configmaps(docs).items():
        for key, value in data.items():
            if key.endswith("_ADDR"):
                host, port = value.rsplit(":", 1)
                assert host in services and int(port) in services[host], f"{svc}: {key}={value}"


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
            ["--set", "gateway.ingress.enabled=true", "--set", f"{ct.BODY_SIZE_KEY}=50m"],
            "proxy-body-size=50m is below gateway.maxUploadMB (50 MiB)",
        ),
        (["--set", "gateway.ingress.enabled=true", "--set", f"{ct.BODY_SIZE_KEY}=big"], "is not an nginx size"),
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
    ct.assert_refused(helm, args, message)


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
    for command in (["template", ct.RELEASE], ["lint"]):
        proc = ct.run_helm(helm, *command, str(ct.CHART), "--set", value)
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
    for command in (["template", ct.RELEASE], ["lint", "--strict"]):
        proc = ct.run_helm(helm, *command, str(ct.CHART), *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_value_sets_use_well_formed_quantities(render) -> None:
    """The shipped value sets pass the new patterns (helm would refuse to render them otherwise)."""
    (pvc,) = ct.of_kind(render("cpu"), "PersistentVolumeClaim")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "20Gi"
