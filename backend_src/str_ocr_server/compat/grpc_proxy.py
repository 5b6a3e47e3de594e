"""The gRPC proxy for server 2.51: refuses, before tritonserver sees them, the gRPC requests that this release
mishandles, sends again a ``ModelInfer`` that a dead instance failed (``retry``), and passes every other call
through unchanged (bytes as they came, metadata such as the admin key). tritonserver listens on loopback behind it.
What it refuses:

- ``RESOURCE_EXHAUSTED`` a message larger than ``max_message`` bytes (the server itself takes 2 GiB);
- ``INVALID_ARGUMENT`` an inference request (``ModelInfer``, and each request of a ``ModelStreamInfer`` stream:
  there, an error response for that request only, as the server sends) with an input whose declared shape holds
  more elements or bytes than a signed 64-bit size (``shapes``).

While the server behind is being restarted, calls fail ``UNAVAILABLE``, as from a server that is not there; once it
serves again, a call waits for the connection to it rather than failing on one that is still being re-established.
Retired by server 2.67 (``listen_policy``): the launcher starts it only for an older server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from functools import partial

import grpc
from tritonclient.grpc import service_pb2

from .proxy import Proxy
from .retry import from_dead_instance, send_until_served
from .shapes import shape_problem

SERVICE = service_pb2.DESCRIPTOR.services_by_name["GRPCInferenceService"]
HEALTH = {"/grpc.health.v1.Health/Check": (False, False), "/grpc.health.v1.Health/Watch": (False, True)}
"""The standard gRPC health service the server also answers: (client streaming, server streaming)."""
METHODS = {f"/{SERVICE.full_name}/{m.name}": (m.client_streaming, m.server_streaming) for m in SERVICE.methods} | HEALTH


def infer_problem(request: service_pb2.ModelInferRequest) -> str | None:
    """Why this inference request must not reach the server; None if it may."""
    for tensor in request.inputs:
        if problem := shape_problem(tensor.name, tensor.datatype, tensor.shape):
            return problem
    return None


def parse_infer(message: bytes) -> service_pb2.ModelInferRequest | None:
    try:
        return service_pb2.ModelInferRequest.FromString(message)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError: the server says what is wrong with it
        return None


def _failed_on_dead_instance(answer: bytes | grpc.aio.AioRpcError) -> bool:
    return (isinstance(answer, grpc.aio.AioRpcError) and answer.code() == grpc.StatusCode.INTERNAL
            and from_dead_instance(answer.details() or ""))


def _forwarded(context: grpc.aio.ServicerContext) -> list[tuple[str, str | bytes]]:
    """The client's metadata, less what belongs to its own call (the channel to the server sets those)."""
    return [(k, v) for k, v in context.invocation_metadata() or ()
            if not k.startswith((":", "grpc-")) and k != "user-agent"]


