"""Reaping the stubs of the versions ``stub_recovery`` replaced, which server 2.51 never reaps (no upstream fix yet,
server#8604).

Only a process's parent can wait for it, so a dead stub stays a zombie until tritonserver waits, which 2.51 does
only when it destroys the instance; after a crash it never does. The launcher therefore runs tritonserver with a
small library preloaded (``reap_stubs.c``, built by ``make setup`` and in the image) whose thread waits for the pids
the launcher writes to it, and whose ``kill``/``waitpid`` keep the backend's view of those pids as it was.

    reaper = StubReaper()                # where LIBRARY is built
    process = subprocess.Popen(command, env=reaper.environment(env), pass_fds=reaper.pass_fds)
    reaper.started()
    reaper.reap([pid, ...])              # dead children of tritonserver: waited for by it
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

LIBRARY = Path(__file__).with_name("libreap_stubs.so")
FD_ENV = "STR_OCR_REAP_FD"
PRELOAD_ENV = "STR_OCR_LD_PRELOAD"
"""The LD_PRELOAD the server had before the library was added; the library restores it for the server's children."""


class StubReaper:
    def __init__(self, library: Path = LIBRARY) -> None:
        self.library = library
        self.read_end, self.write_end = os.pipe()
        self.lock = threading.Lock()

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (self.read_end,)

    def variables(self, env: dict[str, str]) -> dict[str, str]:
        """What to add to ``env`` for tritonserver: the library preloaded and told where to read pids."""
        before = env.get("LD_PRELOAD", "")
        return {"LD_PRELOAD": f"{self.library} {before}".strip(), PRELOAD_ENV: before, FD_ENV: str(self.read_end)}

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with ``variables``."""
        return env | self.variables(env)

    def started(self) -> None:
        """The server has its read end: the launcher's copy is closed, so that the library sees the end of the pipe
        when the launcher exits."""
        os.close(self.read_end)

    def reap(self, pids: Iterable[int]) -> None:
        """Ask the server to wait for these pids; one that is not its dead child is left as it is."""
        text = "".join(f"{pid}\n" for pid in pids)
        with self.lock:
            if text and self.write_end >= 0:
                try:
                    os.write(self.write_end, text.encode())
                except OSError:  # the server is gone, and its zombies with it
                    pass

    def release(self) -> None:
        """Close the launcher's end of the pipe (once): the library's thread then ends. A later ``reap`` does nothing,
        so a timer of the run before never writes to a descriptor a new run has reused."""
        with self.lock:
            if self.write_end >= 0:
                os.close(self.write_end)
                self.write_end = -1
