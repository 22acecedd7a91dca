"""The Helm chart's mutual TLS, access policy and Kafka users (values `tls`, `auth`, `kafkaConnection.users`,
`kafka.strimziUsers`): what each pod mounts and is told, the certificates the chart issues (checked with a
real mTLS handshake and the services' own auth interceptor), cert-manager Certificates, Strimzi KafkaUsers
and the combinations the chart refuses.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import chart_tools as ct
import grpc
import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from weaverbird_common.auth import Authenticator, AuthInterceptor, token_digest
from weaverbird_common.tls import TlsFiles, channel_credentials, server_credentials

TLS_DIR = "/etc/weaverbird/tls"
POLICY = "/etc/weaverbird/auth/policy.json"
HEALTH_PORT = 50052
SEARCH = "/weaverbird.v1.RetrieverService/Search"
DELETE = "/weaverbird.v1.RetrieverService/DeleteDocument"
ASK = "/weaverbird.v1.OrchestratorService/Ask"
# Tokens held by people; the chart only ever sees their digests.
TOKENS = {"analyst": "sentinel-token-ask-8d1f", "editor": "sentinel-token-add-52ce"}
AUTH_FROM_VALUES = (
    "auth.enabled=true",
    f"auth.tokens[0].name=analyst,auth.tokens[0].sha256={token_digest(TOKENS['analyst'])}",
    "auth.tokens[0].roles={ask}",
    f"auth.tokens[1].name=editor,auth.tokens[1].sha256={token_digest(TOKENS['editor']).upper()}",
    "auth.tokens[1].roles={add}",
)
CERT_MANAGER = (
    "tls.certManager.enabled=true",
    "tls.certManager.issuerRef.name=weaverbird-ca",
)
EXISTING = tuple(f"tls.existingSecrets.{c}=tls-of-{c}" for c in ct.WORKLOADS)


def _template(helm: str, *sets: str, files: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    args = [a for f in files for a in ("-f", str(ct.CHART / "ci" / f))]
    args += [a for s in sets for a in ("--set", s)]
    return ct.run_helm(helm, "template", ct.RELEASE, str(ct.CHART), "--namespace", ct.NAMESPACE, *args)


def _render(helm: str, *sets: str, files: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    proc = _template(helm, *sets, files=files)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def _secret_volumes(deployment: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v["secret"] for v in deployment["spec"]["template"]["spec"]["volumes"] if "secret" in v}


def _mounts(deployment: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in _container(deployment).get("volumeMounts", [])}


def _service_names(docs: list[dict[str, Any]], component: str) -> list[str]:
    (service,) = [s for s in ct.of_kind(docs, "Service") if ct.component_of(s) == component]
    name = service["metadata"]["name"]
    return [name, f"{name}.{ct.NAMESPACE}", f"{name}.{ct.NAMESPACE}.svc", f"{name}.{ct.NAMESPACE}.svc.cluster.local"]


def _check_tls_wiring(docs: list[dict[str, Any]]) -> dict[str, str]:
    """Every workload mounts its certificate read-only and is told where it is; returns component -> Secret."""
    configs = ct.configmaps(docs)
    secrets = {}
    for component, deployment in ct.deployments(docs, ct.WORKLOADS).items():
        prefix = component.upper()
        env = configs[component]
        assert env[f"{prefix}_TLS_CERT_FILE"] == f"{TLS_DIR}/tls.crt", component
        assert env[f"{prefix}_TLS_KEY_FILE"] == f"{TLS_DIR}/tls.key", component
        assert env[f"{prefix}_TLS_CA_FILE"] == f"{TLS_DIR}/ca.crt", component
        mount = _mounts(deployment)["tls"]
        assert mount["mountPath"] == TLS_DIR and mount["readOnly"] is True, component
        volume = _secret_volumes(deployment)["tls"]
        assert {i["key"] for i in volume["items"]} == {"tls.crt", "tls.key", "ca.crt"}, component
        assert volume["defaultMode"] == 0o440, "the key is readable by the pod's group only"
        secrets[component] = volume["secretName"]
        if component == "gateway":
            assert not any(k.startswith("GATEWAY_HEALTH") for k in env)
            continue
        # kubelet cannot present a certificate: every probe targets the plaintext health port.
        assert env[f"{prefix}_HEALTH_PORT"] == str(HEALTH_PORT)
        container = _container(deployment)
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == HEALTH_PORT, f"{component} {probe}"
    return secrets


# --------------------------------------------------------------------------------------------------
# TLS: the chart's own CA (default), cert-manager, existing Secrets


def _decode_certificates(docs: list[dict[str, Any]]) -> dict[str, dict[str, bytes]]:
    return {
        d["metadata"]["name"]: {k: base64.b64decode(v) for k, v in d["data"].items()}
        for d in ct.of_kind(docs, "Secret")
        if d.get("type") == "kubernetes.io/tls"
    }


def test_tls_is_on_by_default_with_certificates_the_chart_issues(helm: str) -> None:
    docs = _render(helm)
    secrets = _check_tls_wiring(docs)
    assert set(secrets) == set(ct.WORKLOADS)
    issued = _decode_certificates(docs)
    (ca_name,) = [n for n in issued if n.endswith("-tls-ca")]
    ca = x509.load_pem_x509_certificate(issued[ca_name]["tls.crt"])
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    deployments = ct.deployments(docs, ct.WORKLOADS)
    for component, secret_name in secrets.items():
        data = issued[secret_name]
        assert data["ca.crt"] == issued[ca_name]["tls.crt"], component
        cert = x509.load_pem_x509_certificate(data["tls.crt"])
        cert.verify_directly_issued_by(ca)
        # The common name is the identity a callee sees; the DNS names are the Service's.
        assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == component
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert names.get_values_for_type(x509.DNSName) == _service_names(docs, component)
        usages = set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
        assert {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH} <= usages, component
        # One set of certificates per render: the pods' checksum is that of the Secret they mount.
        rendered = next(d for d in ct.of_kind(docs, "Secret") if d["metadata"]["name"] == secret_name)
        digest = hashlib.sha256(json.dumps(rendered["data"], sort_keys=True, separators=(",", ":")).encode())
        annotations = deployments[component]["spec"]["template"]["metadata"]["annotations"]
        assert annotations["checksum/tls"] == digest.hexdigest(), component
    assert not ct.of_kind(docs, "Certificate")


def test_tls_off_leaves_plain_grpc_and_grpc_port_probes(helm: str) -> None:
    docs = _render(helm, "tls.enabled=false")
    assert not ct.of_kind(docs, "Secret")
    for component, deployment in ct.deployments(docs, ct.WORKLOADS).items():
        assert not any("_TLS_" in k or "_HEALTH_PORT" in k for k in ct.configmaps(docs)[component]), component
        assert "tls" not in _secret_volumes(deployment)
        if component != "gateway":
            assert _container(deployment)["readinessProbe"]["grpc"]["port"] == 50051


def test_cert_manager_issues_one_certificate_per_component(helm: str) -> None:
    docs = _render(helm, *CERT_MANAGER, "tls.certManager.issuerRef.kind=Issuer")
    secrets = _check_tls_wiring(docs)
    certificates = {ct.component_of(c): c for c in ct.of_kind(docs, "Certificate")}
    assert set(certificates) == set(ct.WORKLOADS)
    for component, certificate in certificates.items():
        spec = certificate["spec"]
        assert spec["commonName"] == component
        assert spec["dnsNames"] == _service_names(docs, component)
        assert {"server auth", "client auth"} <= set(spec["usages"]), component
        assert spec["secretName"] == secrets[component], "the pod mounts what cert-manager writes"
        assert spec["issuerRef"] == {"name": "weaverbird-ca", "kind": "Issuer", "group": "cert-manager.io"}
        assert spec["privateKey"]["rotationPolicy"] == "Always"
    assert not [s for s in ct.of_kind(docs, "Secret") if s.get("type") == "kubernetes.io/tls"]
    # cert-manager renews on its own: no checksum of certificates the chart never sees.
    for deployment in ct.deployments(docs, ct.WORKLOADS).values():
        assert "checksum/tls" not in deployment["spec"]["template"]["metadata"]["annotations"]


def test_existing_secrets_are_mounted_and_nothing_is_issued(helm: str) -> None:
    docs = _render(helm, *EXISTING)
    secrets = _check_tls_wiring(docs)
    assert secrets == {c: f"tls-of-{c}" for c in ct.WORKLOADS}
    assert not ct.of_kind(docs, "Secret") and not ct.of_kind(docs, "Certificate")


def test_entry_points_may_take_clients_without_certificates(helm: str) -> None:
    configs = ct.configmaps(_render(helm, "tls.entryPointsRequireClientCert=false"))
    for component in ct.SERVICES:
        required = configs[component][f"{component.upper()}_TLS_REQUIRE_CLIENT_CERT"]
        assert required == ("false" if component in ("orchestrator", "ingester") else "true"), component


def test_health_port_is_neither_served_nor_admitted(helm: str) -> None:
    """Only kubelet (from the node, which NetworkPolicies do not filter) reaches the plaintext health port."""
    docs = _render(helm)
    for service in ct.of_kind(docs, "Service"):
        for port in service["spec"]["ports"]:
            assert port["targetPort"] != "health" and port["port"] != HEALTH_PORT, service["metadata"]["name"]
    for policy in ct.of_kind(docs, "NetworkPolicy"):
        for rule in policy["spec"]["ingress"]:
            assert {p["port"] for p in rule["ports"]} <= {"grpc", "metrics", "http"}, policy["metadata"]["name"]


async def test_chart_certificates_and_policy_work_with_the_services_auth(helm: str, tmp_path: Path) -> None:
    """A real mTLS handshake with the certificates and the policy the chart renders: peers are verified
    against the Service names, and each identity gets exactly the roles of auth.certificates / auth.tokens."""
    docs = _render(helm, *AUTH_FROM_VALUES)
    issued = _decode_certificates(docs)
    files: dict[str, TlsFiles] = {}
    for component, secret_name in _check_tls_wiring(docs).items():
        for key, data in issued[secret_name].items():
            (tmp_path / f"{component}-{key}").write_bytes(data)
        files[component] = TlsFiles(*(tmp_path / f"{component}-{k}" for k in ("tls.crt", "tls.key", "ca.crt")))
    (policy_secret,) = [s for s in ct.of_kind(docs, "Secret") if ct.component_of(s) == "auth"]
    policy = tmp_path / "policy.json"
    policy.write_bytes(base64.b64decode(policy_secret["data"]["policy.json"]))

    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    handlers = {m.rsplit("/", 1)[1]: grpc.unary_unary_rpc_method_handler(echo) for m in (SEARCH, DELETE)}
    server = grpc.aio.server(interceptors=[AuthInterceptor(Authenticator.from_file(policy))])
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("weaverbird.v1.RetrieverService", handlers)])
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_secure_port("127.0.0.1:0", server_credentials(files["retriever"]))
    await server.start()
    retriever_name = _service_names(docs, "retriever")[0]

    async def call(identity: str, method: str, *, token: str | None = None, name: str = retriever_name) -> Any:
        creds = channel_credentials(files[identity].ca, files[identity])
        if token:
            creds = grpc.composite_channel_credentials(creds, grpc.access_token_call_credentials(token))
        options = [("grpc.ssl_target_name_override", name)]
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}", creds, options=options) as channel:
            try:
                if method == "health":
                    stub = health_pb2_grpc.HealthStub(channel)
                    return (await stub.Check(health_pb2.HealthCheckRequest(), timeout=10)).status
                return await channel.unary_unary(method)(b"q", timeout=10)
            except grpc.aio.AioRpcError as exc:
                return exc.code()

    try:
        assert await call("orchestrator", SEARCH) == b"q"  # service role by certificate
        assert await call("orchestrator", DELETE) == grpc.StatusCode.PERMISSION_DENIED
        assert await call("ingester", DELETE) == b"q"  # the KB's delete: service + admin
        assert await call("gateway", SEARCH) == grpc.StatusCode.UNAUTHENTICATED  # no role of its own
        assert await call("gateway", SEARCH, token=TOKENS["analyst"]) == grpc.StatusCode.PERMISSION_DENIED
        assert await call("gateway", "health") == health_pb2.HealthCheckResponse.SERVING
        # The certificate names the retriever's Service, not another one.
        wrong = _service_names(docs, "generator")[0]
        assert await call("orchestrator", "health", name=wrong) == grpc.StatusCode.UNAVAILABLE
    finally:
        await server.stop(0)


# --------------------------------------------------------------------------------------------------
# Access policy


def _policy(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (secret,) = [s for s in ct.of_kind(docs, "Secret") if ct.component_of(s) == "auth"]
    assert set(secret["data"]) == {"policy.json"}
    return json.loads(base64.b64decode(secret["data"]["policy.json"]))


def _check_policy_mounted(docs: list[dict[str, Any]], secret_name: str) -> None:
    configs = ct.configmaps(docs)
    for component, deployment in ct.deployments(docs, ct.WORKLOADS).items():
        if component == "gateway":
            # It forwards its users' tokens: no policy of its own.
            assert "auth-policy" not in _secret_volumes(deployment)
            assert not any("AUTH_POLICY" in k for k in configs[component])
            continue
        assert configs[component][f"{component.upper()}_AUTH_POLICY_FILE"] == POLICY
        assert _secret_volumes(deployment)["auth-policy"]["secretName"] == secret_name, component
        mount = _mounts(deployment)["auth-policy"]
        assert mount["readOnly"] is True and POLICY.startswith(mount["mountPath"] + "/")


def test_policy_rendered_from_values_holds_digests_and_service_roles(helm: str) -> None:
    docs = _render(helm, *AUTH_FROM_VALUES, "auth.certificates.ops-cli={admin}")
    policy = _policy(docs)
    assert policy["tokens"] == [
        {"name": "analyst", "sha256": token_digest(TOKENS["analyst"]), "roles": ["ask"]},
        {"name": "editor", "sha256": token_digest(TOKENS["editor"]), "roles": ["add"]},  # lower-cased
    ]
    assert policy["certificates"] == {
        "embedder": ["service"],
        "retriever": ["service"],
        "generator": ["service"],
        "orchestrator": ["service"],
        "ingester": ["service", "admin"],
        "ops-cli": ["admin"],
    }
    # The services' own parser takes it: the ingester's certificate carries admin.
    identity = Authenticator({}, policy["certificates"]).identify([], ["ingester"])
    assert identity is not None and identity.may("admin") and identity.may("service")
    (secret,) = [s for s in ct.of_kind(docs, "Secret") if ct.component_of(s) == "auth"]
    _check_policy_mounted(docs, secret["metadata"]["name"])
    # A changed policy rolls the pods (they read it once at start).
    other = _render(helm, *AUTH_FROM_VALUES, "auth.tokens[1].roles={admin}")
    for component in ct.SERVICES:
        before = ct.deployments(docs)[component]["spec"]["template"]["metadata"]["annotations"]
        after = ct.deployments(other)[component]["spec"]["template"]["metadata"]["annotations"]
        assert before["checksum/auth-policy"] != after["checksum/auth-policy"], component


def test_policy_from_an_existing_secret(helm: str) -> None:
    docs = _render(helm, "auth.enabled=true", "auth.existingSecret=team-policy")
    assert not [s for s in ct.of_kind(docs, "Secret") if ct.component_of(s) == "auth"]
    _check_policy_mounted(docs, "team-policy")


def test_no_token_reaches_the_rendered_manifests(helm: str) -> None:
    """Values carry digests only; the gateway's default token is a reference to a Secret."""
    docs = _render(helm, *AUTH_FROM_VALUES, "gateway.defaultTokenSecret.name=single-user")
    rendered = json.dumps(docs)
    decoded = "".join(base64.b64decode(v).decode() for s in ct.of_kind(docs, "Secret") for v in s["data"].values())
    for token in TOKENS.values():
        assert token not in rendered and token not in decoded
    env = ct.pod_env(ct.deployments(docs, ("gateway",))["gateway"])
    assert env["GATEWAY_DEFAULT_TOKEN"]["valueFrom"]["secretKeyRef"] == {
        "name": "single-user",
        "key": "token",
        "optional": False,
    }
    assert "GATEWAY_DEFAULT_TOKEN" not in ct.configmaps(docs)["gateway"]
    assert "GATEWAY_DEFAULT_TOKEN" not in ct.pod_env(ct.deployments(_render(helm), ("gateway",))["gateway"])


