"""How WeaverBird's server interceptors wrap a call, and the one that turns errors into gRPC statuses.

Every interceptor of ours (authentication, concurrency limit, metrics, errors) acts around each call:
something before the handler, something after. `CallInterceptor` does the handler wrapping once (unary
and server-streaming calls, coroutine streams written with context.write()); a subclass only says what
happens around the call, as an async context manager.

`ErrorInterceptor` also owns request decoding: grpc.aio would answer bytes that do not parse as the
request message with UNKNOWN and the protobuf exception's class name. The interceptor swaps in a
deserializer that never raises, hands the handler an `Undecodable` marker instead, and answers it with
INVALID_ARGUMENT and a plain message. (Messages above the server's size limit never reach Python: grpc
core answers RESOURCE_EXHAUSTED itself.)
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import grpc

from weaverbird_common.errors import WeaverbirdError

log = logging.getLogger(__name__)

Deserializer = Callable[[bytes], Any]
# What runs around one call, given its request and context.
Around = Callable[[Any, grpc.aio.ServicerContext], AbstractAsyncContextManager[object]]

# Probes and tooling, not traffic: kubelet health checks every few seconds would swamp the error ratio
# and the traces, and a busy server must still answer its liveness probe.
PROBE_SERVICE_PREFIXES = ("grpc.health.v1.", "grpc.reflection.")


def is_probe(method: str) -> bool:
    """Whether `method` ("/grpc.health.v1.Health/Check") is a health check or reflection call."""
    return method.lstrip("/").startswith(PROBE_SERVICE_PREFIXES)


def wrap_calls(
    handler: grpc.RpcMethodHandler, around: Around, deserializer: Deserializer | None = None
) -> grpc.RpcMethodHandler:
    """`handler` with each unary or server-streaming call run inside `around(request, context)`.

    Args:
        handler: what grpc would run.
        around: the per-call context manager; an exception it raises on entry ends the call.
        deserializer: replaces the handler's request deserializer; None keeps it.

    Returns:
        The wrapped handler; one taking streamed requests comes back unchanged.
    """
    request_deserializer = deserializer or handler.request_deserializer
    if handler.unary_unary is not None:
        unary: Callable[..., Awaitable[Any]] = handler.unary_unary

        async def unary_call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            async with around(request, context):
                return await unary(request, context)

        return grpc.unary_unary_rpc_method_handler(
            unary_call, request_deserializer=request_deserializer, response_serializer=handler.response_serializer
        )
    if handler.unary_stream is not None:
        stream: Callable[..., Any] = handler.unary_stream

        async def stream_call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            async with around(request, context):
                result = stream(request, context)
                if hasattr(result, "__aiter__"):
                    async for item in result:
                        yield item
                else:  # a coroutine that streams with context.write() (grpc.health.v1 Watch)
                    await result

        return grpc.unary_stream_rpc_method_handler(
            stream_call, request_deserializer=request_deserializer, response_serializer=handler.response_serializer
        )
    return handler  # WeaverBird services take no streaming requests


class CallInterceptor(grpc.aio.ServerInterceptor):
    """Runs every call inside `around(method, request, context)`; probes pass untouched unless
    `covers_probes`. Subclasses override `around`, or `wrap` for handlers they treat apart."""

    covers_probes: ClassVar[bool] = False

    def around(
        self, method: str, request: Any, context: grpc.aio.ServicerContext
    ) -> AbstractAsyncContextManager[object]:
        raise NotImplementedError

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        return wrap_calls(handler, partial(self.around, method))

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or (is_probe(method) and not self.covers_probes):
            return handler
        return self.wrap(handler, method)


# --------------------------------------------------------------------------------------------
# Errors: domain errors to statuses, everything else hidden, undecodable requests refused.
# --------------------------------------------------------------------------------------------


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


class ErrorInterceptor(CallInterceptor):
    """Maps `WeaverbirdError` to its status code; any other exception becomes a generic INTERNAL;
    undecodable requests get INVALID_ARGUMENT. Probes too: their requests are decoded like any other."""

    covers_probes = True

    @asynccontextmanager
    async def around(self, method: str, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
        if isinstance(request, Undecodable):
            await _reject_undecodable(context, request, method)
        try:
            yield
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await _abort(context, exc, method)

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        deserializer = safe_deserializer(handler.request_deserializer)
        if handler.stream_stream is not None and inspect.isasyncgenfunction(handler.stream_stream):
            return grpc.stream_stream_rpc_method_handler(
                _wrap_bidi(handler.stream_stream, method),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        return wrap_calls(handler, partial(self.around, method), deserializer)
