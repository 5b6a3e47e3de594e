"""The names and labels of the models' custom Prometheus metrics.

Workaround for server#8663 (every release so far; the fix is core#471, not yet in a release): two loads of an
instance whose metrics carry the same labels share one Prometheus counter, and unloading the older one frees that
counter while the newer one still writes to it. A reload (a new config, an engine changed) then resets the counters
and can corrupt the server's memory: a server that hangs, its metrics endpoint with it. A ``load`` label unique to
each load keeps every load's counters its own; once core#471 is in the server the image pins, drop it.
"""

from __future__ import annotations

import uuid

DROPPED_COUNTER = ("str_ocr_page_boxes_dropped_total", "Text boxes and words dropped past max_boxes or max_words")
"""``ocr_page``'s counter of the boxes and words it dropped: its name and description."""
READ_AGAIN_COUNTER = ("str_ocr_lines_read_again_total",
                      "Lines read again at other stretches, their first reading less sure than read_again_below")
"""``ocr_postprocess``'s and ``ocr_page``'s counter of the lines they read again: its name and description."""


def instance_labels(model: str, version: str, instance: str) -> dict[str, str]:
    """``model``, ``version``, ``instance``, and ``load``: a token of this load of the instance, so that no other load
    shares its counters (server#8663)."""
    return {"model": model, "version": version, "instance": instance, "load": uuid.uuid4().hex[:12]}
