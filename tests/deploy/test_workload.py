"""The pods the overlays run: the launcher accepts their arguments, their ports are the image's, they drain
before Kubernetes kills them, and only inference, metadata and health paths leave the cluster."""

from __future__ import annotations

import re

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from .manifests import (
    OVERLAYS, ROOT, container, entrypoint_options, exposed_ports, launcher_parse_args, only, render,
)

KSERVE = "kserve"
PORT_OPTIONS = {"http": "http_port", "grpc": "grpc_port", "metrics": "metrics_port",
                "launcher": "launcher_metrics_port"}


def pod_spec(overlay: str) -> dict:
    return only(f"kubernetes/overlays/{overlay}", "Deployment")["spec"]["template"]["spec"]


def parsed(pod: dict):
    """What the launcher makes of the image's ENTRYPOINT options followed by the container's args."""
    try:
        return launcher_parse_args(entrypoint_options() + container(pod).get("args", []))
    except SystemExit as error:
        pytest.fail(f"the launcher refuses {container(pod).get('args')}: exit {error.code}")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_launcher_accepts_the_args_and_listens_on_the_images_ports(overlay):
    pod = pod_spec(overlay)
    args = parsed(pod)
    ports = {p["name"]: p["containerPort"] for p in container(pod)["ports"]}
    assert set(ports.values()) == exposed_ports()
    for name, option in PORT_OPTIONS.items():
        assert getattr(args, option) == ports[name], name
    assert "--metrics-config=summary_latencies=true" in args.triton_args  # the dashboard's p95


