"""text_recognition served by a real tritonserver, in every configuration variant."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from scripts.serve import DEFAULT_REPOSITORY, read_model_config
from str_ocr import load_model
from str_ocr.serving import ServingSettings, model_parameters
from tests.unit.test_ragged import logit_tolerance

from .helpers import MODEL, batch_stats, infer, infer_input, send_concurrently, stats_after, tutorial_input

pytestmark = pytest.mark.integration


def test_every_variant_answers_the_tutorial_request(client):
    logits = infer(client, tutorial_input(batch=2))
    assert logits.shape == (2, 26, 37) and logits.dtype == np.float32
    assert client.is_model_ready(MODEL)


def test_served_logits_equal_in_process_logits(client, variant_server):
    config = client.get_model_config(MODEL, as_json=True)["config"]
    settings = ServingSettings.from_parameters(model_parameters(config), DEFAULT_REPOSITORY / MODEL / "1")
    kind = config["instance_group"][0]["kind"]
    device = "cuda" if kind == "KIND_GPU" else "cpu"  # the same arithmetic as the instance (TF32 on a GPU)
    model = load_model(settings.checkpoint, settings.output_channels, device=device)
    for batch, width in [(1, 100), (3, 100), (2, 57)]:
        lines = tutorial_input(batch, width, seed=width)
        with torch.inference_mode():
            expected = model(torch.from_numpy(lines).to(device)).cpu().numpy()
        np.testing.assert_allclose(infer(client, lines), expected, rtol=0, atol=logit_tolerance(kind))


def test_every_variant_runs_on_the_cpu_here_and_shares_the_cores(client):
    groups = client.get_model_config(MODEL, as_json=True)["config"]["instance_group"]
    kinds = {g["kind"] for g in groups}
    assert kinds == ({"KIND_GPU"} if torch.cuda.is_available() else {"KIND_CPU"})


@pytest.mark.parametrize("variant, batched", [("no_batching", False), ("dynamic_batching", True)])
def test_dynamic_batching_forms_batches_and_no_batching_does_not(serve, variant, batched):
    server = serve(variant)
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = batch_stats(client)
        requests = [tutorial_input(batch=2, seed=i) for i in range(320)]
        results = send_concurrently(server.grpc_url, requests, concurrency=16)
        inferences, executions = stats_after(client, before, 640)
    assert all(isinstance(r, np.ndarray) and r.shape == (2, 26, 37) for r in results)
    assert inferences == 640
    images_per_execution = inferences / executions
    print(f"{variant}: {images_per_execution:.2f} images per execution")
    if batched:
        assert images_per_execution > 2
    else:
        assert images_per_execution == 2


def test_bad_requests_fail_alone_while_their_batch_mates_succeed(serve):
    server = serve("queue_delay_100us")
    good = [tutorial_input(1, seed=i) for i in range(24)]
    nan = tutorial_input(1, seed=99)
    nan[0, 0, 3, 3] = np.nan
    inf = tutorial_input(1, seed=98)
    inf[0, 0, 0, 0] = -np.inf
    requests = good[:8] + [nan] + good[8:16] + [inf] + good[16:]
    results = send_concurrently(server.grpc_url, requests, concurrency=26)
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 2 and all("NaN or infinite" in str(e) for e in errors)
    assert sum(isinstance(r, np.ndarray) for r in results) == 24


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
            client.infer(MODEL, [infer_input(array, datatype=datatype)])
        assert infer(client, tutorial_input(1)).shape == (1, 26, 37)
        assert client.is_server_ready()


def test_the_recommended_config_is_the_default(serve):
    with grpcclient.InferenceServerClient(serve(None).grpc_url) as client:
        served = client.get_model_config(MODEL, as_json=True)["config"]
    recommended = read_model_config(DEFAULT_REPOSITORY / MODEL)
    assert served["max_batch_size"] == recommended.max_batch_size
    assert ("dynamic_batching" in served) == recommended.HasField("dynamic_batching")
