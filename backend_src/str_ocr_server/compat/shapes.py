"""The declared shapes the proxies refuse before tritonserver sees them, whatever the protocol.

Up to 2.67 the server computes an input's byte size from its declared shape without an overflow check: a shape
whose size wraps around to the data's size passes and kills the Python stub that unpacks it. Retired by server
2.67 (``listen_policy`` says how).
"""

from __future__ import annotations

from collections.abc import Sequence

INT64_MAX = 2**63 - 1
MAX_DIMS = 64
"""More dimensions than any tensor a model here takes (the server's own limit is far above)."""
ELEMENT_BYTES = {"BOOL": 1, "INT8": 1, "UINT8": 1, "INT16": 2, "UINT16": 2, "FP16": 2, "BF16": 2, "INT32": 4,
                 "UINT32": 4, "FP32": 4, "INT64": 8, "UINT64": 8, "FP64": 8, "BYTES": 1}
"""Bytes per element; a BYTES element is at least its 4-byte length, counted as 1 so that only the count binds."""


def element_count(shape: Sequence[int], limit: int) -> int | None:
    """The product of ``shape``, or None once it passes ``limit`` (stopping there: no huge products)."""
    if 0 in shape:
        return 0
    count = 1
    for dim in shape:
        count *= dim
        if count > limit:
            return None
    return count


def shape_problem(name: str, datatype: str, shape: Sequence[int]) -> str | None:
    """Why input ``name`` must not reach the server with this declared shape; None if it may."""
    if len(shape) > MAX_DIMS or not all(0 <= d <= INT64_MAX for d in shape):
        return (f"input '{name}' needs a 'shape' of at most {MAX_DIMS} non-negative 64-bit integers; got "
                f"{short(list(shape))}")
    if element_count(shape, INT64_MAX // ELEMENT_BYTES.get(datatype, 1)) is None:
        return (f"input '{name}' declares shape {short(list(shape))}: more {datatype} elements than a 64-bit size "
                "can hold")
    return None


def short(value: object, length: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= length else text[:length] + "..."
