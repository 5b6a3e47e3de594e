"""What the launcher's fronts share: each serves from an event loop in a thread of its own, forwarding to
tritonserver's endpoint behind it (``str_ocr_server.http_guard``, ``str_ocr_server.grpc_guard``)."""

from __future__ import annotations

import asyncio
import threading


class Front:
    """Listens on ``address:port`` once started and forwards to the server at ``upstream`` (host:port)."""

    name = "front"

    def __init__(self, upstream: str, limit: int) -> None:
        self.upstream, self.limit = upstream, limit
        self.in_flight = 0
        """Requests taken and not yet answered (the launcher's drain waits for them)."""
        self._closed = False
        self._loop = asyncio.new_event_loop()

    def start(self, address: str, port: int) -> None:
        """Listen (raises OSError if it cannot), then serve in a daemon thread."""
        self._loop.run_until_complete(self._listen(address, port))
        threading.Thread(target=self._loop.run_forever, name=self.name, daemon=True).start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening and close the connections to the server (once; later calls do nothing)."""
        if not self._closed:
            self._closed = True
            closing = asyncio.run_coroutine_threadsafe(self._close(), self._loop)
            try:
                closing.result(timeout)
            except Exception:  # noqa: BLE001 - a request that would not finish: the server stops anyway
                closing.cancel()

    async def _listen(self, address: str, port: int) -> None:
        raise NotImplementedError

    async def _close(self) -> None:
        raise NotImplementedError
