"""Read text from images with the served ``ocr`` ensemble, over asyncio gRPC.

    .venv/bin/python -m client.demo --url localhost:8001                # 32 generated lines, truth known
    .venv/bin/python -m client.demo --url localhost:8001 --images DIR  # every PNG/JPEG in DIR

Sends each image's bytes as one request with at most ``--concurrency`` in flight, prints what each one
says, its confidence and latency, and ends with throughput, p50/p95 latency and, where the true text is
known (generated lines, or files named ``<anything>_<text>.png``), the accuracy.

Exit status: 0 when every image was read, 1 when some failed, 2 when the server cannot be reached,
3 when the model is not there or not ready.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp"}
EXIT_FAILED, EXIT_UNREACHABLE, EXIT_NO_MODEL = 1, 2, 3


@dataclass(frozen=True)
class Item:
    name: str
    data: bytes
    truth: str | None


@dataclass(frozen=True)
class Answer:
    item: Item
    text: str | None
    confidence: float | None
    latency_s: float
    error: str | None = None


def truth_from_name(path: Path) -> str | None:
    """``0007_hello.png`` -> ``hello``: the text after the last underscore, when it is alphanumeric."""
    _, sep, tail = path.stem.rpartition("_")
    return tail.lower() if sep and tail.isalnum() else None


def images_from_folder(folder: Path) -> list[Item]:
    paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        raise SystemExit(f"demo: no images ({', '.join(sorted(IMAGE_SUFFIXES))}) in {folder}")
    return [Item(p.name, p.read_bytes(), truth_from_name(p)) for p in paths]


def generated_images(count: int, seed: int, image_format: str) -> list[Item]:
    """Text lines drawn by ``str_ocr.synth`` (variable width, 1 to 25 characters), encoded as files."""
    from PIL import Image  # noqa: PLC0415

    from str_ocr.synth import TextLineSynth  # noqa: PLC0415

    synth = TextLineSynth(seed)
    items = []
    for i in range(count):
        sample = synth.sample()
        buffer = io.BytesIO()
        Image.fromarray(sample.image).convert("RGB").save(buffer, image_format.upper())
        items.append(Item(f"line{i:04d}.{image_format.lower()}", buffer.getvalue(), sample.text))
    return items


async def wait_until_ready(client, model: str, timeout: float) -> int:
    """0 when ``model`` is ready; else the exit status, after saying why."""
    deadline = time.monotonic() + timeout
    reason = "the server did not answer"
    while time.monotonic() < deadline:
        try:
            if await client.is_server_live():
                if await client.is_model_ready(model):
                    return 0
                reason = "model"
        except Exception as error:  # noqa: BLE001 - unreachable looks different in every gRPC version
            reason = str(error).splitlines()[0]
        await asyncio.sleep(0.5)
    if reason == "model":
        print(f"demo: the server is up but model {model!r} is not ready: start it with that model "
              "(make serve, or scripts/serve.py --models ocr)", file=sys.stderr)
        return EXIT_NO_MODEL
    print(f"demo: cannot reach a Triton server ({reason}); start one with `make serve`, or pass --url", file=sys.stderr)
    return EXIT_UNREACHABLE


def image_input(data: bytes, module):
    """The ``IMAGE`` input of one encoded file, a ``[1, bytes]`` UINT8 row; ``module``: tritonclient.grpc(.aio)."""
    array = np.frombuffer(data, dtype=np.uint8)[np.newaxis]
    tensor = module.InferInput("IMAGE", list(array.shape), "UINT8")
    tensor.set_data_from_numpy(array)
    return tensor


async def read_all(url: str, model: str, items: Sequence[Item], concurrency: int, timeout: float,
                   quiet: bool) -> tuple[list[Answer], float] | int:
    """Every item's answer and the seconds they took, or the exit status when the server is not there."""
    import tritonclient.grpc.aio as grpcaio  # noqa: PLC0415

    async with grpcaio.InferenceServerClient(url) as client:
        status = await wait_until_ready(client, model, timeout)
        if status:
            return status
        limit = asyncio.Semaphore(concurrency)
        start = time.perf_counter()
        bar = tqdm(total=len(items), desc="reading", unit="img", disable=quiet or not sys.stderr.isatty(), leave=False)

        async def one(item: Item) -> Answer:
            image = image_input(item.data, grpcaio)
            async with limit:
                start = time.perf_counter()
                try:
                    result = await client.infer(model, [image], client_timeout=timeout)
                    answer = Answer(item, result.as_numpy("TEXT")[0, 0].decode(), float(result.as_numpy("CONFIDENCE")[0, 0]),
                                    time.perf_counter() - start)
                except Exception as error:  # noqa: BLE001 - reported per image
                    answer = Answer(item, None, None, time.perf_counter() - start, str(error).splitlines()[0])
            bar.update()
            if not quiet:
                tqdm.write(format_answer(answer))
            return answer

        answers = await asyncio.gather(*(one(item) for item in items))
        bar.close()
        return list(answers), time.perf_counter() - start


def format_answer(answer: Answer) -> str:
    if answer.error:
        return f"{answer.item.name:24} ERROR {answer.error}"
    mark = "" if answer.item.truth is None else ("  ok" if answer.text == answer.item.truth else f"  (truth {answer.item.truth!r})")
    return f"{answer.item.name:24} {answer.text!r:28} confidence {answer.confidence:.3f}  {answer.latency_s * 1e3:7.1f} ms{mark}"


def summary(answers: Sequence[Answer], seconds: float) -> str:
    read = [a for a in answers if a.error is None]
    latencies = np.array([a.latency_s for a in read]) * 1e3
    lines = [f"summary: {len(read)} of {len(answers)} images read in {seconds:.2f} s: "
             f"throughput {len(read) / seconds:.1f} images/s"]
    if len(read):
        lines.append(f"summary: latency p50 {np.percentile(latencies, 50):.1f} ms, p95 {np.percentile(latencies, 95):.1f} ms")
    known = [a for a in read if a.item.truth is not None]
    if known:
        exact = sum(a.text == a.item.truth for a in known)
        lines.append(f"summary: accuracy {exact / len(known):.1%} ({exact} of {len(known)} read exactly)")
    failed = len(answers) - len(read)
    if failed:
        lines.append(f"summary: {failed} failed")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m client.demo", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-u", "--url", default="localhost:8001", help="the server's gRPC address (default %(default)s)")
    parser.add_argument("-m", "--model", default="ocr", help="the model to call (default %(default)s)")
    parser.add_argument("--images", type=Path, help="a folder of images to read (default: generated text lines)")
    parser.add_argument("--count", type=int, default=32, help="how many lines to generate without --images (default %(default)s)")
    parser.add_argument("--format", choices=["png", "jpeg"], default="png", help="file format of generated lines (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated lines (default %(default)s)")
    parser.add_argument("-c", "--concurrency", type=int, default=8, help="requests in flight (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the server, and for each answer (default %(default)s)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print the summary only")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    items = images_from_folder(args.images) if args.images else generated_images(args.count, args.seed, args.format)
    outcome = asyncio.run(read_all(args.url, args.model, items, args.concurrency, args.timeout, args.quiet))
    if isinstance(outcome, int):
        return outcome
    answers, seconds = outcome
    print(summary(answers, seconds))
    return EXIT_FAILED if any(a.error for a in answers) else 0


if __name__ == "__main__":
    sys.exit(main())
