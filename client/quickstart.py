"""Start the server, send the tutorial's request, read generated lines and a generated page, stop.

    .venv/bin/python -m client.quickstart [--words triton,inference,server] [--count 32] [--config-name NAME]

First the tutorial's request to text_recognition (``input.1`` [B, 1, 32, 100], decoded here), then the
asyncio client demo (``python -m client.demo``) against ``ocr``: image bytes in, text out; then the demo
against ``ocr_page`` with a generated page, whose words it draws on a copy of it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient

from client import demo
from str_ocr import greedy_decode, normalize
from str_ocr.contract import INPUT_NAME, OCR, OCR_PAGE, OUTPUT_NAME, RECOGNIZER, TUTORIAL_WIDTH
from str_ocr.synth import PageSynth, TextLineSynth
from str_ocr_client.requests import logits_of, recognizer_inputs
from str_ocr_server.process import ServerProcess


OUT = Path("runs/demo")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m client.quickstart", description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", default="triton,inference,server,2026",
                        help="comma-separated words to render and read")
    parser.add_argument("--config-name", default=None, help="config variant to serve (default: config.pbtxt)")
    parser.add_argument("--count", type=int, default=32, help="generated images for the ocr client demo")
    args = parser.parse_args()
    words = [w for w in args.words.lower().split(",") if w]

    synth = TextLineSynth(seed=7)
    lines = np.stack([normalize(synth.render(word, TUTORIAL_WIDTH))[np.newaxis] for word in words])
    print(f"quickstart: starting tritonserver (config {args.config_name or 'config.pbtxt'}) ...", flush=True)
    with ServerProcess(config_name=args.config_name, models=[RECOGNIZER, OCR, OCR_PAGE]) as server:
        client = grpcclient.InferenceServerClient(server.grpc_url)
        logits = logits_of(client.infer(RECOGNIZER, recognizer_inputs(lines)))
        print(f"quickstart: sent {INPUT_NAME} {list(lines.shape)}, got {OUTPUT_NAME} {list(logits.shape)}")
        correct = 0
        for word, line_logits in zip(words, logits):
            reading = greedy_decode(line_logits)
            correct += reading.text == word
            print(f"  rendered {word!r:14} read {reading.text!r:14} confidence {reading.confidence:.3f}")
        print(f"quickstart: {correct} of {len(words)} read exactly\n")
        print(f"quickstart: python -m client.demo --url {server.grpc_url} --count {args.count}", flush=True)
        status = demo.main(["--url", server.grpc_url, "--count", str(args.count)])
        page = OUT / "page.png"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_bytes(PageSynth(seed=5, fonts="core").page(background="paper", layout="scene").encoded())
        print(f"\nquickstart: python -m client.demo --url {server.grpc_url} --page {page} --out {OUT}", flush=True)
        status = demo.main(["--url", server.grpc_url, "--page", str(page), "--out", str(OUT)]) or status
        print(f"quickstart: the page with its words drawn on it: {OUT / 'page.read.png'}")
        print("quickstart: stopping the server")
    return status


if __name__ == "__main__":
    sys.exit(main())