# --------------------------------------------------------------------------------------------------
# Kafka users


def _acls(user: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (acl["resource"]["type"], acl["resource"]["name"], op)
        for acl in user["spec"]["authorization"]["acls"]
        for op in acl["operations"]
    }


def test_strimzi_users_let_only_the_orchestrator_write_the_ingest_topic(helm: str) -> None:
    docs = _render(helm, files=("secure-values.yaml",))
    users = {ct.component_of(u): u for u in ct.of_kind(docs, "KafkaUser")}
    assert set(users) == {"orchestrator", "ingester"}
    for user in users.values():
        assert user["metadata"]["labels"]["strimzi.io/cluster"] == "events"
        assert user["spec"]["authentication"] == {"type": "scram-sha-512"}
        assert user["spec"]["authorization"]["type"] == "simple"
        assert all(a["resource"]["patternType"] == "literal" for a in user["spec"]["authorization"]["acls"])
    ingest, dlq = "weaverbird.ingest.v1", "weaverbird.ingest.dlq.v1"
    writers = {c for c, u in users.items() if ("topic", ingest, "Write") in _acls(u)}
    assert writers == {"orchestrator"}
    assert _acls(users["ingester"]) >= {
        ("topic", ingest, "Read"),
        ("group", "weaverbird-ingester", "Read"),
        ("topic", dlq, "Write"),
    }
    assert not any(op == "Read" or name == dlq for _, name, op in _acls(users["orchestrator"]))
    # The services log in as those users, with the passwords Strimzi writes under the same names.
    configs = ct.configmaps(docs)
    for component, user in users.items():
        name = user["metadata"]["name"]
        assert configs[component][f"{component.upper()}_KAFKA__SASL_USERNAME"] == name
        ref = ct.pod_env(ct.deployments(docs)[component])[f"{component.upper()}_KAFKA__SASL_PASSWORD"]
        assert ref["valueFrom"]["secretKeyRef"] == {"name": name, "key": "password", "optional": False}
    # A changed consumer group follows into the ACL.
    docs = _render(helm, "ingester.env.INGESTER_KAFKA__GROUP_ID=kb-writers", files=("secure-values.yaml",))
    (ingester,) = [u for u in ct.of_kind(docs, "KafkaUser") if ct.component_of(u) == "ingester"]
    assert ("group", "kb-writers", "Read") in _acls(ingester)


