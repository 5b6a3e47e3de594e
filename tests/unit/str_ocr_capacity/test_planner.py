"""The capacity planner's model and the HPA rule it simulates, on small made-up curves."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from str_ocr_capacity.curves import Curve, Point, images_per_request, load_curves
from str_ocr_capacity.hpa import Controller, Direction, HpaRule, Policy, quantity
from str_ocr_capacity.queueing import curve_p95, plan, queue_wait, replica_p95, replicas_needed
from str_ocr_capacity.simulate import day_of_traffic, simulate, summarise

ROOT = Path(__file__).resolve().parents[3]
# One replica: 100 requests/s at 10 ms with 1 in flight, up to 200 requests/s at 40 ms with 8.
CURVE = Curve("toy", (Point(1, 100.0, 0.010), Point(4, 150.0, 0.020), Point(8, 200.0, 0.040)))


def test_the_loader_reads_the_benchmark_in_requests():
    bench = ROOT / "bench/cpu-2-cores"
    assert images_per_request(bench / "machine.json") == 2  # measured with -b 2
    curves = load_curves(bench / "sweep.csv", images_per_request(bench / "machine.json"))
    name = next(n for n in curves if n.partition("@")[0] == "recommended")  # "recommended" on each engine swept
    recommended = curves[name]
    assert [p.concurrency for p in recommended.points] == sorted(p.concurrency for p in recommended.points)
    with open(bench / "sweep.csv", newline="") as handle:
        stable = [r for r in csv.DictReader(handle) if r["variant"] == name and r["exit_code"] == "0"]
    assert len(recommended.points) == len(stable)
    assert recommended.capacity == pytest.approx(max(float(r["throughput_infer_per_s"]) for r in stable) / 2)


def test_the_curve_interpolates_in_throughput_and_ends_at_capacity():
    assert curve_p95(CURVE, 50) == 0.010  # below the first point: its p95
    assert curve_p95(CURVE, 125) == pytest.approx(0.015)
    assert curve_p95(CURVE, 200) == pytest.approx(0.040)
    assert math.isinf(curve_p95(CURVE, 201))


def test_random_arrivals_cost_more_than_the_closed_loop_near_saturation():
    assert replica_p95(CURVE, 100) == pytest.approx(0.030, rel=0.01)  # M/M/1: ln 20 / (200 - 100)
    assert replica_p95(CURVE, 199) > 1.0
    assert queue_wait(200, 100, queue_limit=128) == pytest.approx(100 / (200 * 100))
    assert queue_wait(200, 250, queue_limit=128) == pytest.approx(128 / 200)  # a full queue


def test_the_fewest_replicas_that_hold_the_budget():
    found = replicas_needed(CURVE, 1000, p95_s=0.050)
    assert found.replicas == 8  # 125 requests/s each: ln 20 / 75 = 40 ms; 7 would give 143 each, 52 ms
    assert replica_p95(CURVE, 1000 / 7) > 0.050 >= found.p95_s
    assert replicas_needed(CURVE, 1000, p95_s=0.005) is None  # faster than an idle replica


def test_the_plan_ranks_configs_by_replicas():
    fast = Curve("fast", tuple(Point(p.concurrency, 2 * p.throughput, p.p95_s) for p in CURVE.points))
    assert [p.variant for p in plan({"toy": CURVE, "fast": fast}, 1000, 0.050)] == ["fast", "toy"]


RULE = HpaRule(2, 10, 5000.0, Direction(0, "Max", (Policy("Pods", 4, 60), Policy("Percent", 100, 60))),
               Direction(600, "Max", (Policy("Pods", 1, 60),)))


def test_the_rule_is_read_from_the_manifest():
    rule = HpaRule.from_manifest(ROOT / "deploy/kubernetes/base/hpa.yaml")
    assert rule.max_replicas > rule.min_replicas >= 1 and rule.target > 0
    assert rule.up.window_s < rule.down.window_s
    assert (quantity("5k"), quantity("500m"), quantity(20)) == (5000, 0.5, 20)


def test_scale_up_is_limited_by_the_policies_and_scale_down_waits_its_window():
    controller = Controller(RULE)
    assert controller.sync(0, ready=2, metric=50_000, current=2) == 6  # wants 20: Pods 4 beats 100 %
    assert controller.sync(15, ready=6, metric=50_000, current=6) == 6  # 4 already added this minute
    assert controller.sync(75, ready=6, metric=50_000, current=6) == 10  # capped at maxReplicas
    for t in range(90, 690, 15):
        assert controller.sync(t, ready=10, metric=100, current=10) == 10  # earlier 10s still in the window
    assert controller.sync(700, ready=10, metric=100, current=10) == 9  # then one pod a minute


def test_within_tolerance_nothing_changes():
    assert Controller(RULE).sync(0, ready=4, metric=5200, current=4) == 4


def test_a_day_keeps_its_replicas_in_bounds_and_counts_refusals():
    traffic = day_of_traffic(1500)
    assert traffic(3 * 3600) < traffic(13 * 3600) < traffic(14.1 * 3600)
    steps = simulate(CURVE, RULE, traffic, pod_start_s=30, queue_limit=128, duration_s=6 * 3600, progress=False)
    assert all(RULE.min_replicas <= s.replicas <= RULE.max_replicas and s.ready <= s.replicas for s in steps)
    day = summarise(steps, 0.050)
    assert day.requests == pytest.approx(sum(traffic(s.t) for s in steps) * 15)
    # 150 requests/s at night need one replica at most; the two kept by minReplicas refuse nothing.
    assert day.refused == 0 and day.max_replicas == RULE.min_replicas
    overloaded = summarise(simulate(CURVE, RULE, lambda t: 5000, 30, 128, duration_s=1800, progress=False), 0.050)
    assert overloaded.refused > 0 and overloaded.max_replicas == RULE.max_replicas


def test_page_curves_take_each_levels_median_and_leave_out_unstable_ones(tmp_path):
    import json

    from str_ocr_capacity.curves import load_page_curves

    def level(batching, concurrency, rate, exit_code=0):
        return {"batching": batching, "concurrency": concurrency, "pages_per_second": rate,
                "p95_ms": 100.0 * concurrency, "crops_per_execution": 3.0, "exit_code": exit_code}

    levels = [level("ragged", 1, r) for r in (2.0, 9.0, 3.0)] + [level("ragged", 8, 6.0), level("ragged", 16, 0.0, 2),
                                                                 level("padded", 1, 2.5)]
    path = tmp_path / "pages.json"
    path.write_text(json.dumps({"levels": levels}))
    curves = load_page_curves(path)
    assert set(curves) == {"ocr_page:ragged", "ocr_page:padded"}
    ragged = curves["ocr_page:ragged"]
    assert [(p.concurrency, p.throughput, p.p95_s) for p in ragged.points] == [(1, 3.0, 0.1), (8, 6.0, 0.8)]
