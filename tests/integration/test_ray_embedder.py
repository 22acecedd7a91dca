"""The embedder on Ray Serve behind Serve's gRPC proxy returns the in-process backend's vectors."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import grpc
import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="ray[serve] is not installed (pip install 'ray[serve]==2.60.0')")
serve = pytest.importorskip("ray.serve", reason="ray[serve] is not installed (pip install 'ray[serve]==2.60.0')")

from ray.serve.config import gRPCOptions  # noqa: E402
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc  # noqa: E402
from weaverbird_common.encoders import build_backend  # noqa: E402
from weaverbird_embedder.ray_app import GRPC_SERVICER_FUNCTION, build_app  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

APP = "embedder"
# Serve's gRPC proxy routes on this metadata key (ray/serve/_private/proxy_request_response.py).
METADATA = (("application", APP),)
TEXTS = ["What was Apple's revenue in 2022?", "2022年苹果公司的营业收入是多少？", "Net income rose 5%."]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_embedder() -> Iterator[embedder_pb2_grpc.EmbedderServiceStub]:
    """Ray (2 CPUs, no dashboard), Serve with its gRPC proxy, and the app with the `use` backend."""
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024 * 1024, log_to_driver=False)
    try:
        grpc_port = _free_port()
        serve.start(
            http_options={"host": "127.0.0.1", "port": _free_port()},
            grpc_options=gRPCOptions(port=grpc_port, grpc_servicer_functions=[GRPC_SERVICER_FUNCTION]),
        )
        # The gRPC proxy only routes to applications that have a route prefix, even an unused one.
        serve.run(build_app({"backend": "use", "max_batch": 16}), name=APP, route_prefix=f"/{APP}")
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
            _wait_until_routed(stub)
            yield stub
    finally:
        serve.shutdown()
        ray.shutdown()


def _wait_until_routed(stub: embedder_pb2_grpc.EmbedderServiceStub, timeout_s: float = 30.0) -> None:
    """The proxy learns the new app's route asynchronously after serve.run returns."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            stub.DescribeModel(embedder_pb2.DescribeModelRequest(), metadata=METADATA, timeout=5)
            return
        except grpc.RpcError as exc:
            if time.monotonic() > deadline or exc.code() not in (
                grpc.StatusCode.NOT_FOUND,
                grpc.StatusCode.UNAVAILABLE,
            ):
                raise
            time.sleep(0.5)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_ray_embedder_matches_the_in_process_backend(ray_embedder: embedder_pb2_grpc.EmbedderServiceStub) -> None:
    backend = build_backend("use")
    info = ray_embedder.DescribeModel(embedder_pb2.DescribeModelRequest(), metadata=METADATA, timeout=5)
    assert (info.model_id, info.dimension, info.max_batch) == (backend.model_id, backend.dimension, 16)

    # Concurrent requests of both kinds, so Serve batches them together and splits them back by kind.
    kinds = [embedder_pb2.EMBED_KIND_QUERY, embedder_pb2.EMBED_KIND_PASSAGE] * 4
    futures = [
        ray_embedder.Embed.future(
            embedder_pb2.EmbedRequest(texts=TEXTS[i % 3 :], kind=kind), metadata=METADATA, timeout=30
        )
        for i, kind in enumerate(kinds)
    ]
    for i, future in enumerate(futures):
        reply = future.result()
        texts = TEXTS[i % 3 :]
        assert (reply.model_id, reply.dimension) == (backend.model_id, backend.dimension)
        got = np.array([v.values for v in reply.vectors], dtype=np.float32)
        assert got.shape == (len(texts), backend.dimension)
        expected = backend.embed(texts, "query" if kinds[i] == embedder_pb2.EMBED_KIND_QUERY else "passage")
        assert np.all(_cosines(got, expected) > 0.999)


@pytest.mark.parametrize(
    "request_",
    [
        embedder_pb2.EmbedRequest(texts=["x"]),  # kind missing
        embedder_pb2.EmbedRequest(texts=[" "], kind=embedder_pb2.EMBED_KIND_QUERY),
        embedder_pb2.EmbedRequest(texts=["x"] * 17, kind=embedder_pb2.EMBED_KIND_PASSAGE),  # max_batch is 16
    ],
)
def test_ray_embedder_rejects_bad_input(
    ray_embedder: embedder_pb2_grpc.EmbedderServiceStub, request_: embedder_pb2.EmbedRequest
) -> None:
    with pytest.raises(grpc.RpcError) as err:
        ray_embedder.Embed(request_, metadata=METADATA, timeout=10)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