def test_per_component_kafka_users_from_your_secrets(helm: str) -> None:
    docs = _render(
        helm,
        "kafkaConnection.bootstrapServers=kafka-0.kafka:9093",
        "kafkaConnection.securityProtocol=SASL_SSL",
        "kafkaConnection.saslMechanism=SCRAM-SHA-512",
        "kafkaConnection.users.orchestrator.username=wb-publisher",
        "kafkaConnection.users.orchestrator.passwordSecret.name=kafka-publisher",
        "kafkaConnection.users.ingester.username=wb-consumer",
        "kafkaConnection.users.ingester.passwordSecret.name=kafka-consumer",
        "kafkaConnection.users.ingester.passwordSecret.key=pw",
    )
    assert not ct.of_kind(docs, "KafkaUser")
    configs = ct.configmaps(docs)
    expected = {
        "orchestrator": ("wb-publisher", "kafka-publisher", "password"),
        "ingester": ("wb-consumer", "kafka-consumer", "pw"),
    }
    for component, (username, secret, key) in expected.items():
        prefix = component.upper()
        assert configs[component][f"{prefix}_KAFKA__SASL_USERNAME"] == username
        ref = ct.pod_env(ct.deployments(docs)[component])[f"{prefix}_KAFKA__SASL_PASSWORD"]["valueFrom"]["secretKeyRef"]
        assert (ref["name"], ref["key"]) == (secret, key)


