"""What the model repository's ``model.py`` adapters share: one response per request, and for a request
that cannot be served, its own error, with the code that tells the caller whose mistake it was.

Imported only inside Triton's Python backend, where ``triton_python_backend_utils`` exists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import triton_python_backend_utils as pb_utils

from str_ocr.errors import Cancelled, InputError
from str_ocr_triton.calls import CalledModelError
from str_ocr_triton.metric_labels import instance_labels

Outputs = list  # of pb_utils.Tensor


def error_response(error: BaseException) -> pb_utils.InferenceResponse:
    """INVALID_ARG for a request the caller must change (an ``InputError``), CANCELLED for one its client gave up
    on, a called model's own error and code for its failure (``CalledModelError``), INTERNAL for anything else."""
    if isinstance(error, CalledModelError):
        return pb_utils.InferenceResponse(error=error.triton_error)
    if isinstance(error, (Cancelled, asyncio.CancelledError)):
        return pb_utils.InferenceResponse(error=pb_utils.TritonError("the client cancelled the request",
                                                                    pb_utils.TritonError.CANCELLED))
    code = pb_utils.TritonError.INVALID_ARG if isinstance(error, InputError) else pb_utils.TritonError.INTERNAL
    return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(error), code))


def responses(results: Sequence[Outputs | Exception]) -> list[pb_utils.InferenceResponse]:
    """Each request's outputs, or its error."""
    return [error_response(r) if isinstance(r, Exception) else pb_utils.InferenceResponse(output_tensors=r)
            for r in results]


def answer_each(requests: Sequence[object], work: Callable[[object], Outputs]) -> list[pb_utils.InferenceResponse]:
    """``work`` on each request on its own, so that one failing request fails alone."""
    results: list[Outputs | Exception] = []
    for request in requests:
        try:
            results.append(work(request))
        except Exception as error:  # noqa: BLE001 - this request's answer
            results.append(error)
    return responses(results)


async def answer_all(requests: Sequence[object],
                     work: Callable[[object], Awaitable[Outputs]]) -> list[pb_utils.InferenceResponse]:
    """``work`` on every request at once (each awaiting the models it calls), so that one failing or cancelled
    request fails alone."""
    async def answer(request: object) -> pb_utils.InferenceResponse:
        try:
            return pb_utils.InferenceResponse(output_tensors=await work(request))
        except (Exception, asyncio.CancelledError) as error:  # noqa: BLE001 - this request's answer
            return error_response(error)

    return list(await asyncio.gather(*(answer(request) for request in requests)))


def input_array(request: object, name: str):
    """The request's input ``name`` as a numpy array in CPU memory."""
    return pb_utils.get_input_tensor_by_name(request, name).as_numpy()


class InstanceCounter:
    """A Prometheus counter of one model instance, named and described by ``counter`` (``metric_labels``); ``close``
    it in ``finalize``."""

    def __init__(self, args: dict, counter: tuple[str, str]) -> None:
        name, description = counter
        self.family = pb_utils.MetricFamily(name=name, kind=pb_utils.MetricFamily.COUNTER, description=description)
        self.metric = self.family.Metric(labels=instance_labels(args["model_name"], args["model_version"],
                                                                args["model_instance_name"]))

    def increment(self, count: int) -> None:
        self.metric.increment(count)

    def close(self) -> None:
        self.metric = None  # the metric before its family, as the backend requires
        self.family = None
