"""What the served ``ocr`` gains and costs by reading unsure lines again: one server serving ``ocr`` as configured
(the second weights reading those lines too, the most agreed text kept), ``ocr_most_confident`` (the same, keeping
the most confident reading of the lines read less surely than 0.7), ``ocr_first_weights`` (as configured, without the
second weights) and ``ocr_once`` (each line read once), each an ensemble whose last step is a copy of
``ocr_postprocess`` so set; the same held-out variable-width lines (PNG files at their aspect ratio, as a user sends
them) through each.

    .venv/bin/python scripts/time_read_again.py [--count 500] [--rounds 3] [--concurrency 8] [--out DIR]

Prints each model's word accuracy on the lines and how many lines were read again, then perf_analyzer's throughput
and p95 latency for each, round after round in turn, with ``ocr``'s ratio to each in each round (timings here vary
from run to run: the ratios of one run compare). Writes ``DIR/read_again.json``.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import shutil
import tempfile
from pathlib import Path

from google.protobuf import text_format
from PIL import Image
from tqdm import tqdm

from str_ocr.contract import IMAGE, OCR, POSTPROCESS
from str_ocr.evaluate import draw_group
from str_ocr.metrics import score
from str_ocr.synth import Sample
from str_ocr_bench import perf_analyzer
from str_ocr_client.requests import image_inputs, text_of
from str_ocr_client.sending import infer_each_now
from str_ocr_client.stats import metric_total
from str_ocr_server.process import ServerProcess
from str_ocr_triton.config import default_repository, read_model_config
from str_ocr_triton.metric_labels import READ_AGAIN_COUNTER

# ocr_most_confident reads again as ocr did until round 48's rule.
VARIANTS = {f"{OCR}_most_confident": {"read_again_below": "0.7", "read_again_keeps": "most_confident"},
            f"{OCR}_first_weights": {"second_recognizer": ""},
            f"{OCR}_once": {"read_again_below": "0", "second_recognizer": ""}}
"""The ensembles served beside ``ocr``: their ``ocr_postprocess`` parameters."""
WINDOW = perf_analyzer.Window(interval_ms=8000, stability_percent=25)
"""Long windows and a wide band: how much a window's lines cost depends on how many of them are read again."""


def postprocess_of(model: str) -> str:
    """The postprocess step of ``ocr`` or of a variant: ``ocr_once`` ends in ``ocr_postprocess_once``."""
    return model.replace(OCR, POSTPROCESS, 1)


def png(sample: Sample) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(sample.image).save(buffer, "PNG")
    return buffer.getvalue()


def write_config(model_dir: Path, config) -> None:
    (model_dir / "config.pbtxt").write_text(text_format.MessageToString(config))


def repository_with_variants(root: Path) -> Path:
    """A copy of the model repository with each of ``VARIANTS`` beside ``ocr``."""
    repository = root / "models"
    shutil.copytree(default_repository(), repository, ignore=shutil.ignore_patterns("__pycache__"))
    for model, parameters in VARIANTS.items():
        postprocess_name = postprocess_of(model)
        shutil.copytree(repository / POSTPROCESS, repository / postprocess_name)
        postprocess = read_model_config(repository / postprocess_name)
        postprocess.name = postprocess_name
        for key, value in parameters.items():
            postprocess.parameters[key].string_value = value
        write_config(repository / postprocess_name, postprocess)
        (repository / model / "1").mkdir(parents=True)
        ensemble = read_model_config(repository / OCR)
        ensemble.name = model
        for step in ensemble.ensemble_scheduling.step:
            if step.model_name == POSTPROCESS:
                step.model_name = postprocess_name
        write_config(repository / model, ensemble)
    return repository


