"""Whole images under load: ocr_page's ways of sending a page's crops to text_recognition, driven by NVIDIA's
perf_analyzer with the same page files, interleaved level by level; RapidOCR in-process on the same pages beside them.

Each way runs in its own server (``config.pbtxt``: every crop its own request, pooled across pages by the ragged
batcher; ``grouped_crops``: crops of about one width per request, pooled likewise; ``padded_crops``: one padded
batch per page; ``unbatched_crops``: one crop at a time), all started before the first measurement, so that each
concurrency level measures them one after another. Per level: pages/s and p95 from perf_analyzer, and from the
server's statistics the crops text_recognition read per execution, and the milliseconds text_detection and
text_recognition computed per page (where a page's time goes). The columns wasted on padding come from the
recogniser's counters (ragged, grouped) or from the pages' own crops (padded: each batch padded to its widest)."""

from __future__ import annotations

import asyncio
import base64
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
from tqdm import tqdm

from str_ocr.contract import DETECTOR, IMAGE, NUM_CLASSES, OCR_PAGE, RECOGNIZER, output_length
from str_ocr.detection import DetectorSession, choose_detector_engine, detector_path
from str_ocr.page import PageSettings, read_page
from str_ocr.plotting import pyplot
from str_ocr_client.stats import compute_seconds, counts, metric_total, model_statistics
from str_ocr_server.process import ServerProcess

from . import perf_analyzer
from .pages import read_rapidocr

VARIANTS = {"ragged": None, "grouped": "grouped_crops", "padded": "padded_crops", "none": "unbatched_crops"}
"""crop_batching -> the config variant of ocr_page that sets it."""


@dataclass(frozen=True)
class PageLevel:
    batching: str
    concurrency: int
    pages_per_second: float
    p95_ms: float
    crops_per_execution: float
    exit_code: int
    crops_per_page: float
    detector_ms_per_page: float
    """What text_detection computed, per page ocr_page answered (Triton's batch statistics: input, infer and
    output), over every page of the level, perf_analyzer's unreported windows too; with pages in flight, it
    includes waiting for a core."""
    recognizer_ms_per_page: float
    """What text_recognition computed per page, likewise."""


@dataclass(frozen=True)
class ServerCounts:
    """What the server has counted so far: pages answered, crops read and executions run by the recogniser, and
    the seconds the detector and the recogniser computed."""

    pages: int
    crops: int
    executions: int
    detector_seconds: float
    recognizer_seconds: float

    @classmethod
    def read(cls, client: grpcclient.InferenceServerClient, admin_key: str | None) -> ServerCounts:
        """The counts once ocr_page's stand still: Triton counts a page after its response has left, so the last
        pages of a run reach its statistics just after the client has them."""
        pages = -1
        for _ in range(50):
            previous, (pages, _) = pages, counts(model_statistics(client, OCR_PAGE, admin_key))
            if pages == previous:
                break
            time.sleep(0.1)
        recognizer, detector = (model_statistics(client, m, admin_key) for m in (RECOGNIZER, DETECTOR))
        return cls(pages, *counts(recognizer), compute_seconds(detector), compute_seconds(recognizer))

    def __sub__(self, other: ServerCounts) -> ServerCounts:
        return ServerCounts(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))


def input_data(files: Sequence[Path], path: Path) -> Path:
    """perf_analyzer's ``--input-data``: each page file's bytes, ``b64``, one page per request."""
    data = [{IMAGE: {"b64": base64.b64encode(f.read_bytes()).decode(), "shape": [f.stat().st_size]}} for f in files]
    path.write_text(json.dumps({"data": data}))
    return path