# --------------------------------------------------------------------------------------------------
# Refusals


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (("tls.selfSigned.enabled=false",), "tls.enabled needs a certificate source"),
        (("tls.certManager.enabled=true",), "needs tls.certManager.issuerRef.name"),
        ((*CERT_MANAGER, "tls.existingSecrets.gateway=gw"), "not both"),
        (("tls.existingSecrets.orchestrator=orch-tls",), "embedder has no Secret"),
        (("embedder.rayService.enabled=true",), "serves plaintext gRPC"),
        (("global.healthPort=50051",), "must differ from global.grpcPort"),
        (("tls.enabled=false", "auth.enabled=true"), "auth.enabled needs tls.enabled"),
        (("tls.enabled=false", "gateway.defaultTokenSecret.name=t"), "must not travel in plaintext"),
        (
            (
                "auth.enabled=true",
                "auth.tokens[0].name=a",
                "auth.tokens[0].token=hunter2",
                "auth.tokens[0].roles={ask}",
            ),
            "additional properties 'token'",
        ),
        (
            (
                "auth.enabled=true",
                "auth.tokens[0].name=a",
                "auth.tokens[0].sha256=hunter2",
                "auth.tokens[0].roles={ask}",
            ),
            "/auth/tokens/0/sha256",
        ),
        (
            (f"auth.tokens[0].name=a,auth.tokens[0].sha256={'a' * 64}", "auth.tokens[0].roles={root}"),
            "/auth/tokens/0/roles",
        ),
        (
            (
                "auth.enabled=true",
                f"auth.tokens[0].name=a,auth.tokens[0].sha256={'a' * 64}",
                f"auth.tokens[1].name=a,auth.tokens[1].sha256={'b' * 64}",
                "auth.tokens[0].roles={ask}",
                "auth.tokens[1].roles={ask}",
            ),
            "appears twice",
        ),
        (("gateway.defaultToken=hunter2",), "additional properties 'defaultToken'"),
        (("kafka.strimziUsers.enabled=true",), "needs kafka.strimziUsers.clusterName"),
        (("kafka.strimziUsers.enabled=true", "kafka.strimziUsers.clusterName=events"), "SCRAM-SHA-512"),
        (
            (
                "kafkaConnection.bootstrapServers=k:9093",
                "kafkaConnection.securityProtocol=SASL_SSL",
                "kafkaConnection.saslMechanism=PLAIN",
                "kafkaConnection.users.orchestrator.username=pub",
                "kafkaConnection.users.orchestrator.passwordSecret.name=pub",
            ),
            "for the ingester a user and a password",
        ),
    ],
)
def test_inconsistent_security_values_are_refused(helm: str, sets: tuple[str, ...], message: str) -> None:
    proc = _template(helm, *sets)
    assert proc.returncode != 0, f"rendered with {sets}"
    assert message in proc.stderr, proc.stderr
