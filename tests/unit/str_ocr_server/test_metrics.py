"""The launcher's metrics endpoint: every served model's series from the start, a recovery counted once."""

from __future__ import annotations

import pytest

from str_ocr_client.stats import metric_total, scrape
from str_ocr_server.metrics import LauncherMetrics
from str_ocr_server.process import free_ports


@pytest.fixture(scope="module")
def served() -> tuple[LauncherMetrics, str]:
    (port,) = free_ports(1)
    metrics = LauncherMetrics(["text_recognition", "ocr"])
    metrics.serve(port, "127.0.0.1")
    return metrics, f"127.0.0.1:{port}"


def test_every_model_has_its_series_at_zero_before_any_recovery(served):
    _, url = served
    text = scrape(url)
    for model in ("text_recognition", "ocr"):
        assert f'str_ocr_model_recoveries_total{{model="{model}"}} 0.0' in text
        assert f'str_ocr_model_instances_dead{{model="{model}"}} 0.0' in text
    assert "_created" not in text


def test_a_death_then_its_recovery(served):
    metrics, url = served
    metrics.died("text_recognition", 2)
    assert metric_total(url, "str_ocr_model_instances_dead", model="text_recognition") == 2
    metrics.recovered("text_recognition", 7.5)
    assert metric_total(url, "str_ocr_model_instances_dead", model="text_recognition") == 0
    assert metric_total(url, "str_ocr_model_recoveries_total", model="text_recognition") == 1
    assert metric_total(url, "str_ocr_model_recoveries_total", model="ocr") == 0
    assert metric_total(url, "str_ocr_model_recovery_seconds_bucket", model="text_recognition", le="10.0") == 1
    assert metric_total(url, "str_ocr_model_recovery_seconds_bucket", model="text_recognition", le="5.0") == 0
