"""The ONNX graphs the ONNX Runtime and OpenVINO engines run, exported from the served weights at load time and
cached, so that any checkpoint runs on any engine and a second instance or a restart does not export again.

Two graphs per set of weights: ``plain`` (``input.1`` [N, 1, 32, W] -> ``308``) for batches of one width, and
``masked`` (plus ``widths`` [N] INT64) for lines of different widths packed together. They are cached under
``$STR_OCR_GRAPH_CACHE``, else a folder of this user's in the system's temporary directory (the model repository may
be read-only), named after a hash of the weights, the torch release, the opset and ``GRAPH_FORMAT``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

import torch

from .export import OPSET, export

CACHE_ENV = "STR_OCR_GRAPH_CACHE"
KINDS = ("plain", "masked")
GRAPH_FORMAT = 2
"""Counted up whenever what the graphs compute changes (the mask, the inputs), so that no older graph is reused."""


def weights_key(model: torch.nn.Module) -> str:
    """A name for these weights: any change to a parameter or buffer changes it."""
    digest = hashlib.sha256(f"{torch.__version__} opset {OPSET} format {GRAPH_FORMAT}".encode())
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:24]


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir(), f"str_ocr_graphs-{os.getuid()}"))


def _private_folder(folder: Path) -> Path:
    """``folder``, made if need be, only this user's: another user could otherwise plant graphs in a shared
    temporary directory."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise RuntimeError(f"cannot write the engines' graphs to {folder} ({error.strerror}): set {CACHE_ENV} to a "
                           "writable folder") from None
    if folder.stat().st_uid != os.getuid():
        raise RuntimeError(f"{folder} belongs to another user: set {CACHE_ENV} to a folder of your own")
    return folder


def exported_graphs(model: torch.nn.Module) -> dict[str, Path]:
    """``{"plain": path, "masked": path}`` for ``model`` (on the CPU), exported unless cached already. Instances
    loading at once take turns (a file lock), so the second finds the first one's graphs."""
    folder = cache_dir() / weights_key(model)
    paths = {kind: folder / f"{kind}.onnx" for kind in KINDS}
    if all(path.is_file() for path in paths.values()) and folder.stat().st_uid in (0, os.getuid()):
        return paths  # exported before (by root: into the image, which may be read-only)
    _private_folder(folder.parent)
    folder.mkdir(exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for stale in folder.glob("*.partial"):  # left by an export that was killed
            stale.unlink()
        for kind, path in paths.items():
            if not path.is_file():
                partial = path.with_suffix(".partial")
                export(model.cpu().eval(), partial, dynamic_width=True, with_widths=kind == "masked")
                partial.replace(path)
    return paths
