"""text_recognition served by a real tritonserver, in every configuration variant."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import torch
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from str_ocr.engines import ENGINES
from str_ocr_client.http import TritonHTTP
from str_ocr_client.requests import recognizer_inputs
from str_ocr_client.stats import counts_since, execution_counts, metric_total, scrape
from str_ocr_triton.config import default_repository, read_model_config
from tests.unit.str_ocr.test_ragged import logit_tolerance

from ..helpers import MODEL, admin_headers, in_process_engine, infer, send_concurrently, served_config, tutorial_input

pytestmark = pytest.mark.integration


def test_every_variant_answers_the_tutorial_request(client):
    logits = infer(client, tutorial_input(batch=2))
    assert logits.shape == (2, 26, 37) and logits.dtype == np.float32
    assert client.is_model_ready(MODEL)


def test_served_logits_equal_in_process_logits(variant_server):
    config = served_config(variant_server)
    engine = in_process_engine(config)  # the same engine and precision (TF32 on a GPU)
    with grpcclient.InferenceServerClient(variant_server.grpc_url) as client:
        for batch, width in [(1, 100), (3, 100), (2, 57)]:
            lines = tutorial_input(batch, width, seed=width)
            expected = engine(torch.from_numpy(lines).to(engine.device), None).cpu().numpy()
            np.testing.assert_allclose(infer(client, lines), expected, rtol=0,
                                       atol=logit_tolerance(config["instance_group"][0]["kind"]))


def with_parameters(config: dict, **parameters: str) -> dict:
    changed = json.loads(json.dumps(config))
    changed.setdefault("parameters", {}).update({k: {"string_value": v} for k, v in parameters.items()})
    return changed


def load_config(server, config: dict) -> None:
    """Load text_recognition anew with ``config``, as an operator's update would."""
    status, body = TritonHTTP(server.http_url, server.admin_key).load(MODEL, config)
    assert status == 200, f"{config.get('parameters')}: {body}"


def test_every_variant_serves_on_every_f32_engine_with_the_same_logits(client, variant_server):
    config = served_config(variant_server)
    if any(g["kind"] == "KIND_GPU" for g in config["instance_group"]):
        pytest.skip("the ONNX Runtime and OpenVINO engines are CPU engines; this variant runs on the GPU here")
    lines = [tutorial_input(3, 100, seed=1), tutorial_input(2, 57, seed=2)]
    logits = {}
    try:
        for engine in ENGINES:
            load_config(variant_server, with_parameters(config, engine=engine, precision="f32"))
            logits[engine] = [infer(client, x) for x in lines]
    finally:
        load_config(variant_server, config)
    for engine in ENGINES:
        for ours, reference in zip(logits[engine], logits["torch"]):
            np.testing.assert_allclose(ours, reference, rtol=0, atol=logit_tolerance("cpu"), err_msg=engine)


def columns_by_load(server) -> dict[str, float]:
    """The real columns counted by each series of text_recognition's counter, by its labels."""
    counted = {}
    for line in scrape(server.metrics_url).splitlines():
        if line.startswith("str_ocr_columns_total{") and 'kind="real"' in line:
            labels, value = line.rsplit(" ", 1)
            counted[labels] = float(value)
    return counted


def test_a_reloaded_instance_counts_from_zero_in_counters_of_its_own(serve):
    server = serve("queue_delay_100us")
    client = grpcclient.InferenceServerClient(server.grpc_url)
    config = served_config(server)
    if any(g["kind"] == "KIND_GPU" for g in config["instance_group"]):
        pytest.skip("reloads with the ONNX Runtime engine, a CPU engine; this variant runs on the GPU here")
    seen = set(columns_by_load(server))
    try:
        for engine in ("torch", "onnxruntime", "torch"):
            load_config(server, with_parameters(config, engine=engine))
            infer(client, tutorial_input(1, width=100))
            deadline = time.monotonic() + 30
            while len(counted := columns_by_load(server)) > 1 and time.monotonic() < deadline:
                time.sleep(0.2)  # the older load's counters go with its unloading, just after the load returns
            assert len(counted) == 1, f"{engine}: the older load's counters outlived its unloading: {counted}"
            (labels, columns), = counted.items()
            assert columns == 100, f"{engine}: {counted}: the counter did not start from zero at the load"
            assert labels not in seen, f"{engine}: {labels} shared with an earlier load"
            seen.add(labels)
    finally:
        load_config(server, config)
        client.close()


