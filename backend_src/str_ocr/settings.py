"""Reading a Triton model configuration's ``parameters`` (the JSON dict the backend hands over) into settings, each
checked, with an error that names the parameter and what it must be. No torch here: the page models read theirs.

``str_ocr.serving`` builds the recogniser from text_recognition's; this module reads the others'
(``ocr_preprocess``, ``ocr_postprocess``, ``text_detection``, ``ocr_page``). Their defaults are in
``str_ocr.contract``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .contract import (CROP_BATCHINGS, DETECTION_PARAMETERS, DETECTOR_ENGINES, DETECTOR_PARAMETERS,
                       POSTPROCESS_PARAMETERS, SECOND_RECOGNIZER_PARAMETER)
from .detection import DetectorSettings
from .images import ImageLimits
from .page import PageSettings
from .preprocess import LineLimits
from .read_again import KEEPS, THRESHOLD_RANGE, read_again_threshold
from .runtime import threads_per_cpu_instance

T = TypeVar("T")
_TRUE, _FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}


def model_parameters(config: Mapping[str, Any]) -> dict[str, str]:
    """The config's ``parameters`` as plain strings."""
    return {key: value["string_value"] for key, value in config.get("parameters", {}).items()}


def cpu_instance_count(config: Mapping[str, Any]) -> int:
    """How many CPU instances of this model the server runs (they share the cores)."""
    groups = config.get("instance_group", [])
    return sum(int(group.get("count", 1)) for group in groups if group.get("kind") == "KIND_CPU")


def setting(parameters: Mapping[str, str], name: str, convert: Callable[[str], T], default: T, expected: str) -> T:
    """Parameter ``name`` converted, ``default`` where it is absent or blank; ``ValueError`` saying it must be
    ``expected`` where it cannot be converted."""
    raw = parameters.get(name, "").strip()
    if not raw:
        return default
    try:
        return convert(raw)
    except ValueError:
        raise ValueError(f"model parameter {name!r} must be {expected}, got {raw!r}") from None


def boolean(raw: str) -> bool:
    if raw.lower() in _TRUE | _FALSE:
        return raw.lower() in _TRUE
    raise ValueError(raw)


def choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def choose(raw: str) -> str:
        if raw.lower() not in choices:
            raise ValueError(raw)
        return raw.lower()
    return choose


def one_of(choices: tuple[str, ...]) -> str:
    return "one of " + ", ".join(choices)


def read_again_below(parameters: Mapping[str, str], default: float) -> float:
    """Parameter ``read_again_below``: the confidence below which a line is read again (``str_ocr.read_again``)."""
    return setting(parameters, "read_again_below", lambda raw: read_again_threshold(float(raw)), default,
                   THRESHOLD_RANGE)


def read_again_keeps(parameters: Mapping[str, str], default: str) -> str:
    """Parameter ``read_again_keeps``: which reading a line read again keeps, one of ``str_ocr.read_again.KEEPS``."""
    return setting(parameters, "read_again_keeps", choice(tuple(KEEPS)), default, one_of(tuple(KEEPS)))


def second_recognizer(parameters: Mapping[str, str], below: float, default: str) -> str:
    """Parameter ``second_recognizer``: the model with second weights that reads the lines read again as well, or
    empty for none; ``ValueError`` where it names one and ``below`` (``read_again_below``) reads no line again."""
    name = parameters.get(SECOND_RECOGNIZER_PARAMETER, default).strip()
    if name and not below:
        raise ValueError(f"model parameter {SECOND_RECOGNIZER_PARAMETER!r} names {name!r}, which reads the lines "
                         "read again, but 'read_again_below' is 0: set it above 0, or leave "
                         f"{SECOND_RECOGNIZER_PARAMETER!r} empty")
    return name


def threads_or_auto(raw: str) -> int | None:
    if raw.lower() == "auto":
        return None
    if int(raw) < 1:
        raise ValueError(raw)
    return int(raw)


def line_limits(parameters: Mapping[str, str], stretched: bool = False) -> LineLimits:
    """The line widths a model accepts (the recogniser) or resizes lines into (``stretched``: ``ocr_preprocess`` and
    ``ocr_page``, which also read ``line_stretch``, how much wider than its aspect ratio a line is scaled)."""
    return LineLimits(
        min_width=setting(parameters, "min_width", int, LineLimits.min_width, "a width in pixels"),
        max_width=setting(parameters, "max_width", int, LineLimits.max_width, "a width in pixels"),
        stretch=setting(parameters, "line_stretch", float, LineLimits.stretch, "a width factor") if stretched
        else LineLimits.stretch,
    )


