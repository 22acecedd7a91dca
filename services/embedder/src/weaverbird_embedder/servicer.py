"""gRPC adapter of the embedder: validates requests and hands texts to the micro-batcher."""

from __future__ import annotations

import asyncio

import grpc
import numpy as np
from weaverbird.v1 import embedder_pb2, embedder_pb2_grpc
from weaverbird_common.encoders import EmbeddingBackend
from weaverbird_common.errors import Overloaded

from weaverbird_embedder.batcher import Kind, MicroBatcher
from weaverbird_embedder.validation import validate_embed


class EmbedderServicer(embedder_pb2_grpc.EmbedderServiceServicer):
    """Serves Embed and DescribeModel for one loaded backend."""

    def __init__(self, backend: EmbeddingBackend, max_batch: int, max_text_chars: int) -> None:
        self._backend = backend
        self._max_batch = max_batch
        self._max_text_chars = max_text_chars
        self._batcher = MicroBatcher(backend.embed, max_batch=max_batch)

    async def close(self) -> None:
        await self._batcher.close()

    def _validate(self, request: embedder_pb2.EmbedRequest) -> Kind:
        """The request's kind once it passed the edge checks (ray_app.py validates through this too)."""
        return validate_embed(request, max_batch=self._max_batch, max_text_chars=self._max_text_chars)

    async def Embed(
        self, request: embedder_pb2.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> embedder_pb2.EmbedResponse:
        kind = self._validate(request)
        try:
            vectors = await self._batcher.embed(list(request.texts), kind)
        except asyncio.QueueFull as exc:
            raise Overloaded("embedder queue is full", retry_after_s=1.0) from exc
        return embedder_pb2.EmbedResponse(
            vectors=[embedder_pb2.Vector(values=row) for row in np.asarray(vectors, dtype=np.float32).tolist()],
            model_id=self._backend.model_id,
            dimension=self._backend.dimension,
        )

    async def DescribeModel(
        self, request: embedder_pb2.DescribeModelRequest, context: grpc.aio.ServicerContext
    ) -> embedder_pb2.DescribeModelResponse:
        return embedder_pb2.DescribeModelResponse(
            model_id=self._backend.model_id,
            dimension=self._backend.dimension,
            max_batch=self._max_batch,
            max_text_chars=self._max_text_chars,
        )
