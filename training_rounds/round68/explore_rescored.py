"""Exploration, nothing trained: the served pair reads an unsure line six times (the first reading and five again),
and the truth is among those texts more often than the kept one is right (explore-keeps-6117.txt). Does keeping the
text the six readings find most probable together, each candidate scored by CTC against each reading's own
frames and the log-probabilities added, keep the truth more often than the served vote? Averaging frames does not
(explore-averaged-6117.txt): two weights, or two stretches, place a text's frames differently. Seed 6117, 1,000
held-out variable-width lines a polarity, read again below 0.9 (served).

    PYTHONPATH=backend_src python training_rounds/round68/explore_rescored.py
"""
import itertools

import numpy as np
import torch

from str_ocr.contract import READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits, normalize
from str_ocr.read_again import SERVED_KEEP, read_again_stretches, restretched
from str_ocr.text import encode, greedy_decode

import weights  # beside this script

LIMITS = LineLimits(stretch=1.2)


def log_probabilities(run, lines):
    """Each line's frame log-probabilities ``[T, 37]``."""
    results = run([normalize(line)[np.newaxis, np.newaxis] for line in lines])
    return [torch.log_softmax(r[0].float(), dim=1) for r in results]


def text_log_probability(frames: torch.Tensor, text: str) -> float:
    """log p(text | frames) under CTC, summed over every path that says ``text``."""
    if not text:
        return float(frames[:, 0].sum())
    target = torch.tensor([encode(text)])
    loss = torch.nn.functional.ctc_loss(frames[:, None], target, [len(frames)], [len(text)], reduction="sum")
    return -float(loss)


def zero_variants(text: str, most: int = 4) -> set[str]:
    """``text`` with each of its first ``most`` 0s and os read either way."""
    places = [i for i, ch in enumerate(text) if ch in "0o"][:most]
    variants = set()
    for choice in itertools.product("0o", repeat=len(places)):
        chars = list(text)
        for place, ch in zip(places, choice):
            chars[place] = ch
        variants.add("".join(chars))
    return variants


def most_probable(candidates: set[str], frames: list[torch.Tensor]) -> str:
    return max(sorted(candidates), key=lambda text: sum(text_log_probability(f, text) for f in frames))


E, X = weights.recognizer(weights.E), weights.recognizer(weights.X)
sets = {k: v for k, v in draw_group("held-out", 6117, 1000).items() if "variable" in k}
for name, samples in sets.items():
    images, truths = [s.image for s in samples], [s.text for s in samples]
    first_frames = log_probabilities(E, images)
    first = [greedy_decode(f.numpy()) for f in first_frames]
    unsure = [i for i, r in enumerate(first) if r.confidence < READ_AGAIN_BELOW]
    narrow, wide = read_again_stretches(LIMITS.stretch)
    lines = {s: [restretched(images[i], s, LIMITS) for i in unsure] for s in (narrow, wide)}
    changed = {s: [line.shape != images[i].shape for line, i in zip(lines[s], unsure)] for s in lines}

    def at_other_stretches(run):
        """The unsure lines' frames read by ``run`` narrow and wide (None where their width limits leave a line
        unchanged)."""
        return [[f if changed[stretch][k] else None for k, f in enumerate(log_probabilities(run, lines[stretch]))]
                for stretch in (narrow, wide)]

    # in the order rereadings asks for them, as served
    again_frames = [*at_other_stretches(E), log_probabilities(X, [images[i] for i in unsure]), *at_other_stretches(X)]

    def again(k):
        """Line ``unsure[k]``'s frames read again, as served (not at a stretch its width limits leave unchanged)."""
        return [frames[k] for frames in again_frames if frames[k] is not None]

    def texts(k):
        return {greedy_decode(f.numpy()).text for f in [first_frames[unsure[k]], *again(k)]}

    rules = {
        "served (most agreed of the readings again)":
            lambda k: SERVED_KEEP(first[unsure[k]], [greedy_decode(f.numpy()) for f in again(k)]).text,
        "most probable of the texts, over all six": lambda k: most_probable(texts(k), [first_frames[unsure[k]],
                                                                                      *again(k)]),
        "most probable of the texts, over the five again": lambda k: most_probable(texts(k), again(k)),
        "most probable, 0/o either way, over all six": lambda k: most_probable(
            set().union(*map(zero_variants, texts(k))), [first_frames[unsure[k]], *again(k)]),
    }
    read_again = set(unsure)
    right_first = sum(first[i].text == truths[i] for i in range(len(images)) if i not in read_again)
    row = [f"{rule} {right_first + sum(keep(k) == truths[i] for k, i in enumerate(unsure))}"
           for rule, keep in rules.items()]
    print(f"{name}: {len(unsure)} read again; " + "; ".join(row), flush=True)
