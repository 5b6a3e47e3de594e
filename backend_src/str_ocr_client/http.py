"""The server's HTTP API as the launcher and the tests use it: health, the repository, loading and unloading.

Every request carries the admin key when one is given, so the same client works against a server whose
administrative APIs are restricted.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

ADMIN_HEADER = "admin-key"
"""The HTTP header that carries the admin key where the administrative APIs are restricted."""
GRPC_ADMIN_HEADER = f"triton-grpc-protocol-{ADMIN_HEADER}"
"""The same over gRPC (Triton prefixes restricted-protocol headers)."""


class TritonHTTP:
    """A small client of the server's HTTP endpoint that sends the admin key on every request."""

    def __init__(self, url: str, key: str | None = None) -> None:
        self.base = f"http://{url}/v2"
        self.headers = {"Content-Type": "application/json"} | ({ADMIN_HEADER: key} if key else {})

    def call(self, path: str, body: object | None = None, timeout: float = 5.0) -> tuple[int, object]:
        """(HTTP status, decoded JSON body or None); status 0 when the server cannot be reached."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, headers=self.headers,
                                         method="GET" if data is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return 0, None
        try:
            return status, json.loads(raw) if raw else None
        except json.JSONDecodeError:
            return status, raw.decode(errors="replace")

    def live(self) -> bool:
        return self.call("/health/live")[0] == 200

    def ready(self, model: str | None = None) -> bool:
        return self.call(f"/models/{model}/ready" if model else "/health/ready")[0] == 200

    def index(self) -> list[dict]:
        status, body = self.call("/repository/index", {})
        return body if status == 200 and isinstance(body, list) else []

    def load(self, model: str, config: dict | None = None, files: dict[str, str] | None = None,
             timeout: float = 300) -> tuple[int, object]:
        """Load ``model``; with ``config`` (the whole configuration, as JSON), load it with that one instead of
        its config.pbtxt, even if already loaded: the server then loads it anew beside the old one and swaps.
        ``files``: the model's files in the request (``file:PATH`` -> base64 contents), as the load API takes them."""
        parameters = ({"config": json.dumps(config)} if config is not None else {}) | (files or {})
        return self.call(f"/repository/models/{model}/load", {"parameters": parameters} if parameters else {}, timeout)

    def config(self, model: str) -> dict | None:
        """The configuration the server runs ``model`` with, as JSON (None when it cannot say)."""
        status, body = self.call(f"/models/{model}/config")
        return body if status == 200 and isinstance(body, dict) else None

    def unload(self, model: str, timeout: float = 60) -> tuple[int, object]:
        return self.call(f"/repository/models/{model}/unload", {}, timeout)
