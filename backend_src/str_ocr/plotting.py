"""Drawing the pictures that runs write beside their figures."""

from __future__ import annotations

from types import ModuleType


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend (files only, no display). Imported when a picture is drawn, not with
    the module that draws it: serving and most commands draw nothing."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt
