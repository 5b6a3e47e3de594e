"""The Python backend's stub processes of a running tritonserver, read from ``/proc``.

Each model instance of the Python backend runs in its own stub process, a child of tritonserver whose
command line names the model's ``model.py``, its shared-memory region in ``/dev/shm`` and the instance.
A stub that died stays a zombie until the server reaps it, which server 2.51 does only when the instance is
destroyed (for a replaced version, the launcher has it done: ``stub_reaper``); neither the dead stub nor the server
then removes its region. Part of ``stub_recovery``'s workaround (no upstream fix yet, server#8604); and
``kill_session`` ends the stubs a dead server leaves running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
SHM = Path("/dev/shm")
STUB_BINARY = "triton_python_backend_stub"
REGION_PREFIX = "triton_python_backend_shm_region_"


@dataclass(frozen=True)
class Stub:
    pid: int
    model: str
    instance: str
    region: str = ""


def stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name: [state, ppid, ...]; None once it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def is_zombie(fields: list[str] | None) -> bool:
    """Whether the process whose ``stat_fields`` these are has died and not been reaped by its parent."""
    return fields is not None and fields[0] in ("Z", "X")


def exit_status(fields: list[str] | None) -> int | None:
    """A zombie's exit status as ``waitpid`` would give it (``/proc/PID/stat``'s 52nd field): 0 for a clean exit,
    ``code << 8`` for ``exit(code)``, the signal's number for a kill; None where it cannot be read."""
    try:
        return int(fields[49]) if fields is not None else None
    except (IndexError, ValueError):
        return None


def is_alive(pid: int) -> bool:
    """Running, not a zombie (a dead stub stays a zombie until tritonserver reaps it)."""
    fields = stat_fields(pid)
    return fields is not None and not is_zombie(fields)


def _processes_with(field: int, value: int) -> list[tuple[int, list[str]]]:
    """``(pid, stat_fields)`` of the processes whose ``stat_fields[field]`` is ``value`` (1: parent, 2: group)."""
    found = []
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (fields := stat_fields(int(entry.name))) and fields[field] == str(value):
            found.append((int(entry.name), fields))
    return found


def children(parent: int) -> list[int]:
    """The processes whose parent is ``parent``."""
    return [pid for pid, _ in _processes_with(1, parent)]


def parse_stub(pid: int, repository: Path) -> Stub | None:
    """The model and instance of stub ``pid``, from its command line; None for any other process."""
    try:
        argv = (PROC / str(pid) / "cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return None
    if not argv or not argv[0].endswith(STUB_BINARY) or len(argv) < 9:
        return None
    model_py = Path(argv[1])
    try:
        model = model_py.relative_to(repository).parts[0]
    except ValueError:
        return None
    return Stub(pid, model, argv[8], argv[2])


def stubs_of(server_pid: int, repository: Path) -> list[Stub]:
    """The stubs of ``server_pid`` that run a model of ``repository``, dead (zombie) ones included."""
    return [s for s in (parse_stub(pid, repository) for pid in children(server_pid)) if s is not None]


def living_stubs(server_pid: int, repository: Path) -> list[Stub]:
    """The stubs of ``server_pid`` that run a model of ``repository`` and have not died."""
    return [s for s in stubs_of(server_pid, repository) if is_alive(s.pid)]


def remove_region(stub: Stub) -> bool:
    """Unlink a stub's shared-memory region from ``/dev/shm``: its name only, as a server that still maps it keeps
    its pages until it exits. Safe for the other instances, whose regions are their own. True if it was there."""
    name = stub.region
    if not name.startswith(REGION_PREFIX) or "/" in name or name in (".", ".."):
        return False
    try:
        (SHM / name).unlink()
    except OSError:
        return False
    return True


def only_dead_versions_left(process: subprocess.Popen, repository: Path, settle: float = 1.0) -> bool:
    """Wait until a stopping tritonserver exits (False) or no stub of it has lived for ``settle`` seconds (True):
    every model that could unload has, and what is left are versions with a dead stub, which server 2.51 never
    unloads, so that it would wait out its exit timeout."""
    quiet_since = time.monotonic()
    while process.poll() is None:
        if living_stubs(process.pid, repository):
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= settle:
            return True
        time.sleep(0.1)
    return False


def remove_regions(stubs: Iterable[Stub]) -> int:
    """``remove_region`` for each stub (of a server that died, or of a version the watchdog replaced: nothing else
    unlinks them); how many were there."""
    return sum(remove_region(stub) for stub in stubs)


def reap_orphans(keep: int | None = None) -> int:
    """Wait for this process's dead children other than ``keep`` (the server it runs): in a container the launcher
    is PID 1, and the stubs of a server that died are handed to it. How many it reaped."""
    reaped = 0
    while True:
        try:
            found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return reaped
        if found is None or found.si_pid == keep:
            return reaped
        os.waitpid(found.si_pid, os.WNOHANG)
        reaped += 1


def group_members(group: int) -> list[int]:
    """The living processes of process group ``group`` (zombies left out: they have already died)."""
    return [pid for pid, fields in _processes_with(2, group) if not is_zombie(fields)]


def kill_session(server_pid: int, timeout: float = 5.0) -> int:
    """SIGKILL what lives on of the session of a tritonserver that has exited (started with ``start_new_session``,
    so its session and process group are ``server_pid``), and wait (at most ``timeout`` s) until it has died, so
    that the next server does not load its models beside their memory. How many processes there were.

    A stub's health thread sees its server gone and destroys the stub, which takes the GIL first; a stub that was
    executing a request holds the GIL in its main thread, waiting for a reply the dead server never sends, so the
    stub deadlocks and stays, ignoring SIGTERM. Retired when python_backend's ``pb_stub.cc`` tears a stub down
    without waiting for the GIL (no upstream fix yet). Only a server that has exited may be passed: a live one's
    group holds its working stubs."""
    left = group_members(server_pid)
    if not left:
        return 0
    try:
        os.killpg(server_pid, signal.SIGKILL)
    except ProcessLookupError:  # they went meanwhile
        return 0
    deadline = time.monotonic() + timeout
    while group_members(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(left)
