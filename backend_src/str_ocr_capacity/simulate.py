"""A day of traffic under the HPA's rule: replicas, p95 and refused requests, every controller sync."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from .curves import Curve
from .hpa import Controller, HpaRule
from .queueing import curve_p95, queue_wait, replica_p95

DAY_S = 24 * 3600
SYNC_S = 15  # the controller's default sync period
RATE_WINDOW_S = 60  # the adapter's rate(...[1m])
# (hour, share of the peak): night, a morning ramp, a plateau, an evening decline.
DAY_SHAPE = ((0, 0.1), (6, 0.1), (9, 0.8), (12, 1.0), (17, 1.0), (23, 0.1), (24, 0.1))
SPIKE = (14.0, 14.25, 1.8)  # from 14:00 to 14:15 the load jumps to 1.8 times the peak


def day_of_traffic(peak: float, shape=DAY_SHAPE, spike=SPIKE) -> Callable[[float], float]:
    """Requests/s at time t (s since midnight)."""
    hours, shares = zip(*shape)

    def rate(t: float) -> float:
        hour = t / 3600
        share = float(np.interp(hour, hours, shares))
        return peak * (spike[2] if spike[0] <= hour < spike[1] else share)

    return rate


@dataclass(frozen=True)
class Step:
    t: float
    offered: float  # requests/s
    replicas: int  # the Deployment's count
    ready: int
    p95_s: float
    refused: float  # requests/s
    metric_us: float  # what the HPA saw


def _serve(curve: Curve, offered: float, ready: int, queue_limit: int) -> tuple[float, float, float]:
    """(p95 s, refused requests/s, queue wait s) of ``ready`` replicas sharing ``offered`` evenly."""
    if ready == 0:
        return float("nan"), offered, 0.0
    rate = offered / ready
    wait = queue_wait(curve.capacity, rate, queue_limit)
    if rate < curve.capacity:
        return replica_p95(curve, rate), 0.0, wait
    # Saturated: the queue is full, the excess is refused, and what is served waits out the whole queue.
    return curve_p95(curve, curve.capacity) + wait, (rate - curve.capacity) * ready, wait


def simulate(curve: Curve, rule: HpaRule, traffic: Callable[[float], float], pod_start_s: float,
             queue_limit: int, duration_s: int = DAY_S, progress: bool = True) -> list[Step]:
    """Every controller sync of the day, starting from minReplicas ready pods."""
    controller = Controller(rule)
    ready_at = [0.0] * rule.min_replicas  # when each pod of the Deployment turns ready
    waits: list[float] = []
    steps = []
    for t in tqdm(range(0, duration_s, SYNC_S), desc="simulating a day", unit="sync", disable=not progress,
                  mininterval=0.5):
        ready = sum(1 for r in ready_at if r <= t)
        offered = traffic(t)
        p95, refused, wait = _serve(curve, offered, ready, queue_limit)
        waits = (waits + [wait])[-(RATE_WINDOW_S // SYNC_S):]
        metric_us = 1e6 * sum(waits) / len(waits)
        desired = controller.sync(t, ready, metric_us, len(ready_at))
        if desired > len(ready_at):
            ready_at += [t + pod_start_s] * (desired - len(ready_at))
        else:
            ready_at = sorted(ready_at)[:desired]  # the newest pods go first
        steps.append(Step(t, offered, len(ready_at), ready, p95, refused, metric_us))
    return steps


@dataclass(frozen=True)
class DaySummary:
    requests: float
    refused: float
    replica_hours: float
    max_replicas: int
    seconds_over_p95: float

    @property
    def refused_share(self) -> float:
        return self.refused / self.requests if self.requests else 0.0


def summarise(steps: list[Step], p95_s: float) -> DaySummary:
    return DaySummary(
        requests=sum(s.offered for s in steps) * SYNC_S,
        refused=sum(s.refused for s in steps) * SYNC_S,
        replica_hours=sum(s.replicas for s in steps) * SYNC_S / 3600,
        max_replicas=max(s.replicas for s in steps),
        seconds_over_p95=sum(SYNC_S for s in steps if not s.p95_s <= p95_s),
    )