def test_every_variant_runs_on_the_cpu_here_and_shares_the_cores(client, variant_server):
    groups = client.get_model_config(MODEL, headers=admin_headers(variant_server),
                                     as_json=True)["config"]["instance_group"]
    kinds = {g["kind"] for g in groups}
    assert kinds == ({"KIND_GPU"} if torch.cuda.is_available() else {"KIND_CPU"})


@pytest.mark.parametrize("variant, batched", [("no_batching", False), ("dynamic_batching", True)])
def test_dynamic_batching_forms_batches_and_no_batching_does_not(serve, variant, batched):
    server = serve(variant)
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = execution_counts(client, admin_key=server.admin_key)
        requests = [tutorial_input(batch=2, seed=i) for i in range(320)]
        results = send_concurrently(server.grpc_url, requests, concurrency=16)
        inferences, executions = counts_since(client, before, 640, admin_key=server.admin_key)
    assert all(isinstance(r, np.ndarray) and r.shape == (2, 26, 37) for r in results)
    assert inferences == 640
    images_per_execution = inferences / executions
    print(f"{variant}: {images_per_execution:.2f} images per execution")
    if batched:
        assert images_per_execution > 2
    else:
        assert images_per_execution == 2


def test_values_outside_the_normalised_range_are_served_finite_and_counted(serve):
    server = serve("queue_delay_100us")
    clamped = lambda kind: metric_total(server.metrics_url, "str_ocr_clamped_lines_total", kind=kind)  # noqa: E731
    before = clamped("nonfinite"), clamped("out_of_range")
    good = [tutorial_input(1, seed=i) for i in range(24)]
    nan, inf, huge = tutorial_input(1, seed=99), tutorial_input(1, seed=98), tutorial_input(1, seed=97)
    nan[0, 0, 3, 3] = np.nan
    inf[0, 0, 0, 0] = -np.inf
    huge[0, 0, 5] = 3e38
    results = send_concurrently(server.grpc_url, good[:8] + [nan] + good[8:16] + [inf, huge] + good[16:],
                                concurrency=27)
    assert all(isinstance(r, np.ndarray) and np.isfinite(r).all()
               for r in results), [r for r in results if isinstance(r, Exception)]
    assert (clamped("nonfinite") - before[0], clamped("out_of_range") - before[1]) == (2, 1)
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        nan[0, 0, 3, 3] = 0.0  # what a NaN is read as: mid-grey
        np.testing.assert_allclose(results[8], infer(client, nan), rtol=0, atol=1e-4)


@pytest.mark.parametrize(
    "array, datatype, message",
    [
        (tutorial_input(1, width=2), None, "2 pixels wide"),
        (tutorial_input(1, dtype=np.float64), None, "FP64"),
        (tutorial_input(1)[:, :, :31], None, "shape"),
    ],
    ids=["too-narrow", "wrong-dtype", "wrong-height"],
)
def test_malformed_requests_get_a_clear_error_and_the_server_keeps_serving(serve, array, datatype, message):
    server = serve("dynamic_batching")
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        with pytest.raises(InferenceServerException, match=message):
            client.infer(MODEL, recognizer_inputs(array, datatype))
        assert infer(client, tutorial_input(1)).shape == (1, 26, 37)
        assert client.is_server_ready()


def test_the_recommended_config_is_the_default(serve):
    server = serve(None)
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        served = client.get_model_config(MODEL, headers=admin_headers(server), as_json=True)["config"]
    recommended = read_model_config(default_repository() / MODEL)
    assert served["max_batch_size"] == recommended.max_batch_size
    assert ("dynamic_batching" in served) == recommended.HasField("dynamic_batching")