def padded_waste(files: Sequence[Path], max_crops: int = PageSettings.max_crops_per_request) -> float:
    """The share of columns that padding adds when each page's crops go in batches padded to their widest."""
    engine, precision = choose_detector_engine("auto", gpu=False)
    detector = DetectorSession(detector_path(), 2, engine, precision)
    widths: list[list[int]] = []

    async def infer(model: str, array: np.ndarray) -> np.ndarray:
        if model == "detector":
            return detector(array)
        widths[-1].append(array.shape[-1])
        return np.zeros((len(array), output_length(array.shape[-1]), NUM_CLASSES), np.float32)

    real = padded = 0
    for path in files:
        widths.append([])
        asyncio.run(read_page(path.read_bytes(), PageSettings(), infer))
        for start in range(0, len(widths[-1]), max_crops):
            chunk = widths[-1][start:start + max_crops]
            real, padded = real + sum(chunk), padded + len(chunk) * max(chunk)
    return 1 - real / padded if padded else 0.0


def measure(server: ServerProcess, batching: str, concurrency: int, data: Path, csv_path: Path,
            window: perf_analyzer.Window, requests: int) -> PageLevel:
    """One level; windows of at least ``requests`` pages (a few pages a second fill a time window too thinly to
    be stable), twice that where perf_analyzer cannot stabilise."""
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = ServerCounts.read(client, server.admin_key)
        for count in (requests, 2 * requests):
            run = perf_analyzer.run(server.grpc_url, OCR_PAGE, f"{concurrency}:{concurrency}", csv_path, 1, None,
                                    window, ("--input-data", str(data), "--measurement-mode", "count_windows",
                                             "--measurement-request-count", str(max(count, 4 * concurrency))))
            if run.exit_code != 2:
                break
        after = ServerCounts.read(client, server.admin_key)
    added = after - before
    measured = run.measurements[0] if run.measurements else None
    if run.exit_code:
        tqdm.write(f"{batching} at concurrency {concurrency}: perf_analyzer exited {run.exit_code}")
    per_page = 1 / added.pages if added.pages else 0.0
    return PageLevel(batching, concurrency, measured.throughput if measured else 0.0,
                     measured.p95_us / 1e3 if measured else 0.0,
                     added.crops / added.executions if added.executions else 0.0, run.exit_code,
                     added.crops * per_page, added.detector_seconds * 1e3 * per_page,
                     added.recognizer_seconds * 1e3 * per_page)


def sweep(files: Sequence[Path], levels: Sequence[int], logs: Path, window: perf_analyzer.Window,
          rounds: int = 1, requests: int = 16, batchings: Sequence[str] = tuple(VARIANTS),
          ) -> tuple[list[PageLevel], dict[str, float]]:
    """Each of ``batchings`` at every level, interleaved, ``rounds`` times; and the share of the recogniser's
    columns that were padding, where crops went to it in requests of their own widths (ragged, grouped)."""
    results = []
    logs.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        data = input_data(files, Path(tmp, "pages.json"))
        servers = {batching: stack.enter_context(ServerProcess(config_name=VARIANTS[batching], models=[OCR_PAGE],
                                                               log_path=logs / f"ocr_page-{batching}.log"))
                   for batching in batchings}
        steps = [(r, c, b) for r in range(rounds) for c in levels for b in servers]
        for _, concurrency, batching in tqdm(steps, desc="pages", unit="run"):
            results.append(measure(servers[batching], batching, concurrency, data, Path(tmp, "level.csv"), window,
                                   requests))
        waste = {}
        for batching in set(servers) & {"ragged", "grouped"}:
            real = metric_total(servers[batching].metrics_url, "str_ocr_columns_total", kind="real")
            padding = metric_total(servers[batching].metrics_url, "str_ocr_columns_total", kind="padding")
            waste[batching] = padding / (real + padding) if real + padding else 0.0
    return results, waste


def rapidocr_rates(files: Sequence[Path], threads: Sequence[int] = (1, 2)) -> dict[int, float]:
    """RapidOCR's pages/s in-process, one page at a time, with each thread count."""
    return {n: len(files) / sum(a.seconds for a in read_rapidocr(files, n)) for n in threads}


