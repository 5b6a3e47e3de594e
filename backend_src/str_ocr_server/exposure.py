"""Which address the server listens on, and the known vulnerability that keeps it on loopback by default.

Up to the release named in ``OVERFLOW_FIXED_IN``, a request whose declared shape has a byte size that
overflows 64 bits (``input.1`` ``[1, 1, 32, 2**57 + 100]`` with 12,800 bytes of data) passes the server's
size check, which wraps around to the data's size, and kills the Python stub that receives it: its
batch-mates fail, and the model is down until the watchdog replaces it. The launcher's fronts refuse such
requests (``str_ocr_server.http_guard``, ``str_ocr_server.grpc_guard``); nothing in the model repository runs
before the stub unpacks a request, so where a front is turned off, or an address is given to tritonserver
itself, the launcher listens there only on loopback with such a server unless the operator accepts the risk.

Upstream, the server refuses such requests with ``INVALID_ARG`` in ``InferenceRequest::Normalize`` (core),
before any scheduler or backend, from release 2.67 (NGC ``26.03-py3``: core #480 and common #151, the
overflow-checked ``GetElementCount``/``GetByteSize``). Server #8182, in 2.58 (``25.05``), covered only
HTTP/JSON ``data`` inputs, not binary data, shared memory or gRPC.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from pathlib import Path

OVERFLOW_FIXED_IN = (2, 67)
"""The first server release that refuses such shapes, over every protocol, before any backend sees them."""
ACCEPT_FLAG = "--accept-known-vulnerability"


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def local_host(address: str) -> str:
    """Where this machine reaches a server bound to ``address``, as a URL's host (IPv6 in brackets)."""
    if address in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{address}]" if ":" in address else address


def addresses(address: str | None, triton_args: Sequence[str]) -> list[str]:
    """``address`` (if any) and any other one the tritonserver options given after ``--`` bind (they come last, and
    win)."""
    found = [address] if address else []
    for i, arg in enumerate(triton_args):
        option, _, value = arg.partition("=")
        if option in ("--http-address", "--grpc-address", "--metrics-address"):
            found.append(value or (triton_args[i + 1] if i + 1 < len(triton_args) else ""))
    return found


def server_version(binary: Path) -> tuple[int, int] | None:
    """The release of the server whose ``bin/tritonserver`` is ``binary``, from NVIDIA's ``TRITON_VERSION``
    file beside ``bin/`` (None where there is none, as in the wheel's server, 2.51)."""
    try:
        text = (binary.parent.parent / "TRITON_VERSION").read_text()
    except OSError:
        return None
    match = re.match(r"\s*(\d+)\.(\d+)", text)
    return (int(match[1]), int(match[2])) if match else None


def refusal(address: str, version: tuple[int, int] | None, accepted: bool) -> str | None:
    """Why the launcher will not listen on ``address`` with this server (None: it will)."""
    if is_loopback(address) or accepted or (version is not None and version >= OVERFLOW_FIXED_IN):
        return None
    release = "of unknown release" if version is None else "{}.{}".format(*version)
    fixed = "{}.{}".format(*OVERFLOW_FIXED_IN)
    return (f"tritonserver {release} lets one request with an overflowing shape kill a Python model instance "
            f"(fixed in {fixed}), so it listens on loopback only. To listen on {address} anyway (behind a proxy "
            f"that bounds shapes, say), add {ACCEPT_FLAG}; or serve with a server {fixed} or later")
