"""Workarounds for tritonserver 2.51, the release the ``nvidia-pytriton`` wheel and NGC 24.10 ship. Each is imported
only for a server that needs it, and each module names the upstream change that retires it.

| workaround | modules | retired by |
| --- | --- | --- |
| a declared shape whose byte size overflows 64 bits passes the server's size check and kills the Python stub that unpacks it: proxies refuse it first, and without them the launcher keeps to loopback | ``shapes``, ``proxy``, ``http_proxy``, ``grpc_proxy``, ``listen_policy`` | server 2.67 (NGC 26.03; core#480, common#151) |
| (not a 2.51 bug) tritonserver buffers any HTTP body whole and answers malformed JSON with 500: the HTTP proxy stays in front of a fixed server too, bounding bodies and answering 400 | ``http_proxy`` | nothing planned: ``--no-http-guard`` drops it |
| the Python backend neither restarts a dead stub nor stops handing requests to its instance, stays ready, and never reaps it: the launcher replaces the model, says not ready meanwhile, sends again what the dead instance failed, and reaps | ``stub_recovery``, ``stubs``, ``not_ready``, ``stub_reaper`` (``reap_stubs.c``), ``retry`` | none yet (server#8604) |
| (not 2.51 alone: the later stub code exits the same way) the stubs a dead server leaves deadlocked, mid-request when it died: the launcher kills what is left of its session | ``stubs`` (``kill_session``) | a stub teardown that does not wait for the GIL (no upstream fix yet) |
| (every release, and not the launcher's) two loads of an instance share the counters of its custom metrics, and unloading the older frees them under the newer: the stub gives each load a label of its own | ``str_ocr_triton.metric_labels`` | core#471 (server#8663) |
"""  # noqa: E501

from __future__ import annotations

OVERFLOW_FIXED_IN = (2, 67)
"""The first server release that refuses overflowing shapes, over every protocol, before any backend sees them."""


def overflow_fixed(version: tuple[int, int] | None) -> bool:
    """Whether a server of this release (None: unknown, as the wheel's 2.51 is) refuses overflowing shapes itself."""
    return version is not None and version >= OVERFLOW_FIXED_IN