def test_the_kserve_runtime_runs_the_launcher_on_an_exposed_port():
    spec = only(KSERVE, "ServingRuntime")["spec"]
    args = parsed(spec)
    (port,) = container(spec)["ports"]
    assert port["containerPort"] == args.http_port and args.http_port in exposed_ports()
    assert container(spec)["readinessProbe"]["httpGet"]["port"] == args.http_port


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_services_and_network_policy_name_real_ports(overlay):
    names = {p["name"] for p in container(pod_spec(overlay))["ports"]}
    for service in (d for d in render(f"kubernetes/overlays/{overlay}") if d["kind"] == "Service"):
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= names
    policy = only(f"kubernetes/overlays/{overlay}", "NetworkPolicy")
    assert {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]} == names


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_probes_drain_and_shared_memory(overlay):
    pod = pod_spec(overlay)
    triton = container(pod)
    assert triton["startupProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert triton["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert triton["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    pre_stop = triton["lifecycle"]["preStop"]["exec"]["command"]
    pause = int(pre_stop[1]) if pre_stop[0] == "sleep" else 0
    assert pod["terminationGracePeriodSeconds"] > pause + parsed(pod).exit_timeout
    volumes = {v["name"]: v for v in pod["volumes"]}
    (shm,) = [m for m in triton["volumeMounts"] if m["mountPath"] == "/dev/shm"]
    assert volumes[shm["name"]]["emptyDir"]["medium"] == "Memory"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_an_exit_is_restarted_and_a_launcher_restarting_its_server_is_left_to_it(overlay):
    pod = pod_spec(overlay)
    assert pod.get("restartPolicy", "Always") == "Always"
    args = parsed(pod)
    assert args.restarts > 0
    # Liveness gives the launcher's own restart of tritonserver time before the kubelet restarts the container.
    liveness = container(pod)["livenessProbe"]
    assert liveness["periodSeconds"] * liveness["failureThreshold"] >= 30


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_it_runs_locked_down_with_requests_and_limits(overlay):
    pod = pod_spec(overlay)
    triton = container(pod)
    assert pod["securityContext"]["runAsNonRoot"] is True
    security = triton["securityContext"]
    assert security["allowPrivilegeEscalation"] is False and security["readOnlyRootFilesystem"] is True
    assert security["capabilities"]["drop"] == ["ALL"]
    assert {"cpu", "memory"} <= triton["resources"]["requests"].keys()
    assert {"cpu", "memory"} <= triton["resources"]["limits"].keys()
    assert ("nvidia.com/gpu" in triton["resources"]["limits"]) == (overlay == "gpu")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_admin_key_is_a_file_from_a_secret(overlay):
    pod = pod_spec(overlay)
    triton = container(pod)
    env = {e["name"]: e for e in triton["env"]}
    assert "TRITON_ADMIN_KEY" not in env  # never in the pod spec
    key_file = env["TRITON_ADMIN_KEY_FILE"]["value"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = [m for m in triton["volumeMounts"] if "secret" in volumes[m["name"]]]
    (mount,) = mounts
    (item,) = volumes[mount["name"]]["secret"]["items"]
    assert key_file == f"{mount['mountPath']}/{item['path']}" and mount["readOnly"] is True


def test_the_gpu_overlay_serves_the_recommended_config_on_gpu_instances():
    pod = pod_spec("gpu")
    assert parsed(pod).config_name == "gpu"
    (mount,) = [m for m in container(pod)["volumeMounts"] if m["name"] == "gpu-config"]
    assert mount["mountPath"] == f"{parsed(pod).model_repository}/text_recognition/configs/gpu.pbtxt"
    configmap = only("kubernetes/overlays/gpu", "ConfigMap")
    gpu = text_format.Parse(configmap["data"][mount["subPath"]], model_config_pb2.ModelConfig())
    recommended = text_format.Parse((ROOT / "model_repository/text_recognition/config.pbtxt").read_text(),
                                    model_config_pb2.ModelConfig())
    assert [g.kind for g in gpu.instance_group] == [model_config_pb2.ModelInstanceGroup.KIND_GPU]
    assert gpu.instance_group[0].count == recommended.instance_group[0].count
    gpu.ClearField("instance_group")
    recommended.ClearField("instance_group")
    assert gpu == recommended  # nothing else drifts from the recommended config


ADMIN = re.compile(r"repository|config|stats|trace|logging|sharedmemory", re.I)
SERVED = re.compile(r"^/v2(/health/(ready|live)|/models/(?P<model>[a-z_]+)(/ready|/infer)?)?$")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_ingress_exposes_inference_metadata_and_health_only(overlay):
    ingress = only(f"kubernetes/overlays/{overlay}", "Ingress")
    services = {s["metadata"]["name"]: s for s in render(f"kubernetes/overlays/{overlay}") if s["kind"] == "Service"}
    paths = [p for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]
    assert ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/proxy-body-size"] == "16m"  # bodies bounded
    wanted = {"/v2/health/ready", "/v2/models/ocr/infer", "/v2/models/ocr_page/infer",
              "/v2/models/text_recognition/infer"}
    assert wanted <= {p["path"] for p in paths}
    for path in paths:
        assert path["pathType"] == "Exact", path  # a prefix would reach what lies below it
        assert not ADMIN.search(path["path"]), path
        match = SERVED.match(path["path"])
        assert match, path
        assert not match["model"] or (ROOT / "model_repository" / match["model"] / "config.pbtxt").is_file()
        backend = path["backend"]["service"]
        assert backend["port"]["name"] in {p["name"] for p in services[backend["name"]]["spec"]["ports"]}


def test_hpa_and_keda_apply_one_rule():
    hpa = only("kubernetes/overlays/cpu", "HorizontalPodAutoscaler")["spec"]
    keda = only("kubernetes/overlays/keda", "ScaledObject")["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (keda["minReplicaCount"], keda["maxReplicaCount"])
    assert hpa["behavior"] == keda["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    (metric,) = hpa["metrics"]
    (trigger,) = keda["triggers"]
    assert float(metric["pods"]["target"]["averageValue"]) == float(trigger["metadata"]["threshold"])
    model = metric["pods"]["metric"]["selector"]["matchLabels"]["model"]
    assert f'model="{model}"' in trigger["metadata"]["query"]  # the same one model


def test_no_overlay_sets_a_replica_count_the_autoscaler_would_fight():
    for overlay in OVERLAYS:
        assert "replicas" not in only(f"kubernetes/overlays/{overlay}", "Deployment")["spec"]
