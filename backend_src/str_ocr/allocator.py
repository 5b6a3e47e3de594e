"""The memory allocator of a training run's processes.

On a CPU the trainer runs best under jemalloc told to keep what it frees for reuse (``LD_PRELOAD=libjemalloc.so.2
MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1``, as ``make train`` runs it where jemalloc is installed); a data
process forked from it inherits that setting, and there it only piles up. ``purge_freed_memory`` gives such a
process jemalloc's default back.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

JEMALLOC_DEFAULT_DECAY_MS = 10_000
"""jemalloc's default time for freed pages (dirty, then muzzy) to be returned to the system."""


def _mallctl() -> Callable[..., int] | None:
    """jemalloc's control function where this process runs under jemalloc (preloaded or linked), else None."""
    process = ctypes.CDLL(None)
    return getattr(process, "mallctl", None)


def decay_ms(name: str) -> int | None:
    """A jemalloc decay setting (``arenas.dirty_decay_ms``, ``arena.0.muzzy_decay_ms``, ...), or None without
    jemalloc."""
    mallctl = _mallctl()
    if mallctl is None:
        return None
    value, size = ctypes.c_ssize_t(), ctypes.c_size_t(ctypes.sizeof(ctypes.c_ssize_t))
    if mallctl(name.encode(), ctypes.byref(value), ctypes.byref(size), None, 0) != 0:
        raise OSError(f"jemalloc has no setting {name!r}")
    return value.value


def keeps_freed_memory() -> bool:
    """Whether this process runs under jemalloc told to keep what it frees for reuse (``make train``'s setting)."""
    return decay_ms("arenas.dirty_decay_ms") == -1 and decay_ms("arenas.muzzy_decay_ms") == -1


def purge_freed_memory(_worker_id: int | None = None) -> bool:
    """Under jemalloc, return freed pages to the system after jemalloc's default time, in every arena of this process
    and those it makes later; whether it runs under jemalloc. A ``DataLoader``'s ``worker_init_fn``."""
    mallctl = _mallctl()
    if mallctl is None:
        return False
    count, size = ctypes.c_uint(), ctypes.c_size_t(ctypes.sizeof(ctypes.c_uint))
    if mallctl(b"arenas.narenas", ctypes.byref(count), ctypes.byref(size), None, 0) != 0:
        raise OSError("jemalloc does not say how many arenas it has")
    value = ctypes.c_ssize_t(JEMALLOC_DEFAULT_DECAY_MS)
    names = [f"arenas.{kind}_decay_ms" for kind in ("dirty", "muzzy")]
    names += [f"arena.{i}.{kind}_decay_ms" for i in range(count.value) for kind in ("dirty", "muzzy")]
    for name in names:
        # An arena not yet made refuses (EFAULT); it takes the arenas.* default when it is made.
        mallctl(name.encode(), None, None, ctypes.byref(value), ctypes.sizeof(value))
    return True
