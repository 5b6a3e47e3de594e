"""Every kustomization renders with kubectl, its core objects pass Kubernetes' schemas strictly, its custom
resources carry what their operators need, and nothing names a namespace."""

from __future__ import annotations

import copy
import re

import pytest
from kubernetes_validate import utils as k8s_schemas

from str_ocr.contract import DEFAULT_PORTS
from str_ocr_server.metrics import LAUNCHER_METRICS_PORT

from .manifests import DEPLOY, KUBERNETES_VERSIONS, KUSTOMIZATIONS, all_objects, container, only, render

# API groups whose objects Kubernetes itself defines (the rest are operators' custom resources).
CORE_GROUPS = {"", "apps", "policy", "networking.k8s.io", "autoscaling"}


def api_group(doc: dict) -> str:
    return doc["apiVersion"].rpartition("/")[0]


def core_objects() -> list[tuple[str, dict]]:
    return [(k, doc) for k, doc in all_objects() if api_group(doc) in CORE_GROUPS]


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_it_renders_with_kubectl_kustomize(kustomization):
    kinds = {doc["kind"] for doc in render(kustomization)}
    assert kinds, kustomization


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_core_objects_pass_the_schemas_strictly(version):
    for kustomization, doc in core_objects():
        try:
            k8s_schemas.validate(doc, version, strict=True)
        except k8s_schemas.ValidationError as error:
            pytest.fail(f"{kustomization}: {doc['kind']}/{doc['metadata']['name']} on {version}: {error.message}")


def test_strict_validation_rejects_a_misspelt_field():
    deployment = copy.deepcopy(only("kubernetes/overlays/cpu", "Deployment"))
    container(deployment["spec"]["template"]["spec"])["readinesProbe"] = {"httpGet": {"path": "/", "port": 8000}}
    with pytest.raises(k8s_schemas.ValidationError):
        k8s_schemas.validate(deployment, KUBERNETES_VERSIONS[0], strict=True)


def test_no_namespace_is_hard_coded():
    for kustomization, doc in all_objects():
        assert "namespace" not in doc["metadata"], f"{kustomization}: {doc['kind']} {doc['metadata']['name']}"
    for path in DEPLOY.rglob("kustomization.yaml"):
        assert not re.search(r"^namespace:", path.read_text(), re.M), path


def test_no_removed_autoscaling_api():
    for path in DEPLOY.rglob("*.yaml"):
        assert "autoscaling/v2beta" not in path.read_text(), path  # v2beta2 is gone since Kubernetes 1.26
    for overlay in ("cpu", "gpu"):
        assert only(f"kubernetes/overlays/{overlay}", "HorizontalPodAutoscaler")["apiVersion"] == "autoscaling/v2"


def test_the_keda_overlay_replaces_the_hpa_with_a_scaled_object():
    kinds = [doc["kind"] for doc in render("kubernetes/overlays/keda")]
    assert "HorizontalPodAutoscaler" not in kinds and kinds.count("ScaledObject") == 1


def test_the_scaled_object_has_what_keda_requires():
    scaled = only("kubernetes/overlays/keda", "ScaledObject")
    deployment = only("kubernetes/overlays/keda", "Deployment")
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert scaled["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "prometheus"
    assert {"serverAddress", "query", "threshold"} <= trigger["metadata"].keys()
    float(trigger["metadata"]["threshold"])  # KEDA parses it as a number
    assert trigger["metricType"] == "Value"  # queue time per request is not divided over pods


def test_the_serving_runtime_and_inference_service_fit_together():
    runtime = only("kserve", "ServingRuntime")
    service = only("kserve", "InferenceService")
    assert runtime["apiVersion"] == "serving.kserve.io/v1alpha1"
    assert service["apiVersion"] == "serving.kserve.io/v1beta1"
    spec = runtime["spec"]
    assert {"v2", "grpc-v2"} <= set(spec["protocolVersions"])
    assert container(spec)["name"] == "kserve-container" and container(spec)["image"]
    formats = {f["name"] for f in spec["supportedModelFormats"]}
    model = service["spec"]["predictor"]["model"]
    assert model["modelFormat"]["name"] in formats
    assert model["runtime"] == runtime["metadata"]["name"]
    assert model["protocolVersion"] in spec["protocolVersions"]
    probes = container(spec)
    assert probes["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert probes["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    mounted = {m["name"] for m in probes["volumeMounts"]}
    assert mounted <= {v["name"] for v in spec["volumes"]}


def test_the_pod_monitor_scrapes_the_servers_and_the_launchers_metrics_ports():
    monitor = only("monitoring", "PodMonitor")
    deployment = only("kubernetes/overlays/cpu", "Deployment")
    template_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= template_labels.items()
    ports = {p["name"]: p["containerPort"] for p in container(deployment["spec"]["template"]["spec"])["ports"]}
    endpoints = monitor["spec"]["podMetricsEndpoints"]
    assert sorted(ports[e["port"]] for e in endpoints) == [DEFAULT_PORTS.metrics, LAUNCHER_METRICS_PORT]
    assert {e["path"] for e in endpoints} == {"/metrics"}


def test_the_prometheus_rule_is_well_formed():
    groups = only("monitoring", "PrometheusRule")["spec"]["groups"]
    for group in groups:
        assert group["name"] and group["rules"]
        for rule in group["rules"]:
            assert ("record" in rule) != ("alert" in rule) and rule["expr"]
