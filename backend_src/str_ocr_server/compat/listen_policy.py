"""Where the launcher may listen with a server that lets one request with an overflowing shape kill a Python stub.

Up to 2.67 a request whose declared shape has a byte size that overflows 64 bits passes the server's size check,
which wraps around to the data's size, and kills the stub that receives it. The proxies refuse such requests
(``http_proxy``, ``grpc_proxy``); where one is turned off, or an address is given to tritonserver itself, the
launcher listens there only on loopback unless the operator accepts the risk.

Retired by server 2.67 (NGC ``26.03-py3``: core#480 and common#151 check ``GetElementCount``/``GetByteSize`` for
overflow in ``InferenceRequest::Normalize``, before any scheduler or backend, whatever the protocol).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from . import OVERFLOW_FIXED_IN, overflow_fixed

ACCEPT_FLAG = "--accept-known-vulnerability"


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def addresses(address: str | None, triton_args: Sequence[str]) -> list[str]:
    """``address`` (if any) and any other one the tritonserver options given after ``--`` bind (they come last, and
    win)."""
    found = [address] if address else []
    for i, arg in enumerate(triton_args):
        option, _, value = arg.partition("=")
        if option in ("--http-address", "--grpc-address", "--metrics-address"):
            found.append(value or (triton_args[i + 1] if i + 1 < len(triton_args) else ""))
    return found


def refusal(address: str, version: tuple[int, int] | None, accepted: bool) -> str | None:
    """Why the launcher will not listen on ``address`` with this server (None: it will)."""
    if is_loopback(address) or accepted or overflow_fixed(version):
        return None
    release = "of unknown release" if version is None else "{}.{}".format(*version)
    fixed = "{}.{}".format(*OVERFLOW_FIXED_IN)
    return (f"tritonserver {release} lets one request with an overflowing shape kill a Python model instance "
            f"(fixed in {fixed}), so it listens on loopback only. To listen on {address} anyway (behind a proxy "
            f"that bounds shapes, say), add {ACCEPT_FLAG}; or serve with a server {fixed} or later")

