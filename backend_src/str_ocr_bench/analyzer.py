"""NVIDIA's Model Analyzer on text_recognition: a brute-force search over max batch size, instance count and
dynamic batching, with the local tritonserver it launches itself.

It runs from its own virtualenv (it wants numpy 2 and a newer tritonclient than the served server's) and
drives this project's perf_analyzer. Its results land in ``results/metrics-model-inference.csv``.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from str_ocr.contract import RECOGNIZER
from str_ocr_server.process import free_ports
from str_ocr_triton.config import default_repository
from str_ocr_server.triton import find_triton

from .perf_analyzer import TUTORIAL_SHAPE, binary


def analyzer_config(work: Path, max_batch_size: int, max_instances: int, max_concurrency: int,
                    min_batch_size: int = 1, min_concurrency: int = 1) -> dict:
    """Model Analyzer's YAML for the local server (the one ``make serve`` runs), on free ports."""
    triton = find_triton()
    http, grpc, metrics = free_ports(3)
    return {
        "model_repository": str(work / "repository"),
        "output_model_repository_path": str(work / "output-repository"),
        "override_output_model_repository": True,
        "export_path": str(work),
        "checkpoint_directory": str(work / "checkpoints"),
        "triton_launch_mode": "local",
        "triton_server_path": str(triton.binary),
        "triton_server_flags": {"backend_directory": str(triton.backend_dir)},
        "triton_server_environment": {k: triton.env[k] for k in ("PATH", "LD_LIBRARY_PATH") if k in triton.env},
        "triton_http_endpoint": f"localhost:{http}",
        "triton_grpc_endpoint": f"localhost:{grpc}",
        "triton_metrics_url": f"http://localhost:{metrics}/metrics",
        "perf_analyzer_path": str(binary()),
        "perf_analyzer_flags": {"shape": TUTORIAL_SHAPE},
        "profile_models": [RECOGNIZER],
        "run_config_search_min_concurrency": min_concurrency,
        "run_config_search_max_concurrency": max_concurrency,
        "run_config_search_min_model_batch_size": min_batch_size,
        "run_config_search_max_instance_count": max_instances,
        "run_config_search_max_model_batch_size": max_batch_size,
    }


def profile(model_analyzer: Path, work: Path, max_batch_size: int = 32, max_instances: int = 2,
            max_concurrency: int = 16, min_batch_size: int = 1, min_concurrency: int = 1) -> Path:
    """Run ``model-analyzer profile``; the path of its per-configuration results."""
    repository = work / "repository"
    shutil.rmtree(repository, ignore_errors=True)
    # The recommended config.pbtxt is its starting point; our named variants would only be copied along.
    shutil.copytree(default_repository() / RECOGNIZER, repository / RECOGNIZER,
                    ignore=shutil.ignore_patterns("configs", "__pycache__"))
    config = work / "config.yaml"
    config.write_text(yaml.safe_dump(analyzer_config(work, max_batch_size, max_instances, max_concurrency,
                                                     min_batch_size, min_concurrency)))
    done = subprocess.run([str(model_analyzer), "profile", "-f", str(config)], stdout=sys.stdout,
                          stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(f"analyze: model-analyzer exited {done.returncode} (its output is above)")
    return work / "results" / "metrics-model-inference.csv"


def best_rows(results: Path, count: int = 5) -> list[dict]:
    """Model Analyzer's measurements with the highest throughput."""
    with results.open() as f:
        rows = list(csv.DictReader(f))
    return sorted(rows, key=lambda r: float(r.get("Throughput (infer/sec)", 0) or 0), reverse=True)[:count]
