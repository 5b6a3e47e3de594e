"""str_ocr: scene-text recognition (None-ResNet-None-CTC) for serving with Triton.

No Triton import anywhere in this package: the model repository's ``model.py`` files are thin
adapters over it, and everything here is testable on its own.

The names below load their module on first use, so that ``str_ocr.contract`` (the served models'
names and shapes) is read by the launcher and the clients without loading torch.
"""

from importlib import import_module

_MODULE_OF = {
    "ALPHABET": "text", "BLANK": "text", "NUM_CLASSES": "text", "Reading": "text",
    "greedy_decode": "text", "greedy_decode_batch": "text",
    "INPUT_HEIGHT": "contract", "INPUT_NAME": "contract", "MIN_WIDTH": "contract", "OUTPUT_NAME": "contract",
    "output_length": "contract",
    "CheckpointMismatchError": "checkpoint", "load_model": "checkpoint", "save_checkpoint": "checkpoint",
    "STRModel": "model",
    "denormalize": "preprocess", "normalize": "preprocess",
    "InputError": "errors", "LineLimits": "preprocess", "Recognizer": "recognizer",
}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> object:
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'str_ocr' has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)


def __dir__() -> list[str]:
    return __all__
