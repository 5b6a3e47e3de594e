"""The launcher's gRPC front: refuses, before tritonserver sees them, the gRPC requests that this server release
mishandles, and passes every other call through unchanged (bytes as they came, metadata such as the admin key).

tritonserver 2.51 listens on loopback behind it. What it refuses:

- ``RESOURCE_EXHAUSTED`` a message larger than ``max_message`` bytes (the server itself takes 2 GiB);
- ``INVALID_ARGUMENT`` an inference request (``ModelInfer``, and each request of a ``ModelStreamInfer`` stream:
  there, an error response for that request only, as the server sends) with an input whose declared shape holds
  more elements or bytes than a signed 64-bit size (``str_ocr_server.shapes``): the server would hand it to the
  Python stub, which dies of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from functools import partial

import grpc
from tritonclient.grpc import service_pb2

from .front import Front
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


def _forwarded(context: grpc.aio.ServicerContext) -> list[tuple[str, str | bytes]]:
    """The client's metadata, less what belongs to its own call (the channel to the server sets those)."""
    return [(k, v) for k, v in context.invocation_metadata() or () if not k.startswith((":", "grpc-")) and k != "user-agent"]


class GrpcGuard(Front):
    """The gRPC front; ``limit``: the largest message taken, in bytes."""

    name = "grpc-guard"

    async def _close(self) -> None:
        await self._server.stop(grace=1.0)
        await self._channel.close()

    async def _listen(self, address: str, port: int) -> None:
        unbounded = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
        self._channel = grpc.aio.insecure_channel(self.upstream, options=unbounded)
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
            if method.endswith("/ModelInfer"):
                parsed = parse_infer(request)
                if parsed is not None and (problem := infer_problem(parsed)):
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
            call = self.stub(method, (False, False))(request, metadata=_forwarded(context),
                                                     timeout=context.time_remaining())
            try:
                return await call
            except grpc.aio.AioRpcError as error:
                context.set_trailing_metadata(error.trailing_metadata() or ())
                await context.abort(error.code(), error.details() or "")
        finally:
            self.in_flight -= 1

    async def streamed(self, method: str, streams: tuple[bool, bool], requests: AsyncIterator[bytes] | bytes,
                       context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        """A call whose responses stream (a bidirectional ``ModelStreamInfer``, the health service's ``Watch``); in
        ``ModelStreamInfer`` a refused request gets its error response in the stream, the others go on."""
        refusals: asyncio.Queue[bytes | None] = asyncio.Queue()
        if method.endswith("/ModelStreamInfer"):
            requests = self._screened(requests, refusals)
        else:
            refusals.put_nowait(None)
        call = self.stub(method, streams)(requests, metadata=_forwarded(context), timeout=context.time_remaining())
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
    """The server's responses and the front's refusals, each as it comes, until both have ended."""
    responses = aiter(call)
    pending = {asyncio.ensure_future(anext(responses, None)): "server", asyncio.ensure_future(refusals.get()): "front"}
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
    def __init__(self, guard: GrpcGuard) -> None:
        self.guard = guard

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        method = details.method
        streams = METHODS.get(method)
        if streams is None:
            return None  # UNIMPLEMENTED, as from the server
        # partial keeps the methods recognisable as coroutine and async generator functions, as grpc.aio needs.
        if streams == (False, False):
            return grpc.unary_unary_rpc_method_handler(partial(self.guard.unary, method))
        factory = {(False, True): grpc.unary_stream_rpc_method_handler,
                   (True, True): grpc.stream_stream_rpc_method_handler}.get(streams)
        return factory(partial(self.guard.streamed, method, streams)) if factory else None  # none streams one way
