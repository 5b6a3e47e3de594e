"""What the two proxies share: each serves from an event loop in a thread of its own and forwards to tritonserver's
endpoint on loopback behind it (``http_proxy``, ``grpc_proxy``). They exist for server 2.51 (``listen_policy``
says until when)."""

from __future__ import annotations

import asyncio
import threading

from .retry import RETRY_WINDOW


class Proxy:
    """Listens on ``address:port`` once started and forwards to the server at ``upstream`` (host:port).

    ``limit``: the largest request taken, in bytes; ``serving``: set while the server behind serves every model
    (``retry`` holds requests a dead instance failed until then, if ``retry``: where something replaces it)."""

    name = "proxy"

    def __init__(self, upstream: str, limit: int, serving: threading.Event, retry: bool = True) -> None:
        self.upstream, self.limit, self.serving = upstream, limit, serving
        self.retry_window = RETRY_WINDOW if retry else 0.0
        self.stopping = threading.Event()
        """Set when the launcher stops: requests held for a retry are answered at once."""
        self.in_flight = 0
        """Requests taken and not yet answered (the launcher's drain waits for them)."""
        self._stopped = False
        self._loop = asyncio.new_event_loop()

    def start(self, address: str, port: int) -> None:
        """Listen (raises OSError if it cannot), then serve in a daemon thread."""
        self._loop.run_until_complete(self._listen(address, port))
        threading.Thread(target=self._loop.run_forever, name=self.name, daemon=True).start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop listening and close the connections to the server (once; later calls do nothing)."""
        if not self._stopped:
            self._stopped = True
            stopping = asyncio.run_coroutine_threadsafe(self._stop(), self._loop)
            try:
                stopping.result(timeout)
            except Exception:  # noqa: BLE001 - a request that would not finish: the server stops anyway
                stopping.cancel()

    async def _listen(self, address: str, port: int) -> None:
        raise NotImplementedError

    async def _stop(self) -> None:
        raise NotImplementedError
