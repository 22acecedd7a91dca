"""Server interceptor that turns domain errors into gRPC statuses and hides everything else.

It also owns request decoding: grpc.aio would answer bytes that do not parse as the request message
with UNKNOWN and the protobuf exception's class name. The interceptor swaps in a deserializer that
never raises, hands the handler an `Undecodable` marker instead, and answers it with INVALID_ARGUMENT
and a plain message. (Messages above the server's size limit never reach Python: grpc core answers
RESOURCE_EXHAUSTED itself.)
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc

from weaverbird_common.errors import WeaverbirdError

log = logging.getLogger(__name__)

Deserializer = Callable[[bytes], Any]


@dataclass(frozen=True, slots=True)
class Undecodable:
    """Stands in for a request whose bytes did not parse; `message` is safe to show to the client."""

    message: str


def _message_name(deserializer: Deserializer) -> str:
    """'weaverbird.v1.EmbedRequest' for `EmbedRequest.FromString`; a generic name otherwise."""
    owner = getattr(deserializer, "__self__", None)
    descriptor = getattr(owner, "DESCRIPTOR", None)
    return getattr(descriptor, "full_name", "") or "the request message"


def safe_deserializer(deserializer: Deserializer | None) -> Deserializer | None:
    """`deserializer`, returning an `Undecodable` marker instead of raising on bad bytes."""
    if deserializer is None:
        return None
    name = _message_name(deserializer)

    def deserialize(raw: bytes) -> Any:
        try:
            return deserializer(raw)
        except Exception:  # protobuf's DecodeError (bad wire format, invalid UTF-8 in a string field)
            return Undecodable(f"request is not a valid {name}: malformed protobuf or invalid UTF-8 in a string field")

    return deserialize


async def _reject_undecodable(context: grpc.aio.ServicerContext, request: Undecodable, method: str) -> None:
    log.info("rpc=%s status=INVALID_ARGUMENT error=undecodable request", method)
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)


async def _abort(context: grpc.aio.ServicerContext, exc: BaseException, method: str) -> None:
    if isinstance(exc, WeaverbirdError):
        log.info("rpc=%s status=%s error=%s", method, exc.code.name, exc)
        await context.abort(exc.code, str(exc))
    # Unexpected failure: log the traceback under an id, tell the client only the id.
    incident = uuid.uuid4().hex[:12]
    log.exception("rpc=%s status=INTERNAL incident=%s", method, incident, exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, f"internal error (incident {incident})")


def _wrap_unary(behavior: Callable[..., Awaitable[Any]], method: str) -> Callable[..., Awaitable[Any]]:
    async def wrapper(request: Any, context: grpc.aio.ServicerContext) -> Any:
        if isinstance(request, Undecodable):
            await _reject_undecodable(context, request, method)
        try:
            return await behavior(request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await _abort(context, exc, method)

    return wrapper


def _wrap_stream(behavior: Callable[..., AsyncIterator[Any]], method: str) -> Callable[..., AsyncIterator[Any]]:
    async def wrapper(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        if isinstance(request, Undecodable):
            await _reject_undecodable(context, request, method)
        try:
            result = behavior(request, context)
            if hasattr(result, "__aiter__"):
                async for item in result:
                    yield item
            else:  # a coroutine that streams with context.write() (grpc.health.v1 Watch)
                await result
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await _abort(context, exc, method)

    return wrapper


def _wrap_bidi(behavior: Callable[..., AsyncIterator[Any]], method: str) -> Callable[..., AsyncIterator[Any]]:
    """Streaming requests (only reflection here): each undecodable message ends the call cleanly."""

    async def wrapper(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async def checked() -> AsyncIterator[Any]:
            async for request in requests:
                if isinstance(request, Undecodable):
                    await _reject_undecodable(context, request, method)
                yield request

        async for item in behavior(checked(), context):
            yield item

    return wrapper


class ErrorInterceptor(grpc.aio.ServerInterceptor):
    """Maps `WeaverbirdError` to its status code; any other exception becomes a generic INTERNAL;
    undecodable requests get INVALID_ARGUMENT."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        deserializer = safe_deserializer(handler.request_deserializer)
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                _wrap_unary(handler.unary_unary, method),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _wrap_stream(handler.unary_stream, method),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream is not None and inspect.isasyncgenfunction(handler.stream_stream):
            return grpc.stream_stream_rpc_method_handler(
                _wrap_bidi(handler.stream_stream, method),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # WeaverBird services take no streaming requests; others keep grpc's own handling
