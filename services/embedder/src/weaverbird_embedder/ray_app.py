"""The embedder as a Ray Serve application: Serve's dynamic batching, served by Serve's gRPC proxy.

Run it locally with the gRPC proxy enabled (the proxy is configured on the Serve instance, not here):

    serve start --grpc-port 9000 \
        --grpc-servicer-functions weaverbird.v1.embedder_pb2_grpc.add_EmbedderServiceServicer_to_server
    serve run weaverbird_embedder.ray_app:app                  # settings from EMBEDDER_* env
    serve run weaverbird_embedder.ray_app:build_app backend=use max_batch=32

KubeRay (RayService): `import_path: weaverbird_embedder.ray_app:app`, with `grpcOptions.port` and
`grpcOptions.grpcServicerFunctions: [GRPC_SERVICER_FUNCTION]`. Callers send the metadata
`application: <app name>` with each call when the cluster hosts more than one application.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from ray import serve
from ray.serve.deployment import Application
from ray.serve.grpc_util import RayServegRPCContext
from weaverbird.v1 import embedder_pb2
from weaverbird_common.encoders import EmbeddingBackend, build_backend
from weaverbird_common.errors import WeaverbirdError

from weaverbird_embedder.batcher import Kind
from weaverbird_embedder.servicer import EmbedderServicer
from weaverbird_embedder.settings import EmbedderSettings

log = logging.getLogger(__name__)

GRPC_SERVICER_FUNCTION = "weaverbird.v1.embedder_pb2_grpc.add_EmbedderServiceServicer_to_server"
DEPLOYMENT_NAME = "Embedder"
# Replica health fails after this many model calls in a row raised, so Serve replaces the replica.
_UNHEALTHY_AFTER_FAILURES = 3

_Item = tuple[Kind, list[str]]


class BatchConfig(BaseModel):
    """Hot configuration (Serve `user_config`), applied by `reconfigure` without a restart."""

    model_config = ConfigDict(extra="forbid")

    max_batch: int = Field(64, ge=1, le=4096, description="Most texts per model call and per request.")
    batch_wait_timeout_s: float = Field(
        0.005, ge=0, le=1, description="How long the first request of a batch waits for others to join it."
    )


def _count_texts(items: list[_Item]) -> int:
    """Batch size in texts rather than requests, so `max_batch` bounds one model call as in the servicer."""
    return sum(len(texts) for _, texts in items)


class RayEmbedder:
    """Embed and DescribeModel with EmbedderServicer's semantics; concurrent requests share model calls.

    A plain class: Ray Serve wraps it in `build_app`. Method names equal the RPC names because Serve's
    gRPC proxy calls the method named after the RPC. Errors become gRPC statuses through `grpc_context`,
    the way `weaverbird_common.interceptor` maps them for the plain gRPC server.

    The batch queue of `@serve.batch` belongs to the class, so one process holds one instance (as a
    Serve replica does).
    """

    def __init__(self, settings: EmbedderSettings, backend: EmbeddingBackend | None = None) -> None:
        """Loads the backend named by `settings` unless one is given.

        Args:
            settings: the embedder settings (backend, limits).
            backend: an already-loaded backend, for tests; built from `settings` when None.

        Raises:
            ValueError, BackendUnavailable: from `build_backend`; Serve then retries the replica.
        """
        self._settings = settings
        self._backend = backend or build_backend(
            settings.backend, model_path=settings.model_path, device=settings.device
        )
        self._consecutive_failures = 0
        self._apply(BatchConfig(max_batch=settings.max_batch))

    def _apply(self, config: BatchConfig) -> None:
        # Validation is EmbedderServicer's; its own micro-batcher is never started here.
        self._servicer = EmbedderServicer(self._backend, config.max_batch, self._settings.max_text_chars)
        self._embed_batch.set_max_batch_size(config.max_batch)
        self._embed_batch.set_batch_wait_timeout_s(config.batch_wait_timeout_s)

    def reconfigure(self, user_config: Mapping[str, Any]) -> None:
        """Applies a new `BatchConfig` (Serve calls this with the deployment's `user_config`).

        Raises:
            pydantic.ValidationError: an unknown key or an out-of-range value.
        """
        config = BatchConfig.model_validate(dict(user_config))
        self._apply(config)
        log.info("reconfigured max_batch=%d batch_wait_timeout_s=%.4f", config.max_batch, config.batch_wait_timeout_s)

    def check_health(self) -> None:
        """Raises when the model keeps failing, so Serve restarts this replica."""
        if self._consecutive_failures >= _UNHEALTHY_AFTER_FAILURES:
            raise RuntimeError(f"the last {self._consecutive_failures} model calls failed")

    async def Embed(
        self, request: embedder_pb2.EmbedRequest, grpc_context: RayServegRPCContext | None = None
    ) -> embedder_pb2.EmbedResponse:
        try:
            kind = self._servicer._validate(request)
        except WeaverbirdError as exc:
            return _reject(grpc_context, exc, embedder_pb2.EmbedResponse())
        try:
            vectors = await self._embed_batch((kind, list(request.texts)))
        except Exception as exc:
            self._consecutive_failures += 1
            _mark_internal(grpc_context, exc)
            raise
        self._consecutive_failures = 0
        return embedder_pb2.EmbedResponse(
            vectors=[embedder_pb2.Vector(values=row) for row in vectors],
            model_id=self._backend.model_id,
            dimension=self._backend.dimension,
        )

    async def DescribeModel(
        self, request: embedder_pb2.DescribeModelRequest, grpc_context: RayServegRPCContext | None = None
    ) -> embedder_pb2.DescribeModelResponse:
        return await self._servicer.DescribeModel(request, grpc_context)

    @serve.batch(max_batch_size=64, batch_wait_timeout_s=0.005, batch_size_fn=_count_texts)
    async def _embed_batch(self, items: list[_Item]) -> list[np.ndarray]:
        # The model runs off the event loop, so health checks and new requests are served meanwhile.
        return await asyncio.to_thread(self._embed_items, items)

    def _embed_items(self, items: list[_Item]) -> list[np.ndarray]:
        """One model call per kind present in the batch; results split back per request, in order."""
        out: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(items)
        for kind in ("query", "passage"):
            members = [i for i, (k, _) in enumerate(items) if k == kind]
            if not members:
                continue
            vectors = self._backend.embed([t for i in members for t in items[i][1]], kind)
            vectors = np.asarray(vectors, dtype=np.float32)
            start = 0
            for i in members:
                end = start + len(items[i][1])
                out[i] = vectors[start:end]
                start = end
        return out


def _reject(grpc_context: RayServegRPCContext | None, exc: WeaverbirdError, empty: Any) -> Any:
    """Sets the status of a domain error and returns `empty`, the way Ray Serve documents it.

    Ray's own request logs and metrics then count the call as OK; raising instead would log a
    traceback per invalid request in the proxy and the replica.

    Raises:
        WeaverbirdError: `exc` itself when called through a DeploymentHandle (no gRPC context).
    """
    if grpc_context is None:
        raise exc
    log.info("rpc=Embed status=%s error=%s", exc.code.name, exc)
    grpc_context.set_code(exc.code)
    grpc_context.set_details(str(exc))
    return empty


def _mark_internal(grpc_context: RayServegRPCContext | None, exc: Exception) -> None:
    """Logs an unexpected failure under an incident id and makes the status a generic INTERNAL.

    The caller re-raises: Ray keeps a status set before raising (gRPCStatusError) and counts the error.
    """
    incident = uuid.uuid4().hex[:12]
    log.error("rpc=Embed status=INTERNAL incident=%s", incident, exc_info=exc)
    if grpc_context is not None:
        grpc_context.set_code(WeaverbirdError.code)
        grpc_context.set_details(f"internal error (incident {incident})")


def build_app(args: Mapping[str, Any] | None = None) -> Application:
    """Builds the Serve application (an application builder for `serve run module:build_app k=v`).

    Args:
        args: EmbedderSettings fields overriding the EMBEDDER_* environment, e.g. {"backend": "use"}.

    Returns:
        The bound application: one replica on one CPU, batch settings in `user_config`.
    """
    settings = EmbedderSettings(**dict(args or {}))
    config = BatchConfig(max_batch=settings.max_batch)
    deployment = serve.deployment(
        RayEmbedder,
        name=DEPLOYMENT_NAME,
        ray_actor_options={"num_cpus": 1},
        # Enough in flight for a full batch of one-text requests; beyond that requests queue in Serve.
        max_ongoing_requests=max(config.max_batch, 8),
        user_config=config.model_dump(),
        health_check_period_s=10,
    )
    return deployment.bind(settings)


app = build_app()