def held_out_lines(seed: int, count: int) -> list[Sample]:
    """``count`` held-out variable-width lines, half dark on light and half light on dark, at their aspect ratio."""
    sets = draw_group("held-out", seed, (count + 1) // 2, line_stretch=1.0)
    return [s for name, samples in sets.items() if "variable" in name for s in samples][:count]


def read_through(server: ServerProcess, model: str, blobs: list[bytes], postprocess: str) -> tuple[list[str], int]:
    """Each file's text as ``model`` reads it, and how many lines its postprocess step read again."""
    before = metric_total(server.metrics_url, READ_AGAIN_COUNTER[0], model=postprocess)
    outcomes = infer_each_now(server.grpc_url, model, [image_inputs(b) for b in blobs], 16)
    if failed := [o.result for o in outcomes if not o.ok]:
        raise RuntimeError(f"{model}: {len(failed)} files failed, the first: {failed[0]}")
    read_again = metric_total(server.metrics_url, READ_AGAIN_COUNTER[0], model=postprocess) - before
    return [text_of(o.result)[0] for o in outcomes], int(read_again)


def input_data(blobs: list[bytes], path: Path) -> Path:
    """perf_analyzer's ``--input-data``: each file's bytes, ``b64``, one file per request."""
    data = [{IMAGE: {"b64": base64.b64encode(b).decode(), "shape": [len(b)]}} for b in blobs]
    path.write_text(json.dumps({"data": data}))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=500, help="lines (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="perf_analyzer runs of each, in turn (default %(default)s)")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight (default %(default)s)")
    parser.add_argument("--seed", type=int, default=8118, help="seed of the lines (default %(default)s)")
    parser.add_argument("--out", type=Path, default=Path("runs/read_again"), help="where the results go")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    samples = held_out_lines(args.seed, args.count)
    blobs, truths = [png(s) for s in samples], [s.text for s in samples]
    models = {model: postprocess_of(model) for model in (OCR, *VARIANTS)}
    results: dict = {"lines": len(samples), "seed": args.seed, "concurrency": args.concurrency, "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(repository=repository_with_variants(Path(tmp)), models=list(models),
                               log_path=args.out / "server.log").start()
        try:
            for model, postprocess in models.items():
                texts, read_again = read_through(server, model, blobs, postprocess)
                accuracy = score(texts, truths).word_accuracy
                results["models"][model] = {"word_accuracy": accuracy, "read_again": read_again, "runs": []}
                print(f"{model}: word accuracy {accuracy:.2%} on {len(samples)} lines, {read_again} read again")
            data = input_data(blobs, Path(tmp) / "lines.json")
            for _ in tqdm(range(args.rounds), desc="perf_analyzer rounds"):
                for model in models:
                    run = perf_analyzer.run(server.grpc_url, model, f"{args.concurrency}:{args.concurrency}",
                                            Path(tmp) / "perf.csv", 1, None, WINDOW, extra=("--input-data", str(data)))
                    if not run.measurements:  # unstable: this round is left out of the ratios
                        tqdm.write(f"perf_analyzer measured nothing on {model} (exit {run.exit_code}): "
                                   f"{(run.output.strip().splitlines() or ['no output'])[-1]}")
                    measured = run.measurements[0] if run.measurements else None
                    results["models"][model]["runs"].append(measured and {"throughput": measured.throughput,
                                                                          "p95_ms": measured.p95_us / 1e3})
        finally:
            server.stop()
    report(results)
    (args.out / "read_again.json").write_text(json.dumps(results, indent=2))


def report(results: dict) -> None:
    runs = {model: measured["runs"] for model, measured in results["models"].items()}
    for other in VARIANTS:
        print(f"| round | {OCR} lines/s | {other} lines/s | ratio | {OCR} p95 ms | {other} p95 ms | ratio |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for k, (a, b) in enumerate(zip(runs[OCR], runs[other]), 1):
            if not (a and b):
                print(f"| {k} | unstable | | | | | |")
                continue
            print(f"| {k} | {a['throughput']:.1f} | {b['throughput']:.1f} | {a['throughput'] / b['throughput']:.2f} | "
                  f"{a['p95_ms']:.1f} | {b['p95_ms']:.1f} | {a['p95_ms'] / b['p95_ms']:.2f} |")


if __name__ == "__main__":
    main()