def image_limits(parameters: Mapping[str, str]) -> ImageLimits:
    """The largest image file ``ocr_preprocess`` accepts, in bytes and in pixels."""
    return ImageLimits(
        max_bytes=setting(parameters, "max_bytes", int, ImageLimits.max_bytes, "a number of bytes"),
        max_pixels=setting(parameters, "max_pixels", int, ImageLimits.max_pixels, "a number of pixels"),
    )


def page_settings(parameters: Mapping[str, str]) -> PageSettings:
    """What ``ocr_page`` is configured with; the defaults are ``str_ocr.contract.PAGE_PARAMETERS``."""
    defaults = PageSettings()
    detector = DetectorSettings(**{
        name: setting(parameters, name, type(default), default, "a number")
        for name, default in vars(defaults.detector).items() if name in DETECTION_PARAMETERS})
    return PageSettings(
        images=ImageLimits(
            max_bytes=setting(parameters, "max_bytes", int, defaults.images.max_bytes, "a number of bytes"),
            max_pixels=setting(parameters, "max_pixels", int, defaults.images.max_pixels, "a number of pixels")),
        detector=detector,
        lines=line_limits(parameters, stretched=True),
        max_boxes=setting(parameters, "max_boxes", int, defaults.max_boxes, "a number of boxes"),
        max_words=setting(parameters, "max_words", int, defaults.max_words, "a number of words"),
        word_gap=setting(parameters, "word_gap", float, defaults.word_gap, "a fraction of the line's height"),
        crop_batching=setting(parameters, "crop_batching", choice(CROP_BATCHINGS), defaults.crop_batching,
                             one_of(CROP_BATCHINGS)),
        max_crops_per_request=setting(parameters, "max_crops_per_request", int, defaults.max_crops_per_request,
                                      "a number of lines"),
        group_padding=setting(parameters, "group_padding", float, defaults.group_padding, "a fraction such as 0.25"),
        max_requests_in_flight=setting(parameters, "max_requests_in_flight", int, defaults.max_requests_in_flight,
                                       "a number of requests"),
        read_again_below=(below := read_again_below(parameters, defaults.read_again_below)),
        read_again_keeps=read_again_keeps(parameters, defaults.read_again_keeps),
        second_recognizer=second_recognizer(parameters, below, defaults.second_recognizer),
    )


@dataclass(frozen=True)
class PostprocessSettings:
    """What ``ocr_postprocess`` is configured with: the widths and stretch of ``ocr_preprocess``'s lines, the
    confidence below which it reads a line again (0: never), how many of its lines an instance has waiting on the
    recogniser at most, the recogniser with second weights that reads them as well (empty: none), and which
    reading a line read again keeps."""

    lines: LineLimits
    read_again_below: float
    max_requests_in_flight: int
    second_recognizer: str = POSTPROCESS_PARAMETERS[SECOND_RECOGNIZER_PARAMETER]
    read_again_keeps: str = POSTPROCESS_PARAMETERS["read_again_keeps"]


def postprocess_settings(parameters: Mapping[str, str]) -> PostprocessSettings:
    """ocr_postprocess's settings; the defaults are ``str_ocr.contract.POSTPROCESS_PARAMETERS``."""
    defaults = POSTPROCESS_PARAMETERS
    in_flight = setting(parameters, "max_requests_in_flight", int, defaults["max_requests_in_flight"],
                        "a number of requests")
    if in_flight < 1:
        raise ValueError("model parameter 'max_requests_in_flight' must be at least 1")
    below = read_again_below(parameters, defaults["read_again_below"])
    return PostprocessSettings(line_limits(parameters, stretched=True), below, in_flight,
                               second_recognizer(parameters, below, defaults[SECOND_RECOGNIZER_PARAMETER]),
                               read_again_keeps(parameters, defaults["read_again_keeps"]))


@dataclass(frozen=True)
class DetectorServing:
    """What a served text_detection instance is configured with: the largest side it accepts, its engine (``auto``:
    ``str_ocr.detection.choose_detector_engine``) and the threads of a CPU instance."""

    max_side: int
    engine: str
    threads: int


def detector_serving(config: Mapping[str, Any]) -> DetectorServing:
    """text_detection's settings; the defaults are ``str_ocr.contract.DETECTOR_PARAMETERS``."""
    parameters = model_parameters(config)
    threads = setting(parameters, "cpu_threads", threads_or_auto, None, "'auto' or a positive integer")
    return DetectorServing(
        max_side=setting(parameters, "max_side", int, DETECTOR_PARAMETERS["max_side"], "a number of pixels"),
        engine=setting(parameters, "engine", choice(("auto", *DETECTOR_ENGINES)), DETECTOR_PARAMETERS["engine"],
                      one_of(("auto", *DETECTOR_ENGINES))),
        threads=threads or threads_per_cpu_instance(cpu_instance_count(config)),
    )
