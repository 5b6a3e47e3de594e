"""The HTTP proxy for server 2.51: refuses, before tritonserver sees them, the HTTP requests that this release
mishandles, sends again an inference request a dead instance failed (``retry``), and passes every other request
through unchanged. tritonserver listens on loopback behind it. What it refuses, with the server's own error format
(``{"error": "..."}``):

- **413** a body larger than ``limit`` bytes: at once from its ``Content-Length``, or as soon as a chunked
  body grows past it. The server itself has no bound and buffers any body whole.
- **400** a body that is not a JSON object, and an inference request that does not follow the KServe v2 schema
  (``inputs`` a list of objects with a ``name``, a ``datatype`` and a ``shape`` of non-negative integers, ...):
  the server answers those with 500, as if it had failed.
- **400** an input whose declared shape holds more elements or bytes than a signed 64-bit size (``shapes``).

While the server behind does not answer (the launcher is starting it again), every request gets **503** but
liveness, which stays 200 so that an orchestrator does not restart the launcher meanwhile; readiness is 503 until
the launcher has seen every model ready (``Proxy.serving``). Compressed bodies
(``Content-Encoding: gzip`` or ``deflate``) are checked, bounded and forwarded decompressed. Retired by server
2.67 (``listen_policy``), but for the retry (server#8604).
"""

from __future__ import annotations

import json
import re
import time

import aiohttp
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from .proxy import Proxy
from .retry import from_dead_instance, send_until_served
from .shapes import ELEMENT_BYTES, INT64_MAX, element_count, shape_problem, short

LIVE_PATH, READY_PATH = "/v2/health/live", "/v2/health/ready"
INFER_PATH = re.compile(r"^/v2/models/[^/]+(/versions/[^/]+)?/infer$")
HEADER_LENGTH = "Inference-Header-Content-Length"
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
              "transfer-encoding", "upgrade", "host", "content-length", "content-encoding"}
"""Headers that belong to one connection (or to the body as it came), not to the request forwarded."""


