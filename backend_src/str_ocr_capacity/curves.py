"""The benchmark's measured throughput-latency curves, one per config variant, read through one loader."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

# The only columns the planner needs, named as the benchmark writes them.
VARIANT, CONCURRENCY, THROUGHPUT, P95_US = "variant", "concurrency", "throughput_infer_per_s", "p95_us"


@dataclass(frozen=True)
class Point:
    concurrency: int
    throughput: float  # requests/s
    p95_s: float


@dataclass(frozen=True)
class Curve:
    """One replica's closed-loop measurements of a config, by rising concurrency."""

    variant: str
    points: tuple[Point, ...]

    @property
    def capacity(self) -> float:
        """The most requests/s the replica was measured to serve."""
        return max(p.throughput for p in self.points)


def load_curves(csv_path: Path, images_per_request: int = 1) -> dict[str, Curve]:
    """Each variant's curve from the benchmark's CSV; throughput turned from inferences to requests. A level
    perf_analyzer could not stabilise (its exit code 2, kept in the CSV) is left out."""
    rows: dict[str, list[Point]] = {}
    with open(csv_path, newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("exit_code", "0") not in ("", "0"):
                continue
            point = Point(int(row[CONCURRENCY]), float(row[THROUGHPUT]) / images_per_request, float(row[P95_US]) / 1e6)
            rows.setdefault(row[VARIANT], []).append(point)
    return {name: Curve(name, tuple(sorted(points, key=lambda p: p.concurrency))) for name, points in rows.items()}


def load_page_curves(pages_json: Path) -> dict[str, Curve]:
    """Each crop batching's curve of ``ocr_page`` (pages/s) from the page benchmark's JSON (``make bench-pages``): at
    each level the median of its rounds; a level perf_analyzer could not stabilise is left out."""
    levels: dict[tuple[str, int], list[dict]] = {}
    for level in json.loads(pages_json.read_text())["levels"]:
        if level["exit_code"] == 0 and level["pages_per_second"] > 0:
            levels.setdefault((level["batching"], level["concurrency"]), []).append(level)
    rows: dict[str, list[Point]] = {}
    for (batching, concurrency), runs in sorted(levels.items()):
        median = sorted(runs, key=lambda r: r["pages_per_second"])[len(runs) // 2]
        rows.setdefault(f"ocr_page:{batching}", []).append(
            Point(concurrency, median["pages_per_second"], median["p95_ms"] / 1e3))
    return {name: Curve(name, tuple(points)) for name, points in rows.items()}


def images_per_request(machine_json: Path) -> int:
    """The batch each benchmark request carried (perf_analyzer's ``-b``), from the machine's notes; else 1."""
    if not machine_json.is_file():
        return 1
    found = re.search(r"-b\s+(\d+)", json.loads(machine_json.read_text()).get("measurement", ""))
    return int(found.group(1)) if found else 1
