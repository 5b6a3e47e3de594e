"""The launcher's HTTP front: refuses, before tritonserver sees them, the HTTP requests that this server release
mishandles, and passes every other request through unchanged.

tritonserver 2.51 listens on loopback behind it. What it refuses, with the server's own error format
(``{"error": "..."}``):

- **413** a body larger than ``max_body`` bytes: at once from its ``Content-Length``, or as soon as a chunked
  body grows past it. The server itself has no bound and buffers any body whole (100 MB took it to 1.9 GB).
- **400** a body that is not a JSON object, and an inference request that does not follow the KServe v2 schema
  (``inputs`` a list of objects with a ``name``, a ``datatype`` and a ``shape`` of non-negative integers, ...):
  the server answers those with 500, as if it had failed.
- **400** an input whose declared shape holds more elements or bytes than a signed 64-bit size: the server's
  check wraps around to the data's size and hands the tensor to the Python stub, which dies of it
  (``str_ocr_server.exposure``). Over gRPC such a request still reaches the server: see there.

Compressed bodies (``Content-Encoding: gzip`` or ``deflate``) are checked, bounded and forwarded decompressed.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading

import aiohttp
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

INFER_PATH = re.compile(r"^/v2/models/[^/]+(/versions/[^/]+)?/infer$")
HEADER_LENGTH = "Inference-Header-Content-Length"
INT64_MAX = 2**63 - 1
MAX_DIMS = 64
"""More dimensions than any tensor a model here takes (the server's own limit is far above)."""
ELEMENT_BYTES = {"BOOL": 1, "INT8": 1, "UINT8": 1, "INT16": 2, "UINT16": 2, "FP16": 2, "BF16": 2, "INT32": 4,
                 "UINT32": 4, "FP32": 4, "INT64": 8, "UINT64": 8, "FP64": 8, "BYTES": 1}
"""Bytes per element; a BYTES element is at least its 4-byte length, counted as 1 so that only the count binds."""
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
              "transfer-encoding", "upgrade", "host", "content-length", "content-encoding"}
"""Headers that belong to one connection (or to the body as it came), not to the request forwarded."""


class Refused(Exception):
    """A request this front answers itself, with ``status``."""

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
        raise Refused(400, f"input '{name}' needs a 'datatype', one of {', '.join(ELEMENT_BYTES)}; got {short(datatype)}")
    if not isinstance(shape, list) or len(shape) > MAX_DIMS or \
            not all(type(d) is int and 0 <= d <= INT64_MAX for d in shape):
        raise Refused(400, f"input '{name}' needs a 'shape', a list of at most {MAX_DIMS} non-negative 64-bit "
                           f"integers; got {short(shape)}")
    count = element_count(shape, INT64_MAX // ELEMENT_BYTES[datatype])
    if count is None:
        raise Refused(400, f"input '{name}' declares shape {short(shape)}: more {datatype} elements than a 64-bit "
                           "size can hold")
    if "data" in tensor and (given := leaves(tensor["data"])) != count:
        raise Refused(400, f"input '{name}' declares shape {short(shape)} ({count} elements) but its 'data' holds {given}")


def element_count(shape: list[int], limit: int) -> int | None:
    """The product of ``shape``, or None once it passes ``limit`` (stopping there: no huge products)."""
    if 0 in shape:
        return 0
    count = 1
    for dim in shape:
        count *= dim
        if count > limit:
            return None
    return count


def short(value: object, length: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= length else text[:length] + "..."


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
        raise Refused(400, f"the request repeats a JSON key: {short(sorted(k for k in set(keys) if keys.count(k) > 1))}")
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
        raise Refused(400, f"{HEADER_LENGTH} must be between 1 and the body's {len(body)} bytes; got {short(header_length)}")
    return body[:int(header_length)]


def check_body(method: str, path: str, body: bytes, header_length: str | None) -> None:
    """Refuse what the server would mishandle; return for what it may have."""
    if INFER_PATH.match(path) and method == "POST":
        check_infer_header(header_part(body, header_length))
    elif method == "POST" and body:
        _object(parse_json(body), "the request body")


class HttpGuard:
    """Serves ``address:port`` from a thread of its own, forwarding to the server at ``upstream`` (host:port)."""

    def __init__(self, upstream: str, max_body: int) -> None:
        self.upstream, self.max_body = f"http://{upstream}", max_body
        self.in_flight = 0
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._session: aiohttp.ClientSession | None = None

    def start(self, address: str, port: int) -> None:
        """Listen (raises OSError if it cannot), then serve in a daemon thread."""
        app = web.Application(client_max_size=self.max_body)
        app.router.add_route("*", "/{path:.*}", self.handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        self._loop.run_until_complete(self._listen(self._runner, address, port))
        threading.Thread(target=self._loop.run_forever, name="http-guard", daemon=True).start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening and close the connections to the server: on its way out it waits for every open HTTP
        connection, idle keep-alive ones included, until its exit timeout."""
        if not self._closed:
            self._closed = True
            closing = asyncio.run_coroutine_threadsafe(self._close(), self._loop)
            try:
                closing.result(timeout)
            except Exception:  # noqa: BLE001 - a request that would not finish: the server stops anyway
                closing.cancel()

    async def _close(self) -> None:
        await self._runner.cleanup()
        await self._session.close()

    async def _listen(self, runner: web.AppRunner, address: str, port: int) -> None:
        # The server answers on keep-alive connections of its own; no limit here beyond its thread count.
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), auto_decompress=False,
                                              timeout=aiohttp.ClientTimeout(total=None))
        await runner.setup()
        await web.TCPSite(runner, address, port, reuse_address=True).start()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        try:
            body = await self._read(request)
            check_body(request.method, request.path, body, request.headers.get(HEADER_LENGTH))
            return await self._forward(request, body)
        except Refused as refused:
            return web.json_response({"error": str(refused)}, status=refused.status)
        finally:
            self.in_flight -= 1

    async def _read(self, request: web.Request) -> bytes:
        limit = f"this server takes at most {self.max_body:,} bytes (--http-max-body-bytes)"
        if request.content_length is not None and request.content_length > self.max_body:
            raise Refused(413, f"the request body has {request.content_length:,} bytes; {limit}")
        try:
            return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise Refused(413, f"the request body grew past the limit: {limit}") from None
        except (RequestPayloadError, HttpProcessingError) as error:  # a broken chunked or compressed body
            raise Refused(400, f"the request body could not be read: {short(str(error), 200)}") from None

    async def _forward(self, request: web.Request, body: bytes) -> web.Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        try:
            # No Accept-Encoding of the front's own: the server compresses only for a client that asked.
            async with self._session.request(request.method, self.upstream + request.path_qs, headers=headers,
                                             data=body if body else None,
                                             skip_auto_headers=("Accept-Encoding",)) as answer:
                content = await answer.read()
                kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP - {"content-encoding"}}
                return web.Response(status=answer.status, body=content, headers=kept)
        except aiohttp.ClientError as error:
            return web.json_response({"error": f"the server behind this endpoint did not answer: {error}"}, status=502)
