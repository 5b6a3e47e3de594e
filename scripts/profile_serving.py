"""Profile the served recogniser under the tutorial's load, and say where its CPU time goes (what `make profile` does).

    make profile                                   # the recommended config, results in bench/<machine>/profile/
    make profile PROFILE_ARGS="--engine openvino:bf16"   # on one engine: bench/<machine>/profile-openvino-bf16/
    .venv/bin/python scripts/profile_serving.py --config-name dynamic_batching --seconds 30

perf_analyzer loads the server (``-b 2 --shape input.1:1,32,100``, concurrency 16); Linux ``perf`` samples
``tritonserver`` and the stubs by library, and ``py-spy`` the stubs' Python; the model alone is timed beside it.
``str_ocr_bench.profile`` says what is counted. Profilers take some CPU themselves: compare within one run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict
from pathlib import Path

from str_ocr.contract import RECOGNIZER
from str_ocr.plotting import pyplot
from str_ocr_bench import report
from str_ocr_bench.alone import cheapest, model_alone
from str_ocr_bench.configs import build_repository, with_engines
from str_ocr_bench.profile import NETWORK_KERNELS, Profile, profile
from str_ocr_bench.sweep import DIRECT
from str_ocr_server.process import ServerProcess
from str_ocr_triton.config import default_repository, read_model_config, recognizer_settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config-name", help="text_recognition's variant (default: config.pbtxt, the recommended one)")
    parser.add_argument("--seconds", type=float, default=20, help="profiled seconds (default %(default)s)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--engine", help="ENGINE or ENGINE:PRECISION to serve the config with, e.g. onnxruntime or "
                                         "openvino:bf16 (default: as the config says)")
    parser.add_argument("--out", type=Path, help="results folder (default bench/<machine>/profile, "
                                                 "or profile-ENGINE with --engine)")
    return parser.parse_args(argv)


def microseconds(seconds: float, images: int) -> float:
    return 1e6 * seconds / images if images else 0.0


def breakdown(result: Profile, alone_us: float) -> dict[str, float]:
    """CPU microseconds per image: the model alone at its best, and each part of serving."""
    stubs_us = microseconds(result.stubs_cpu_seconds, result.images)
    network = result.stub_libraries.get(NETWORK_KERNELS, 0.0)
    return {"model alone, at its best": alone_us,
            "stubs: network kernels": stubs_us * network,
            "stubs: everything else": stubs_us * (1 - network),
            "tritonserver": microseconds(result.tritonserver_cpu_seconds, result.images)}


def shares_table(title: str, shares: dict[str, float]) -> list[str]:
    rows = [f"| {kind} | {share:.0%} |" for kind, share in sorted(shares.items(), key=lambda kv: -kv[1])]
    return [f"| {title} | share |", "| --- | ---: |", *rows, ""]


def markdown(machine: dict, variant: str, result: Profile, parts: dict[str, float], best: dict,
             concurrency: int) -> str:
    served = sum(v for k, v in parts.items() if k != "model alone, at its best")
    lines = [f"# Where serving's CPU goes: text_recognition ({variant}) on {machine['name']}", "",
             f"{machine['description']}. perf_analyzer `-b 2 --shape input.1:1,32,100 --concurrency-range "
             f"{concurrency}:{concurrency}`; {result.images:,} images in {result.executions:,} executions "
             f"({result.images / max(result.executions, 1):.1f} per execution) while profiled.", "",
             "| CPU time per image | microseconds |", "| --- | ---: |",
             *(f"| {k} | {v:,.0f} |" for k, v in parts.items()),
             f"| **served, in all** | **{served:,.0f}** |", "",
             f"Model alone at its best: batch {best['batch_size']}, {best['threads']} thread(s), {best['engine']}. "
             f"Serving efficiency (alone / served): **{parts['model alone, at its best'] / served:.2f}**.", "",
             *shares_table("tritonserver, by library (perf)", result.tritonserver_libraries),
             *shares_table("stubs, by library (perf)", result.stub_libraries),
             *shares_table("stubs' Python, by what it does (py-spy)", result.stub_python),
             "![CPU time per image](profile.png)", ""]
    return "\n".join(lines)


def plot(path: Path, parts: dict[str, float], title: str) -> None:
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(8, 3.2))
    alone = parts["model alone, at its best"]
    axis.barh(["model alone"], [alone], color="tab:green")
    left = 0.0
    for (name, value), color in zip(list(parts.items())[1:], ["tab:blue", "tab:orange", "tab:red"]):
        axis.barh(["served"], [value], left=left, color=color, label=name)
        left += value
    axis.set_xlabel("CPU microseconds per image")
    axis.set_title(title)
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def served_repository(root: Path, config_name: str | None, engine: str | None) -> tuple[Path | None, str | None]:
    """The repository and config name to serve: the project's own, or with ``engine``, a copy of the config on it
    (as ``make bench`` serves its ``VARIANT@ENGINE``s)."""
    if engine is None:
        return None, config_name
    variants = with_engines({config_name or "recommended": read_model_config(default_repository() / RECOGNIZER,
                                                                             config_name)},
                            [engine])
    return build_repository(root, variants, None, None), next(iter(variants))


def main(argv: list[str] | None = None) -> Path:
    args = parse_args(argv)
    served = recognizer_settings(config_name=args.config_name)
    machine = report.machine_info(served.output_channels)
    label = f"profile-{args.engine.replace(':', '-')}" if args.engine else "profile"
    out = args.out or Path("bench") / machine["name"] / label
    variant = (args.config_name or "config.pbtxt") + (f" on {args.engine}" if args.engine else "")
    print(f"profile: {RECOGNIZER} ({variant}) for {args.seconds:.0f} s under perf_analyzer; results in {out}/",
          flush=True)
    logs = Path("runs") / "profile-logs"
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        repository, config_name = served_repository(Path(tmp), args.config_name, args.engine)
        with ServerProcess(config_name=config_name, models=[RECOGNIZER], repository=repository,
                           log_path=logs / "server.log", launcher_args=DIRECT) as server:
            result = profile(server, out / "raw", args.seconds, concurrency=args.concurrency)
    best = cheapest(model_alone(served.checkpoint, served.output_channels, [8, 16, 32], [1]))
    parts = breakdown(result, 1e6 * best["cpu_seconds_per_image"])
    (out / "profile.json").write_text(json.dumps({"machine": machine, "variant": variant, "profile": asdict(result),
                                                  "alone_best": best, "us_per_image": parts}, indent=2))
    plot(out / "profile.png", parts, f"text_recognition ({variant}), {machine['name']}")
    (out / "README.md").write_text(markdown(machine, variant, result, parts, best, args.concurrency))
    print((out / "README.md").read_text())
    return out


if __name__ == "__main__":
    main()
