"""Start the server, send the tutorial's request, read generated images through the ocr ensemble, stop.

    .venv/bin/python -m client.quickstart [--words triton,inference,server] [--count 32] [--config-name NAME]

First the tutorial's request to text_recognition (``input.1`` [B, 1, 32, 100], decoded here), then the
asyncio client demo (``python -m client.demo``) against ``ocr``: image bytes in, text out.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import tritonclient.grpc as grpcclient

from client import demo
from str_ocr import greedy_decode, normalize
from str_ocr.contract import INPUT_NAME, OCR, OUTPUT_NAME, RECOGNIZER, TUTORIAL_WIDTH
from str_ocr.synth import TextLineSynth
from str_ocr_client.requests import logits_of, recognizer_inputs
from str_ocr_server.process import ServerProcess


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m client.quickstart", description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", default="triton,inference,server,2026", help="comma-separated words to render and read")
    parser.add_argument("--config-name", default=None, help="config variant to serve (default: config.pbtxt)")
    parser.add_argument("--count", type=int, default=32, help="generated images for the ocr client demo")
    args = parser.parse_args()
    words = [w for w in args.words.lower().split(",") if w]

    synth = TextLineSynth(seed=7)
    lines = np.stack([normalize(synth.render(word, TUTORIAL_WIDTH))[np.newaxis] for word in words])
    print(f"quickstart: starting tritonserver (config {args.config_name or 'config.pbtxt'}) ...", flush=True)
    with ServerProcess(config_name=args.config_name, models=[RECOGNIZER, OCR]) as server:
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
        print("quickstart: stopping the server")
    return status


if __name__ == "__main__":
    sys.exit(main())
