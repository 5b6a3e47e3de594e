"""Ragged batching, seen from the server's own statistics and metrics."""

from __future__ import annotations

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from str_ocr import greedy_decode, normalize, output_length
from str_ocr.synth import TextLineSynth
from str_ocr_client.stats import counts_since, execution_counts, metric_total

from ..helpers import (busy_instance_blocker, infer, send_behind_a_busy_instance, send_concurrently, served_config,
                       served_logit_tolerance)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def mixed_lines() -> list[np.ndarray]:
    """64 generated text lines, each a request [1, 1, 32, W], of many different widths."""
    synth = TextLineSynth(seed=2024)
    return [normalize(synth.sample().image)[np.newaxis, np.newaxis] for _ in range(64)]


def run_mix(server, lines):
    """Every line a request, sent concurrently: (results, (inferences, executions)) of the lines alone."""
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = execution_counts(client, admin_key=server.admin_key)
        results = send_concurrently(server.grpc_url, lines, concurrency=16)
        return results, counts_since(client, before, len(lines), admin_key=server.admin_key)


def run_mix_batched(server, lines):
    """As ``run_mix``, but queued behind a slow request so that they are batched on any machine.

    The (inferences, executions) returned leave out the blocking request's own.
    """
    blocker = busy_instance_blocker()
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = execution_counts(client, admin_key=server.admin_key)
        blocked, results = send_behind_a_busy_instance(server.grpc_url, lines, blocker)
        assert isinstance(blocked, np.ndarray), blocked
        inferences, executions = counts_since(client, before, len(lines) + len(blocker), admin_key=server.admin_key)
    return results, (inferences - len(blocker), executions - 1)


def test_ragged_batching_batches_mixed_widths_and_reads_each_line_as_alone(serve, mixed_lines):
    server = serve("ragged_batching")
    assert len({x.shape[-1] for x in mixed_lines}) > 30
    real_before = metric_total(server.metrics_url, "str_ocr_columns_total", kind="real")
    results, (inferences, executions) = run_mix_batched(server, mixed_lines)
    assert inferences == len(mixed_lines)
    assert executions < len(mixed_lines) / 4, f"{executions} executions for {inferences} lines"
    tolerance = served_logit_tolerance(served_config(server))
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        for line, logits in zip(mixed_lines, results):
            assert logits.shape == (1, output_length(line.shape[-1]), 37)
            alone = infer(client, line)  # one request in flight: an execution of its own
            np.testing.assert_allclose(logits, alone, rtol=0, atol=tolerance)
            assert greedy_decode(logits[0]).text == greedy_decode(alone[0]).text
    real = metric_total(server.metrics_url, "str_ocr_columns_total", kind="real") - real_before
    blocker = busy_instance_blocker()
    assert real == 2 * sum(x.shape[-1] for x in mixed_lines) + blocker.shape[0] * blocker.shape[-1]  # + each alone


def test_without_allow_ragged_batch_triton_does_not_batch_different_widths(serve, mixed_lines):
    distinct = list({x.shape[-1]: x for x in mixed_lines}.values())
    results, (inferences, executions) = run_mix(serve("dynamic_batching"), distinct)
    assert all(isinstance(r, np.ndarray) for r in results)
    assert executions == inferences == len(distinct)


def test_bad_lines_in_a_ragged_batch_fail_alone_and_a_nan_line_is_read(serve, mixed_lines):
    server = serve("ragged_batching")
    nan = mixed_lines[0].copy()
    nan[..., 0] = np.nan
    too_wide = np.zeros((1, 1, 32, 2049), np.float32)
    too_narrow = np.zeros((1, 1, 32, 3), np.float32)
    lines = mixed_lines[1:20] + [nan, too_wide, too_narrow] + mixed_lines[20:40]
    results, (inferences, executions) = run_mix_batched(server, lines)
    errors = {i: str(r) for i, r in enumerate(results) if isinstance(r, Exception)}
    assert sorted(errors) == [20, 21]
    assert np.isfinite(results[19]).all()  # NaN is read as mid-grey, not refused
    assert "2049 pixels wide" in errors[20] and "3 pixels wide" in errors[21]
    assert "from 4 to 2048" in errors[20]
    assert executions < len(lines) / 4, f"{executions} executions for {inferences} lines: the bad lines had batch mates"
