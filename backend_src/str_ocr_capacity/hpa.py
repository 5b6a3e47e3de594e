"""The HorizontalPodAutoscaler's rule, read from its manifest, applied as the controller does (autoscaling/v2):
the replica count a metric asks for, stabilised over the behavior's windows and limited by its policies."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import yaml

TOLERANCE = 0.1  # the controller's default: no change within 10 % of the target
SUFFIXES = {"m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6}


def quantity(text: str | int | float) -> float:
    """A Kubernetes quantity such as "5000", "5k" or "500m" as a number."""
    text = str(text)
    suffix = text.lstrip("0123456789.")
    return float(text[: len(text) - len(suffix)]) * SUFFIXES[suffix]


@dataclass(frozen=True)
class Policy:
    kind: str  # "Pods" or "Percent"
    value: int
    period_s: int


@dataclass(frozen=True)
class Direction:
    window_s: int
    select: str  # "Max", "Min" or "Disabled"
    policies: tuple[Policy, ...]


@dataclass(frozen=True)
class HpaRule:
    min_replicas: int
    max_replicas: int
    target: float  # the metric's target average value, in its own unit
    up: Direction
    down: Direction

    @classmethod
    def from_manifest(cls, path: Path) -> HpaRule:
        spec = yaml.safe_load(path.read_text())["spec"]
        (metric,) = spec["metrics"]
        behavior = spec["behavior"]

        def direction(name: str) -> Direction:
            rule = behavior[name]
            policies = tuple(Policy(p["type"], p["value"], p["periodSeconds"]) for p in rule["policies"])
            return Direction(rule["stabilizationWindowSeconds"], rule.get("selectPolicy", "Max"), policies)

        return cls(spec.get("minReplicas", 1), spec["maxReplicas"], quantity(metric["pods"]["target"]["averageValue"]),
                   direction("scaleUp"), direction("scaleDown"))


@dataclass
class Controller:
    """The HPA's state between syncs: past recommendations and past scale events."""

    rule: HpaRule
    recommendations: deque = field(default_factory=deque)  # (time, replicas)
    events: deque = field(default_factory=deque)  # (time, change)

    def wanted(self, ready: int, metric: float, current: int) -> int:
        """The replicas the metric asks for: ready pods count, pods still starting count as idle."""
        ratio = metric / self.rule.target
        if abs(ready * ratio / max(current, 1) - 1) <= TOLERANCE:
            return current
        return math.ceil(ready * ratio)

    def _stabilised(self, now: float, wanted: int, current: int) -> int:
        self.recommendations.append((now, wanted))
        horizon = max(self.rule.up.window_s, self.rule.down.window_s)
        while self.recommendations and self.recommendations[0][0] < now - horizon:
            self.recommendations.popleft()
        up = min(r for t, r in self.recommendations if t >= now - self.rule.up.window_s)
        down = max(r for t, r in self.recommendations if t >= now - self.rule.down.window_s)
        return min(max(current, up), down)

    def _limit(self, now: float, direction: Direction, current: int, rising: bool) -> int:
        if direction.select == "Disabled":
            return current
        limits = []
        for policy in direction.policies:
            changed = sum(c for t, c in self.events if t > now - policy.period_s and (c > 0) == rising)
            start = current - changed
            sign = 1 if rising else -1
            if policy.kind == "Pods":
                limits.append(start + sign * policy.value)
            else:
                limits.append(math.ceil(start * (1 + sign * policy.value / 100)))
        most_change = max if rising else min
        return (most_change if direction.select == "Max" else (min if rising else max))(limits)

    def sync(self, now: float, ready: int, metric: float, current: int) -> int:
        """The new replica count at time ``now`` (s), given the ready pods, the metric and the current count."""
        wanted = min(max(self.wanted(ready, metric, current), self.rule.min_replicas), self.rule.max_replicas)
        desired = self._stabilised(now, wanted, current)
        if desired > current:
            desired = min(desired, self._limit(now, self.rule.up, current, rising=True))
        elif desired < current:
            desired = max(desired, self._limit(now, self.rule.down, current, rising=False))
        if desired != current:
            self.events.append((now, desired - current))
        while self.events and self.events[0][0] < now - 3600:
            self.events.popleft()
        return desired