class GrpcProxy(Proxy):
    """The gRPC proxy; ``limit``: the largest message taken, in bytes."""

    name = "grpc-proxy"

    async def _stop(self) -> None:
        await self._server.stop(grace=1.0)
        await self._channel.close()

    async def _listen(self, address: str, port: int) -> None:
        unbounded = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
        # After a restart of the server, reconnect within moments rather than gRPC's default backoff (up to 2 min).
        reconnect = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.min_reconnect_backoff_ms", 100),
                     ("grpc.max_reconnect_backoff_ms", 1000)]
        self._channel = grpc.aio.insecure_channel(self.upstream, options=unbounded + reconnect)
        self._server = grpc.aio.server(options=[("grpc.max_receive_message_length", self.limit),
                                                ("grpc.max_send_message_length", -1), ("grpc.so_reuseport", 0)])
        self._server.add_generic_rpc_handlers([_Handler(self)])
        host = f"[{address}]" if ":" in address else address
        if self._server.add_insecure_port(f"{host}:{port}") == 0:
            raise OSError(f"cannot listen for gRPC on {host}:{port}")
        await self._server.start()

    def stub(self, method: str, streams: tuple[bool, bool]) -> Callable:
        """The server's side of ``method``: bytes in, bytes out."""
        kind = {(False, False): "unary_unary", (False, True): "unary_stream", (True, True): "stream_stream"}[streams]
        return getattr(self._channel, kind)(method)

    async def unary(self, method: str, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        self.in_flight += 1
        try:
            if method.endswith("/ServerReady") and not self.serving.is_set():
                return service_pb2.ServerReadyResponse(ready=False).SerializeToString()
            if method.endswith("/ModelInfer"):
                parsed = parse_infer(request)
                if parsed is not None and (problem := infer_problem(parsed)):
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
            answer = await self._send_until_served(method, request, context)
            if isinstance(answer, grpc.aio.AioRpcError):
                context.set_trailing_metadata(answer.trailing_metadata() or ())
                await context.abort(answer.code(), answer.details() or "")
            return answer
        finally:
            self.in_flight -= 1

    async def _send_until_served(self, method: str, request: bytes,
                                 context: grpc.aio.ServicerContext) -> bytes | grpc.aio.AioRpcError:
        """The server's answer to a unary call, or its error; a ``ModelInfer`` a dead instance failed is sent
        again once the server serves, within the client's deadline."""
        remaining = context.time_remaining()
        window = self.retry_window if remaining is None else min(self.retry_window, remaining)
        deadline = time.monotonic() + window

        async def send() -> bytes | grpc.aio.AioRpcError:
            try:
                return await self.stub(method, (False, False))(request, metadata=_forwarded(context),
                                                               timeout=context.time_remaining(),
                                                               wait_for_ready=self.serving.is_set())
            except grpc.aio.AioRpcError as error:
                return error

        if not method.endswith("/ModelInfer"):
            return await send()
        return await send_until_served(send, _failed_on_dead_instance, self.serving, self.stopping, deadline)

    async def streamed(self, method: str, streams: tuple[bool, bool], requests: AsyncIterator[bytes] | bytes,
                       context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        """A call whose responses stream (a bidirectional ``ModelStreamInfer``, the health service's ``Watch``); in
        ``ModelStreamInfer`` a refused request gets its error response in the stream, the others go on."""
        refusals: asyncio.Queue[bytes | None] = asyncio.Queue()
        if method.endswith("/ModelStreamInfer"):
            requests = self._screened(requests, refusals)
        else:
            refusals.put_nowait(None)
        call = self.stub(method, streams)(requests, metadata=_forwarded(context), timeout=context.time_remaining(),
                                          wait_for_ready=self.serving.is_set())
        self.in_flight += 1
        try:
            async for message in _merged(call, refusals):
                yield message
        except grpc.aio.AioRpcError as error:
            context.set_trailing_metadata(error.trailing_metadata() or ())
            await context.abort(error.code(), error.details() or "")
        finally:
            self.in_flight -= 1
            call.cancel()

    async def _screened(self, requests: AsyncIterator[bytes], refusals: asyncio.Queue) -> AsyncIterator[bytes]:
        try:
            async for message in requests:
                parsed = parse_infer(message)
                if parsed is not None and (problem := infer_problem(parsed)):
                    error = service_pb2.ModelStreamInferResponse(
                        error_message=problem, infer_response=service_pb2.ModelInferResponse(
                            model_name=parsed.model_name, model_version=parsed.model_version, id=parsed.id))
                    refusals.put_nowait(error.SerializeToString())
                else:
                    yield message
        finally:
            refusals.put_nowait(None)


async def _merged(call: grpc.aio.Call, refusals: asyncio.Queue) -> AsyncIterator[bytes]:
    """The server's responses and the proxy's refusals, each as it comes, until both have ended."""
    responses = aiter(call)
    pending = {asyncio.ensure_future(anext(responses, None)): "server", asyncio.ensure_future(refusals.get()): "proxy"}
    try:
        while pending:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                source = pending.pop(future)
                if (message := future.result()) is None:
                    continue
                yield message
                again = anext(responses, None) if source == "server" else refusals.get()
                pending[asyncio.ensure_future(again)] = source
    finally:
        for future in pending:
            future.cancel()


class _Handler(grpc.GenericRpcHandler):
    def __init__(self, proxy: GrpcProxy) -> None:
        self.proxy = proxy

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        method = details.method
        streams = METHODS.get(method)
        if streams is None:
            return None  # UNIMPLEMENTED, as from the server
        # partial keeps the methods recognisable as coroutine and async generator functions, as grpc.aio needs.
        if streams == (False, False):
            return grpc.unary_unary_rpc_method_handler(partial(self.proxy.unary, method))
        factory = {(False, True): grpc.unary_stream_rpc_method_handler,
                   (True, True): grpc.stream_stream_rpc_method_handler}.get(streams)
        return factory(partial(self.proxy.streamed, method, streams)) if factory else None  # none streams one way
