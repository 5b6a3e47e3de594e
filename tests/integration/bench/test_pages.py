"""Small runs of the page tools behind `make bench-pages` and scripts/evaluate_pages.py: real servers, NVIDIA's
perf_analyzer, the files they write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import UNSTABLE_EXIT

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]


def test_a_small_page_bench_writes_its_table_plot_and_figures(tmp_path):
    command = [sys.executable, "scripts/bench_pages.py", "--pages", "2", "--levels", "2", "--requests", "4",
               "--stability", "50", "--batchings", "ragged,padded", "--peers", "none", "--out", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {"pages.md", "pages.json", "pages.png"} <= {p.name for p in tmp_path.iterdir()}
    results = json.loads((tmp_path / "pages.json").read_text())
    levels = {level["batching"]: level for level in results["levels"]}
    assert set(levels) == {"ragged", "padded"}
    for batching, level in levels.items():
        assert level["exit_code"] in (0, UNSTABLE_EXIT), f"{batching}: perf_analyzer exited {level['exit_code']}"
        assert level["crops_per_execution"] > 0, f"{batching}: the recogniser counted no crop"
        assert level["detector_ms_per_page"] > 0 and level["recognizer_ms_per_page"] > 0, level
    assert levels["padded"]["crops_per_execution"] > levels["ragged"]["crops_per_execution"]  # a page a request
    assert results["padding"]["padded"] > results["padding"]["ragged"]  # padded to the widest of a page


def test_a_small_page_evaluation_scores_the_served_reader(tmp_path):
    command = [sys.executable, "scripts/evaluate_pages.py", "--count", "3", "--fonts", "core", "--peers", "none",
               "--out", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    (figures,) = tmp_path.glob("*.json")
    served = json.loads(figures.read_text())["ocr_page"]
    assert served["errors"] == 0 and served["pages_per_second"] > 0
    assert served["all"]["truth"] > 0 and served["all"]["matched"] >= 0.8 * served["all"]["truth"]
    assert any(key.startswith("background=") for key in served) and any(key.startswith("face=") for key in served)
