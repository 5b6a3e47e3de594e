"""What the server's processes cost in CPU time, read from ``/proc`` (Linux).

Throughput on a few cores the load generator shares counts what the load generator took; the CPU seconds the
server's processes spend per inference count only serving, and set against the model alone's CPU seconds per
image they say what serving costs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from str_ocr_server.compat.stubs import stat_fields


def cpu_seconds(pids: Sequence[int]) -> float:
    """User and system CPU time so far of the processes ``pids`` (those gone count as nothing)."""
    ticks = 0
    for pid in pids:
        if fields := stat_fields(pid):  # utime and stime are the 12th and 13th after the command name
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")
