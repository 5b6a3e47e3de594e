"""What the server's processes cost in CPU time, read from ``/proc`` (Linux).

Throughput on a few shared cores moves with whatever else runs there; the CPU seconds the server spends
per inference do not, and set against the model alone's CPU seconds per image they say what serving costs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


def cpu_seconds(pids: Sequence[int]) -> float:
    """User and system CPU time so far of the processes ``pids`` (those gone count as nothing)."""
    ticks = 0
    for pid in pids:
        try:
            # The fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")
