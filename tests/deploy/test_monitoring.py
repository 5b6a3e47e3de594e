"""The rules pass promtool's unit tests, and every metric the rules, the adapter, the HPA, KEDA and the
dashboard read is one a real server (tritonserver or its launcher) exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import yaml

from str_ocr_client.stats import scrape
from str_ocr_server.process import ServerProcess

from .manifests import DEPLOY, container, load_yaml, only, promql_metric_names

MONITORING = DEPLOY / "monitoring"
LOGS = Path(__file__).parents[1] / ".logs"
# Read by the rules but exported by others, named here so that a typo elsewhere still fails:
NOT_FROM_THE_SERVER = {
    "kube_pod_status_ready",  # kube-state-metrics: the pod's readiness as Kubernetes sees it
}


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "no promtool: `make setup` installs Debian's prometheus package"
    return found


def test_promtool_checks_and_unit_tests_the_rules(tmp_path):
    spec = only("monitoring", "PrometheusRule")["spec"]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(spec))
    shutil.copy(MONITORING / "tests" / "str-ocr.test.yaml", tmp_path)
    for command in (["check", "rules", "rules.yaml"], ["test", "rules", "str-ocr.test.yaml"]):
        result = subprocess.run([promtool(), *command], cwd=tmp_path, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def recorded_names() -> set[str]:
    groups = only("monitoring", "PrometheusRule")["spec"]["groups"]
    return {rule["record"] for group in groups for rule in group["rules"] if "record" in rule}


def expressions() -> dict[str, str]:
    """Every PromQL expression deploy/ holds, by where it is."""
    found: dict[str, str] = {}
    for group in only("monitoring", "PrometheusRule")["spec"]["groups"]:
        for rule in group["rules"]:
            found[f"rule {rule.get('record') or rule.get('alert')}"] = rule["expr"]
    for i, rule in enumerate(load_yaml(MONITORING / "prometheus-adapter-values.yaml")["rules"]["custom"]):
        found[f"adapter rule {i} series"] = rule["seriesQuery"]
        found[f"adapter rule {i} query"] = rule["metricsQuery"]
    (trigger,) = only("kubernetes/overlays/keda", "ScaledObject")["spec"]["triggers"]
    found["keda query"] = trigger["metadata"]["query"]
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            found[f"panel {panel['title']!r}"] = target["expr"]
    for variable in dashboard["templating"]["list"]:
        if match := re.match(r"label_values\((\w+)", str(variable.get("definition", ""))):
            found[f"variable {variable['name']}"] = match[1]
    return found


def test_the_hpa_metric_is_one_the_adapter_serves_from_a_series_it_finds():
    rules = load_yaml(MONITORING / "prometheus-adapter-values.yaml")["rules"]["custom"]
    served = {rule["name"]["as"]: rule for rule in rules}
    for overlay in ("cpu", "gpu"):
        (metric,) = only(f"kubernetes/overlays/{overlay}", "HorizontalPodAutoscaler")["spec"]["metrics"]
        rule = served[metric["pods"]["metric"]["name"]]
        (series,) = promql_metric_names(rule["seriesQuery"])
        assert re.search(rule["name"]["matches"], series)


def scrape_after_one_inference(triton_args: list[str]) -> str:
    """Both endpoints the PodMonitor scrapes, the server's and the launcher's, after one inference."""
    LOGS.mkdir(exist_ok=True)
    log = LOGS / "deploy-metrics.log"
    with ServerProcess(models=["text_recognition"], triton_args=triton_args, log_path=log) as server:
        lines = grpcclient.InferInput("input.1", [2, 1, 32, 100], "FP32")
        lines.set_data_from_numpy(np.zeros((2, 1, 32, 100), np.float32))
        grpcclient.InferenceServerClient(server.grpc_url).infer("text_recognition", [lines])
        return scrape(server.metrics_url) + scrape(server.launcher_metrics_url)


@pytest.mark.integration
def test_every_metric_read_is_exported_by_a_real_server():
    # The server runs with the tritonserver options the manifests pass (after `--`), summary latencies included.
    args = container(only("kubernetes/overlays/cpu", "Deployment")["spec"]["template"]["spec"])["args"]
    scrape = scrape_after_one_inference(args[args.index("--") + 1:])
    exported = {line.split("{")[0].split()[0] for line in scrape.splitlines() if line and not line.startswith("#")}
    assert {"nv_inference_request_summary_us", "str_ocr_columns_total", "str_ocr_model_recoveries_total"} <= exported
    known = exported | recorded_names() | NOT_FROM_THE_SERVER
    unknown = {where: sorted(promql_metric_names(expr) - known) for where, expr in expressions().items()}
    assert not {where: names for where, names in unknown.items() if names}
    # Each allowed exception is still used somewhere, so the list cannot go stale.
    used = set().union(*(promql_metric_names(expr) for expr in expressions().values()))
    assert NOT_FROM_THE_SERVER <= used
