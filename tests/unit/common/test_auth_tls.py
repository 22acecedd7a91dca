"""Mutual TLS and roles over real handshakes: certificates made here by a local CA, a real grpc.aio server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from weaverbird_common.auth import Authenticator, AuthInterceptor, required_role, token_digest
from weaverbird_common.tls import LocalCA, TlsFiles, channel_credentials, server_credentials

ASK = "/weaverbird.v1.OrchestratorService/Ask"
ADD = "/weaverbird.v1.IngesterService/AddDocument"
DELETE = "/weaverbird.v1.RetrieverService/DeleteDocument"
SEARCH = "/weaverbird.v1.RetrieverService/Search"
TOKENS = {"asker": "tok-ask-1f", "adder": "tok-add-9c", "root": "tok-admin-77"}


def _echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return b"ok:" + request


async def _aecho(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return _echo(request, context)


def _handlers() -> list[grpc.GenericRpcHandler]:
    by_service: dict[str, dict[str, grpc.RpcMethodHandler]] = {}
    for method in (ASK, ADD, DELETE, SEARCH, "/weaverbird.v1.RetrieverService/Brand_New"):
        service, name = method[1:].split("/")
        by_service.setdefault(service, {})[name] = grpc.unary_unary_rpc_method_handler(_aecho)
    return [grpc.method_handlers_generic_handler(s, m) for s, m in by_service.items()]


@pytest.fixture
def ca(tmp_path: Path) -> LocalCA:
    return LocalCA(tmp_path / "tls")


@pytest.fixture
async def server(ca: LocalCA, tmp_path: Path) -> AsyncIterator[str]:
    policy = tmp_path / "auth.json"
    policy.write_text(
        json.dumps(
            {
                "tokens": [
                    {"name": "asker", "sha256": token_digest(TOKENS["asker"]), "roles": ["ask"]},
                    {"name": "adder", "sha256": token_digest(TOKENS["adder"]), "roles": ["add"]},
                    {"name": "root", "sha256": token_digest(TOKENS["root"]), "roles": ["admin"]},
                ],
                "certificates": {"orchestrator": ["service"]},
            }
        )
    )
    srv = grpc.aio.server(interceptors=[AuthInterceptor(Authenticator.from_file(policy))])
    srv.add_generic_rpc_handlers(_handlers())
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, srv)
    port = srv.add_secure_port("127.0.0.1:0", server_credentials(ca.issue("retriever")))
    await srv.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await srv.stop(0)


async def _call(
    addr: str, ca: LocalCA, method: str, *, client: TlsFiles | None, token: str | None = None
) -> bytes | grpc.StatusCode:
    creds = channel_credentials(ca.cert_path, client)
    if token is not None:
        creds = grpc.composite_channel_credentials(creds, grpc.access_token_call_credentials(token))
    async with grpc.aio.secure_channel(addr, creds) as channel:
        call = channel.unary_unary(method)
        try:
            return await call(b"x", timeout=10)
        except grpc.aio.AioRpcError as exc:
            return exc.code()


async def test_a_service_certificate_calls_internal_rpcs_but_not_admin_ones(server: str, ca: LocalCA) -> None:
    orchestrator = ca.issue("orchestrator")
    assert await _call(server, ca, SEARCH, client=orchestrator) == b"ok:x"
    assert await _call(server, ca, DELETE, client=orchestrator) == grpc.StatusCode.PERMISSION_DENIED
    # A certificate the CA signed but the policy does not name holds no role.
    assert await _call(server, ca, SEARCH, client=ca.issue("gateway")) == grpc.StatusCode.UNAUTHENTICATED


async def test_tokens_carry_roles_and_roles_imply_lesser_ones(server: str, ca: LocalCA) -> None:
    gateway = ca.issue("gateway")
    assert await _call(server, ca, ASK, client=gateway, token=TOKENS["asker"]) == b"ok:x"
    assert await _call(server, ca, ADD, client=gateway, token=TOKENS["asker"]) == grpc.StatusCode.PERMISSION_DENIED
    assert await _call(server, ca, ADD, client=gateway, token=TOKENS["adder"]) == b"ok:x"
    assert await _call(server, ca, ASK, client=gateway, token=TOKENS["adder"]) == b"ok:x"  # add implies ask
    assert await _call(server, ca, DELETE, client=gateway, token=TOKENS["adder"]) == grpc.StatusCode.PERMISSION_DENIED
    assert await _call(server, ca, DELETE, client=gateway, token=TOKENS["root"]) == b"ok:x"
    # A wrong token is refused even from a caller whose certificate would pass.
    assert await _call(server, ca, SEARCH, client=ca.issue("orchestrator"), token="nope") == (
        grpc.StatusCode.UNAUTHENTICATED
    )


async def test_no_credentials_is_unauthenticated_but_health_stays_open(server: str, ca: LocalCA) -> None:
    # mTLS: the handshake itself needs a client certificate; without one no RPC runs at all.
    assert await _call(server, ca, ASK, client=None) == grpc.StatusCode.UNAVAILABLE
    client = ca.issue("prober")
    assert await _call(server, ca, ASK, client=client) == grpc.StatusCode.UNAUTHENTICATED
    async with grpc.aio.secure_channel(server, channel_credentials(ca.cert_path, client)) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_a_certificate_from_another_ca_fails_the_handshake(server: str, ca: LocalCA, tmp_path: Path) -> None:
    stranger = LocalCA(tmp_path / "other").issue("orchestrator")
    assert await _call(server, ca, SEARCH, client=stranger) == grpc.StatusCode.UNAVAILABLE


async def test_a_method_nobody_listed_needs_admin(server: str, ca: LocalCA) -> None:
    new = "/weaverbird.v1.RetrieverService/Brand_New"
    assert required_role(new) == "admin" and required_role("/grpc.health.v1.Health/Check") is None
    assert (
        await _call(server, ca, new, client=ca.issue("g"), token=TOKENS["adder"]) == grpc.StatusCode.PERMISSION_DENIED
    )
    assert await _call(server, ca, new, client=ca.issue("g"), token=TOKENS["root"]) == b"ok:x"


def test_unknown_roles_in_a_policy_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown roles"):
        Authenticator({token_digest("t"): ("x", ["superuser"])}, {})


def test_every_rpc_in_the_protos_has_a_decided_role() -> None:
    """A new RPC defaults to admin-only; this makes adding one a decision, listed in METHOD_ROLES."""
    from weaverbird.v1 import embedder_pb2, generator_pb2, ingester_pb2, orchestrator_pb2, retriever_pb2
    from weaverbird_common.auth import METHOD_ROLES

    methods = {
        f"/{service.full_name}/{method.name}"
        for module in (embedder_pb2, generator_pb2, ingester_pb2, orchestrator_pb2, retriever_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    }
    assert methods == set(METHOD_ROLES)