def best(results: Sequence[PageLevel], batching: str, concurrency: int) -> PageLevel:
    """The median run of one variant at one level (over the rounds)."""
    runs = sorted((r for r in results if r.batching == batching and r.concurrency == concurrency),
                  key=lambda r: r.pages_per_second)
    return runs[len(runs) // 2]


def round_ratios(results: Sequence[PageLevel], batching: str, concurrency: int) -> list[float]:
    """``batching``'s pages/s over padded's at one level, round by round (``results`` keep the rounds' order)."""
    runs = {b: [r.pages_per_second for r in results if r.batching == b and r.concurrency == concurrency]
            for b in (batching, "padded")}
    return [mine / padded for mine, padded in zip(runs[batching], runs["padded"]) if padded]


def table(results: Sequence[PageLevel], levels: Sequence[int], batchings: Sequence[str], heading: str,
          cell: Callable[[PageLevel], str]) -> list[str]:
    """A markdown table's rows: a row per level, a column per way of batching, each cell ``cell`` of its median
    run."""
    rows = ["| concurrency | " + " | ".join(f"{b}: {heading}" for b in batchings) + " |",
            "| ---: | " + " | ".join("---" for _ in batchings) + " |"]
    return rows + [f"| {c} | " + " | ".join(cell(best(results, b, c)) for b in batchings) + " |" for c in levels]


def report(results: Sequence[PageLevel], waste: dict[str, float], rapidocr: dict[int, float], out: Path) -> str:
    """A markdown table and a plot in ``out``; the table is returned."""
    levels = sorted({r.concurrency for r in results})
    batchings = [b for b in VARIANTS if any(r.batching == b for r in results)]
    rows = table(results, levels, batchings, "pages/s, p95 ms, crops/execution",
                 lambda x: f"{x.pages_per_second:.2f}, {x.p95_ms:.0f}, {x.crops_per_execution:.1f}")
    rows += [""] + table(results, levels, batchings, "ms computed a page, detector / recogniser (crops a page)",
                         lambda x: f"{x.detector_ms_per_page:.0f} / {x.recognizer_ms_per_page:.0f} "
                                   f"({x.crops_per_page:.0f})")
    lines = ["\n".join(rows), ""]
    for c in levels if {"ragged", "padded"} <= set(batchings) else ():
        ratios = {b: round_ratios(results, b, c) for b in batchings if b != "padded"}
        shown = ", ".join(f"{b} {statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})"
                          for b, r in ratios.items() if r)
        lines.append(f"- concurrency {c}, pages/s over padded's, the median (and range) of the rounds' ratios: {shown}")
    lines.append("- padding, share of the recogniser's columns: " + ", ".join(f"{b} {w:.1%}" for b, w in waste.items()))
    lines += [f"- RapidOCR in-process, {n} thread(s): {rate:.2f} pages/s" for n, rate in rapidocr.items()]
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "pages.md").write_text(text)
    (out / "pages.json").write_text(json.dumps({"levels": [asdict(r) for r in results], "padding": waste,
                                                "rapidocr_pages_per_second": rapidocr}, indent=1))
    plot(results, rapidocr, out / "pages.png")
    return text


def plot(results: Sequence[PageLevel], rapidocr: dict[int, float], path: Path) -> None:
    plt = pyplot()

    figure, (rate, latency) = plt.subplots(1, 2, figsize=(11, 4))
    levels = sorted({r.concurrency for r in results})
    for batching in [b for b in VARIANTS if any(r.batching == b for r in results)]:
        runs = [best(results, batching, c) for c in levels]
        rate.plot(levels, [r.pages_per_second for r in runs], marker="o", label=f"ocr_page, crops {batching}")
        latency.plot(levels, [r.p95_ms for r in runs], marker="o", label=f"crops {batching}")
    for threads, value in rapidocr.items():
        rate.axhline(value, linestyle="--", color="grey" if threads == 1 else "black",
                     label=f"RapidOCR in-process, {threads} thread(s)")
    rate.set(xlabel="pages in flight (perf_analyzer concurrency)", ylabel="pages/s", title="Throughput")
    latency.set(xlabel="pages in flight", ylabel="p95 latency (ms)", title="Latency")
    rate.legend(fontsize=8)
    latency.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
