"""A replica as a queue: its p95 and queueing at an open arrival rate, and the replicas a load needs.

Assumptions (stated with every answer):
- load is balanced evenly over the ready replicas, and requests arrive at random (Poisson);
- a replica's p95 at a rate is the larger of (a) the measured closed-loop curve, interpolated in throughput
  at that rate, and (b) an M/M/1 queue whose service rate is the replica's measured capacity. The benchmark
  holds a fixed number of requests in flight, which understates the queueing of random arrivals near
  saturation; (b) grows without bound there, as an open queue does;
- the HPA's signal, queue time per request, is M/M/1's mean wait;
- a replica refuses what it cannot serve once its bounded queue is full (the config's max_queue_size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .curves import Curve

ASSUMPTIONS = __doc__.split("Assumptions (stated with every answer):\n", 1)[1].strip()
TAIL_95 = math.log(20)  # an exponential's 95th percentile in units of its mean


def curve_p95(curve: Curve, rate: float) -> float:
    """The measured p95 at ``rate`` requests/s (interpolated); infinite beyond the measured capacity."""
    points = curve.points
    above = next((i for i, p in enumerate(points) if p.throughput >= rate), None)
    if above is None:
        return math.inf
    if above == 0:
        return points[0].p95_s
    low, high = points[above - 1], points[above]
    share = (rate - low.throughput) / (high.throughput - low.throughput)
    return low.p95_s + share * (high.p95_s - low.p95_s)


def mm1_p95(capacity: float, rate: float) -> float:
    """M/M/1's 95th percentile of time in system: exponential with rate capacity - rate."""
    return TAIL_95 / (capacity - rate) if rate < capacity else math.inf


def replica_p95(curve: Curve, rate: float) -> float:
    return max(curve_p95(curve, rate), mm1_p95(curve.capacity, rate))


def queue_wait(capacity: float, rate: float, queue_limit: int) -> float:
    """Mean wait in queue (s): M/M/1's, and at most a full queue's."""
    full = queue_limit / capacity
    return min(rate / (capacity * (capacity - rate)), full) if rate < capacity else full


@dataclass(frozen=True)
class Plan:
    variant: str
    replicas: int
    rate_per_replica: float
    p95_s: float
    capacity: float  # requests/s per replica

    @property
    def utilisation(self) -> float:
        return self.rate_per_replica / self.capacity


def replicas_needed(curve: Curve, rate: float, p95_s: float, max_replicas: int = 10_000) -> Plan | None:
    """The fewest replicas of this config that hold ``rate`` requests/s within ``p95_s``; None if none do."""
    if curve.points[0].p95_s > p95_s:
        return None  # even an idle replica is slower than the budget
    start = max(1, math.ceil(rate / curve.capacity))
    for replicas in range(start, max_replicas + 1):
        p95 = replica_p95(curve, rate / replicas)
        if p95 <= p95_s:
            return Plan(curve.variant, replicas, rate / replicas, p95, curve.capacity)
    return None


def plan(curves: dict[str, Curve], rate: float, p95_s: float) -> list[Plan]:
    """Every config that can hold the load, fewest replicas first (then lowest p95)."""
    plans = [p for curve in curves.values() if (p := replicas_needed(curve, rate, p95_s))]
    return sorted(plans, key=lambda p: (p.replicas, p.p95_s))
