"""What this CPU offers the engines, asked once. No torch here: the page models read it too."""

from __future__ import annotations

import functools


@functools.cache
def native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (OpenVINO's view), so that bf16 is faster rather than emulated; False
    where OpenVINO cannot tell (not installed, no CPU plugin). The trainer asks torch instead
    (``training.torch_native_bf16``): it computes with torch, and need not load OpenVINO."""
    try:
        import openvino  # noqa: PLC0415

        return "BF16" in openvino.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    except Exception:  # noqa: BLE001 - any failure to ask means no bf16 to rely on
        return False
