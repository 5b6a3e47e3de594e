"""The planner's two figures: replicas against p95 per config, and the simulated day."""

from __future__ import annotations

from pathlib import Path

from str_ocr.plotting import pyplot

from .curves import Curve
from .queueing import Plan, replica_p95
from .simulate import Step


def plot_plan(curves: dict[str, Curve], plans: list[Plan], rate: float, p95_s: float, path: Path) -> None:
    """Left: each config's planned p95 against replicas at this load. Right: one replica's model and data."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    chosen = {p.variant: p for p in plans}
    top = max([p.replicas for p in plans], default=10) * 2
    colours = plt.get_cmap("tab20")
    for i, (name, curve) in enumerate(curves.items()):
        replicas = range(1, top + 1)
        p95 = [1e3 * replica_p95(curve, rate / n) for n in replicas]
        (line,) = left.plot(replicas, p95, label=name, alpha=0.8, color=colours(i % 20))
        if name in chosen:
            left.plot(chosen[name].replicas, 1e3 * chosen[name].p95_s, "o", color=line.get_color())
            right.plot([p.throughput for p in curve.points], [1e3 * p.p95_s for p in curve.points], "o",
                       color=line.get_color(), alpha=0.6)
            rates = [curve.capacity * f / 100 for f in range(1, 100)]
            right.plot(rates, [1e3 * replica_p95(curve, r) for r in rates], color=line.get_color(), label=name)
    left.axhline(1e3 * p95_s, color="black", linestyle="--", label=f"p95 budget {1e3 * p95_s:g} ms")
    left.set(xlabel="replicas", ylabel="planned p95 (ms)", yscale="log",
             title=f"{rate:,.0f} requests/s spread evenly over the replicas")
    left.legend(fontsize=7)
    right.axhline(1e3 * p95_s, color="black", linestyle="--")
    right.set(xlabel="requests/s offered to one replica", ylabel="p95 (ms)", yscale="log",
              title="One replica: measured (dots) and modelled (lines)")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_day(steps: list[Step], variant: str, p95_s: float, capacity: float, path: Path) -> None:
    hours = [s.t / 3600 for s in steps]
    plt = pyplot()
    fig, (load, replicas, latency, refused) = plt.subplots(4, 1, figsize=(11, 10), sharex=True)
    load.plot(hours, [s.offered for s in steps], label="offered")
    load.plot(hours, [s.ready * capacity for s in steps], label="capacity of the ready replicas")
    load.set(ylabel="requests/s", title=f"A day of traffic under the HPA's rule ({variant})")
    load.legend(fontsize=8)
    replicas.step(hours, [s.replicas for s in steps], where="post", label="Deployment replicas")
    replicas.step(hours, [s.ready for s in steps], where="post", label="ready")
    replicas.set(ylabel="replicas")
    replicas.legend(fontsize=8)
    latency.plot(hours, [1e3 * s.p95_s for s in steps], label="p95")
    latency.plot(hours, [s.metric_us / 1e3 for s in steps], label="HPA signal: queue time per request")
    latency.axhline(1e3 * p95_s, color="black", linestyle="--", label="p95 budget")
    latency.set(ylabel="ms", yscale="log")
    latency.legend(fontsize=8)
    refused.plot(hours, [s.refused for s in steps], color="red")
    refused.set(xlabel="hour of the day", ylabel="refused requests/s")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