class Refused(Exception):
    """A request this proxy answers itself, with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _object(value: object, what: str) -> dict:
    if not isinstance(value, dict):
        raise Refused(400, f"{what} must be a JSON object")
    return value


def _optional_object(parent: dict, key: str, what: str) -> None:
    if key in parent:
        _object(parent[key], f"'{key}' of {what}")


def check_tensor(tensor: object, index: int, kind: str) -> None:
    """One entry of ``inputs`` (kind "input") or ``outputs`` ("output") of an inference request."""
    what = f"{kind} {index}"
    tensor = _object(tensor, what)
    name = tensor.get("name")
    if not isinstance(name, str) or not name:
        raise Refused(400, f"{what} needs a 'name' (a non-empty string)")
    _optional_object(tensor, "parameters", f"{kind} '{name}'")
    if kind == "output":
        return
    datatype, shape = tensor.get("datatype"), tensor.get("shape")
    if not isinstance(datatype, str) or datatype not in ELEMENT_BYTES:
        raise Refused(400, f"input '{name}' needs a 'datatype', one of {', '.join(ELEMENT_BYTES)}; "
                           f"got {short(datatype)}")
    if not isinstance(shape, list) or not all(type(d) is int for d in shape):
        raise Refused(400, f"input '{name}' needs a 'shape', a list of integers; got {short(shape)}")
    if problem := shape_problem(name, datatype, shape):
        raise Refused(400, problem)
    if "data" in tensor and (given := leaves(tensor["data"])) != (count := element_count(shape, INT64_MAX)):
        raise Refused(400, f"input '{name}' declares shape {short(shape)} ({count} elements) "
                           f"but its 'data' holds {given}")


def leaves(data: object) -> int:
    """How many elements a JSON ``data`` field holds, nested lists flattened (as the server reads it)."""
    count, pending = 0, [data]
    while pending:
        item = pending.pop()
        if isinstance(item, list):
            pending.extend(item)
        else:
            count += 1
    return count


def check_infer_header(header: bytes) -> None:
    """The JSON part of an inference request (all of it, or its first Inference-Header-Content-Length bytes)."""
    request = _object(parse_json(header), "an inference request")
    if "id" in request and not isinstance(request["id"], str):
        raise Refused(400, "'id' of an inference request must be a string")
    _optional_object(request, "parameters", "an inference request")
    for key, kind in (("inputs", "input"), ("outputs", "output")):
        tensors = request.get(key, [] if kind == "output" else None)
        if not isinstance(tensors, list) or (kind == "input" and not tensors):
            raise Refused(400, f"an inference request needs '{key}', a {'non-empty ' if kind == 'input' else ''}list")
        for i, tensor in enumerate(tensors):
            check_tensor(tensor, i, kind)


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    # The server reads the first of repeated keys, json the last: a request must not mean two things.
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Refused(400, "the request repeats a JSON key: "
                           f"{short(sorted(k for k in set(keys) if keys.count(k) > 1))}")
    return dict(pairs)


def parse_json(data: bytes) -> object:
    try:
        return json.loads(data, object_pairs_hook=_unique_keys)
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, an integer of too many digits
        raise Refused(400, f"the request body is not valid JSON: {short(str(error), 200)}") from None
    except RecursionError:
        raise Refused(400, "the request body nests JSON deeper than this server reads") from None


def header_part(body: bytes, header_length: str | None) -> bytes:
    """The JSON header of an inference request that may carry binary tensors after it."""
    if header_length is None:
        return body
    if not re.fullmatch(r"[0-9]{1,19}", header_length) or not 0 < int(header_length) <= len(body):
        raise Refused(400, f"{HEADER_LENGTH} must be between 1 and the body's {len(body)} bytes; "
                           f"got {short(header_length)}")
    return body[:int(header_length)]


def check_body(method: str, path: str, body: bytes, header_length: str | None) -> None:
    """Refuse what the server would mishandle; return for what it may have."""
    if INFER_PATH.match(path) and method == "POST":
        check_infer_header(header_part(body, header_length))
    elif method == "POST" and body:
        _object(parse_json(body), "the request body")


class HttpProxy(Proxy):
    """The HTTP proxy; ``limit``: the largest body taken, in bytes."""

    name = "http-proxy"

    async def _stop(self) -> None:
        # On its way out the server waits for every open HTTP connection, idle keep-alive ones included.
        await self._runner.cleanup()
        await self._session.close()

    async def _listen(self, address: str, port: int) -> None:
        app = web.Application(client_max_size=self.limit)
        app.router.add_route("*", "/{path:.*}", self.handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        # The server answers on keep-alive connections of its own; no limit here beyond its thread count.
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), auto_decompress=False,
                                              timeout=aiohttp.ClientTimeout(total=None))
        await self._runner.setup()
        await web.TCPSite(self._runner, address, port, reuse_address=True).start()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        try:
            if request.path == READY_PATH and not self.serving.is_set():
                return web.json_response({"error": "not ready: the launcher is starting or recovering the server"},
                                         status=503)
            body = await self._read(request)
            check_body(request.method, request.path, body, request.headers.get(HEADER_LENGTH))
            return await self._forward(request, body)
        except Refused as refused:
            return web.json_response({"error": str(refused)}, status=refused.status)
        finally:
            self.in_flight -= 1

    async def _read(self, request: web.Request) -> bytes:
        limit = f"this server takes at most {self.limit:,} bytes (--http-max-body-bytes)"
        if request.content_length is not None and request.content_length > self.limit:
            raise Refused(413, f"the request body has {request.content_length:,} bytes; {limit}")
        try:
            return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise Refused(413, f"the request body grew past the limit: {limit}") from None
        except (RequestPayloadError, HttpProcessingError) as error:  # a broken chunked or compressed body
            raise Refused(400, f"the request body could not be read: {short(str(error), 200)}") from None

    async def _forward(self, request: web.Request, body: bytes) -> web.Response:
        if not (INFER_PATH.match(request.path) and request.method == "POST"):
            return await self._send(request, body)
        return await send_until_served(lambda: self._send(request, body), _failed_on_dead_instance, self.serving,
                                       self.stopping, time.monotonic() + self.retry_window)

    async def _send(self, request: web.Request, body: bytes) -> web.Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        try:
            # No Accept-Encoding of the proxy's own: the server compresses only for a client that asked.
            async with self._session.request(request.method, f"http://{self.upstream}{request.path_qs}",
                                             headers=headers, data=body if body else None,
                                             skip_auto_headers=("Accept-Encoding",)) as answer:
                content = await answer.read()
                kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP - {"content-encoding"}}
                return web.Response(status=answer.status, body=content, headers=kept)
        except aiohttp.ClientError as error:
            if request.path == LIVE_PATH:  # the launcher is starting the server again: no reason to restart it
                return web.Response(status=200)
            return web.json_response({"error": f"the server is not serving now ({error}); try again shortly"},
                                     status=503)


def _failed_on_dead_instance(response: web.Response) -> bool:
    return response.status >= 500 and from_dead_instance(bytes(response.body or b"").decode(errors="replace"))
