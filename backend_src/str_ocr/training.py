"""Training the recogniser with CTC on synthetic text lines (``scripts/train.py`` is its command line).

The commands that made the shipped weights are in ``training_rounds/commands.md``.

Seeded; resumable: it checkpoints ``--run-dir``'s ``last.pt`` every ``--checkpoint-minutes`` and at each
validation, written whole or not at all, and picks it up when started again with the same arguments; a step
that took over a minute (the process stopped) counts as one minute of the time budget. It shows a progress
bar with the loss, the validation word accuracy and the held-out faces' (``held_out``), and logs these
figures to ``figures.jsonl``, drawn in ``figures.png``; it runs on a GPU where there is one, and computes the
network in bf16 there and on a CPU that has bf16 arithmetic (``--precision``). Batches mix the
tutorial's fixed 32x100 lines with variable-width lines zero-padded to the widest in their batch and masked
past their own width, exactly as ragged batches are served. The learning rate follows a cosine
over the run's progress: the larger of steps done and time used, when a time budget is set. With
``--average-decay`` the run keeps a moving average of its weights, checkpointed with them, and validates and
writes the average instead of the last step's weights. With ``--keep-close-to`` it keeps its reading of the
earlier lines close to those weights' (the KL divergence of its per-frame outputs from theirs, ``--keep-weight``
times, beside CTC), so that what it learns of the new faces need not cost what those weights read of the old.
With ``--context-layers`` the network has self-attention layers over its frames (``str_ocr.model.FrameContext``),
trained at ``--context-lr``; those ``--init`` lacks start as the identity. ``--frozen-batch-norm`` keeps batch norm
on its running statistics, as the weights are served (rounds 20 and 21's prototype, ``training_rounds/round20``,
trained a context head so). With ``--read-again-by`` a step counts only the lines those weights read less surely
than ``--read-again-below``: second weights learn the lines ``ocr`` has them read.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel
from torch.utils.data import DataLoader, IterableDataset, get_worker_info
from tqdm import tqdm

from str_ocr import STRModel, load_model, output_length, save_checkpoint
from str_ocr.allocator import keeps_freed_memory, purge_freed_memory
from str_ocr.checkpoint import checkpoint_width, context_layers
from str_ocr.contract import READ_AGAIN_BELOW
from str_ocr.fonts import FONT_SETS, font_files
from str_ocr.metrics import Scores, score
from str_ocr.packing import pad_to_width
from str_ocr.plotting import pyplot
from str_ocr.preprocess import TUTORIAL_WIDTH, normalize
from str_ocr.engines import TorchEngine
from str_ocr.recognizer import Recognizer
from str_ocr.synth import (LONG_FIXED_MIN_CHARS, THIN_MIN_SIZE, Sample, TextLineSynth, Variety, ctc_feasible,
                           old_style_faces, unshaped_warning)
from str_ocr.text import encode

VALIDATION_SEED_OFFSET = 1_000_003
EARLIER_SEED_OFFSET = 500_001
HELD_OUT_SEED = 31_337
MAX_STEP_SECONDS = 60.0
VARIABLE_BATCHES_A_DRAW = 4
"""Batches of variable-width lines drawn at once and cut by width, so that padding stays small."""
"""Longer steps count as this long in the run's time: the process was stopped or the machine suspended."""


@dataclass
class Batch:
    images: torch.Tensor  # [N, 1, 32, W_max], normalised, zero-padded on the right
    widths: torch.Tensor  # each line's real width, so the model masks the padding as served batches do
    targets: torch.Tensor  # all labels, concatenated
    input_lengths: torch.Tensor  # CTC time steps of each line's real width
    target_lengths: torch.Tensor
    earlier: torch.Tensor  # [N] bool: the lines drawn as earlier weights' were (``Earlier``), the others in ``fonts``

    def mask_widths(self) -> torch.Tensor | None:
        """``widths`` for the network to mask the padding with; None where the lines are all one width and need no
        mask (the tutorial's fixed batches are all 100 wide)."""
        return None if bool((self.widths == self.widths[0]).all()) else self.widths


def collate(samples: list[Sample], earlier: list[bool] | None = None) -> Batch:
    """One batch of ``samples``; ``earlier`` marks those drawn as earlier lines (default: none)."""
    width = max(s.image.shape[1] for s in samples)
    images = torch.cat([pad_to_width(torch.from_numpy(normalize(s.image))[None, None], width) for s in samples])
    labels = [encode(s.text) for s in samples]
    return Batch(
        images=images,
        widths=torch.tensor([s.image.shape[1] for s in samples], dtype=torch.long),
        targets=torch.tensor([c for label in labels for c in label], dtype=torch.long),
        input_lengths=torch.tensor([output_length(s.image.shape[1]) for s in samples], dtype=torch.long),
        target_lengths=torch.tensor([len(label) for label in labels], dtype=torch.long),
        earlier=torch.tensor(earlier if earlier is not None else [False] * len(samples), dtype=torch.bool),
    )


EARLIER_SHARES = ("look_alikes", "random_characters", "long_fixed", "capitals")
"""The shares of ``Variety`` a run's earlier lines take from its own: they change which characters a line holds, not
how its face draws them, and the earlier faces confuse the same characters and lose the same squeezed lines."""


@dataclass(frozen=True)
class Earlier:
    """The lines earlier weights were trained on, mixed into a run on other faces so that it keeps reading
    them: a ``share`` of lines drawn in the ``fonts`` set with the default variety (but for the run's
    ``EARLIER_SHARES``)."""

    fonts: str = "training"
    share: float = 0.0
    variable_share: float | None = None
    """The share among variable-width lines (``None``: ``share``), so that a run can keep the earlier faces at the
    tutorial's fixed width while it spends its variable-width lines on the new ones."""

    def share_at(self, width: int | None) -> float:
        """The share among lines of ``width`` (``None``: variable width)."""
        return self.share if width is not None or self.variable_share is None else self.variable_share

    @property
    def drawn(self) -> bool:
        """Whether any line is drawn as an earlier one."""
        return self.share > 0 or (self.variable_share or 0) > 0


class SyntheticBatches(IterableDataset):
    """Endless batches; each worker draws from its own seed. ``buckets`` batches of variable-width
    lines are drawn at once and cut by width, so that padding stays small."""

    def __init__(self, seed: int, batch_size: int, fixed_fraction: float, buckets: int = VARIABLE_BATCHES_A_DRAW,
                 fonts: str = "training", variety: Variety = Variety(), earlier: Earlier = Earlier()) -> None:
        self.seed, self.batch_size, self.fixed_fraction, self.buckets = seed, batch_size, fixed_fraction, buckets
        self.fonts, self.variety, self.earlier = fonts, variety, earlier

    def _samples(self, synths: list[TextLineSynth], rng: random.Random, count: int,
                 width: int | None) -> list[tuple[Sample, bool]]:
        """``count`` lines, each with whether it was drawn as an earlier line."""
        samples, share = [], self.earlier.share_at(width)
        while len(samples) < count:
            # No draw at a share of 0, so that such a run draws the lines it drew before earlier lines existed.
            earlier = share > 0 and rng.random() < share
            synth = synths[1] if earlier else synths[0]
            sample = synth.sample(width)
            if ctc_feasible(sample.text, output_length(sample.image.shape[1])):
                samples.append((sample, earlier))
        return samples

    def _synths(self, seed: int) -> list[TextLineSynth]:
        """The run's lines, then the earlier ones if any, drawn as before but for the run's ``EARLIER_SHARES``."""
        synths = [TextLineSynth(seed, self.fonts, variety=self.variety)]
        if self.earlier.drawn:
            earlier = Variety(**{share: getattr(self.variety, share) for share in EARLIER_SHARES})
            synths.append(TextLineSynth(seed + EARLIER_SEED_OFFSET, self.earlier.fonts, variety=earlier))
        return synths

    def __iter__(self) -> Iterator[Batch]:
        worker = get_worker_info()
        seed = self.seed * 1009 + (worker.id if worker else 0)
        rng = random.Random(seed)
        synths = self._synths(seed)
        while True:
            if rng.random() < self.fixed_fraction:
                yield _collate_drawn(self._samples(synths, rng, self.batch_size, TUTORIAL_WIDTH))
                continue
            lines = self._samples(synths, rng, self.batch_size * self.buckets, None)
            lines = sorted(lines, key=lambda drawn: drawn[0].image.shape[1])
            chunks = [lines[i : i + self.batch_size] for i in range(0, len(lines), self.batch_size)]
            rng.shuffle(chunks)
            yield from map(_collate_drawn, chunks)


def _collate_drawn(drawn: list[tuple[Sample, bool]]) -> Batch:
    return collate([sample for sample, _ in drawn], [earlier for _, earlier in drawn])


def half_fixed(synth: TextLineSynth, count: int) -> list[Sample]:
    """``count`` lines of ``synth``, every other one at the tutorial's fixed 32x100, the rest at variable width."""
    return [synth.sample(TUTORIAL_WIDTH if i % 2 == 0 else None) for i in range(count)]


def validation_set(seed: int, count: int, fonts: str = "training") -> list[Sample]:
    """Half fixed 32x100 lines, half variable width, from a seed training never uses."""
    return half_fixed(TextLineSynth(seed + VALIDATION_SEED_OFFSET, fonts), count)


def held_out_set(count: int) -> list[Sample]:
    """Lines in the held-out faces, half fixed 32x100 and half variable width, a quarter light on dark: the
    progress bar's figure of how training reads faces it never sees (``scripts/evaluate.py`` has the full sets)."""
    return half_fixed(TextLineSynth(HELD_OUT_SEED, "held-out"), count) if count else []


def save_atomically(state: dict, path: Path) -> None:
    """Write ``path`` whole or not at all: a run may be cut off at any moment, the checkpoint with it."""
    partial = path.with_suffix(".partial")
    torch.save(state, partial)
    partial.replace(path)


def validate(model: STRModel, samples: list[Sample], device: torch.device) -> Scores:
    modes = {module: module.training for module in model.modules()}  # frozen batch norm stays frozen
    readings = Recognizer(TorchEngine(model, device, channels_last=True),
                          max_lines=256).read([s.image for s in samples])
    for module, training in modes.items():
        module.train(training)
    return score([r.text for r in readings], [s.text for s in samples])


def line_log_probs(model: STRModel, batch: Batch, device: torch.device, bf16: bool = False) -> torch.Tensor:
    """The network's per-frame log-probabilities of the batch's lines, ``[N, T, C]`` in f32; ``bf16``: the network
    computes under bf16 autocast."""
    images = batch.images.to(device, non_blocking=True)
    widths = batch.mask_widths()
    widths = None if widths is None else widths.to(device, non_blocking=True)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
        logits = model(images.contiguous(memory_format=torch.channels_last), widths)
    return logits.float().log_softmax(2)


def line_ctc_losses(log_probs: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Each line's CTC loss, -log p of its text, ``[N]``, from ``line_log_probs``' ``[N, T, C]`` (in f32 whatever the
    network computed in)."""
    by_frame = log_probs.permute(1, 0, 2)  # [T, N, C], as ctc_loss wants
    return F.ctc_loss(by_frame, batch.targets, batch.input_lengths, batch.target_lengths, blank=0, reduction="none",
                      zero_infinity=True)


def weighed_ctc_loss(per_line: torch.Tensor, batch: Batch, hard_lines: float = 0.0,
                     counted: torch.Tensor | None = None) -> torch.Tensor:
    """The batch's CTC loss from ``line_ctc_losses``: each line's per character, averaged over the lines (as
    ``F.ctc_loss``'s mean). With ``hard_lines`` (gamma) above 0 a line counts in proportion to (1 - p)**gamma, p the
    probability the network gives its text, the weights averaging 1 over the batch: lines it reads surely count
    less, as in focal loss. ``counted`` (``[N]`` bool) leaves the other lines out; none counted, the loss is 0."""
    per_character = per_line / batch.target_lengths.to(per_line.device).clamp(min=1)
    if not hard_lines and counted is None:
        return per_character.mean()
    weights = torch.ones_like(per_line) if counted is None else counted.to(per_line.dtype)
    if hard_lines:
        weights = weights * (-torch.expm1(-per_line.detach())).pow(hard_lines)  # 1 - p, exact where p is near 1
    return (weights / weights.mean().clamp(min=1e-6) * per_character).mean()


def ctc_loss(log_probs: torch.Tensor, batch: Batch, hard_lines: float = 0.0) -> torch.Tensor:
    """The batch's CTC loss from ``line_log_probs``' ``[N, T, C]``, its lines weighed as ``weighed_ctc_loss`` says."""
    return weighed_ctc_loss(line_ctc_losses(log_probs, batch), batch, hard_lines)


def own_frames(batch: Batch, frames: int, device: torch.device) -> torch.Tensor:
    """``[N, frames]`` bool: which of each line's frames are its own, not its padding's."""
    return torch.arange(frames, device=device)[None, :] < batch.input_lengths.to(device)[:, None]


def line_confidences(log_probs: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Each line's confidence, ``[N]``, as ``str_ocr.text.greedy_decode`` gives it from its own frames of
    ``line_log_probs``' ``[N, T, C]``: the product of each frame's likeliest class's probability."""
    best = log_probs.max(dim=2).values
    return (best * own_frames(batch, best.shape[1], best.device)).sum(dim=1).exp()


def kept_close_loss(log_probs: torch.Tensor, kept_log_probs: torch.Tensor, batch: Batch) -> torch.Tensor:
    """How far the network's reading of the earlier lines has moved from the kept weights': KL(kept || network) of
    each frame's distribution, ``log_probs`` and ``kept_log_probs`` both ``[N, T, C]``, summed over each line's own
    frames and divided by its label's length as CTC's mean is, then averaged over the batch's earlier lines (so its
    weight beside CTC does not depend on their share; 0 where there are none). A scalar."""
    own = own_frames(batch, log_probs.shape[1], log_probs.device)
    divergence = (kept_log_probs.exp() * (kept_log_probs - log_probs)).sum(2)  # [N, T]
    per_line = (divergence * own).sum(1) / batch.target_lengths.to(log_probs.device).clamp(min=1)
    earlier = batch.earlier.to(log_probs.device, dtype=per_line.dtype)
    return (per_line * earlier).sum() / earlier.sum().clamp(min=1)  # no boolean indexing: no wait for the GPU


@dataclass(frozen=True)
class KeptClose:
    """Weights whose reading of the earlier lines a run keeps close to (``--keep-close-to``), and how hard: the
    divergence of ``kept_close_loss`` counts ``weight`` times beside CTC."""

    model: STRModel
    weight: float


@dataclass(frozen=True)
class ReadAgain:
    """Weights whose unsure lines, those they read less surely than ``below``, are the only lines a run counts
    (``--read-again-by``): as ``ocr`` reads again, so that second weights learn the lines they are served."""

    model: STRModel
    below: float


def uses_bf16(precision: str, device: torch.device) -> bool:
    """Whether ``--precision`` (auto, f32 or bf16) computes in bf16 on ``device``: auto where bf16 is native."""
    if precision != "auto":
        return precision == "bf16"
    return torch.cuda.is_bf16_supported() if device.type == "cuda" else torch_native_bf16()


def torch_native_bf16() -> bool:
    """Whether this x86 CPU computes bf16 natively (AVX512_BF16 or AMX-BF16), as torch sees it; False elsewhere and
    with a torch too old to say (before ``torch.cpu.get_capabilities``). Not ``cpu_features.native_bf16``, which asks
    OpenVINO for its engine: the trainer does not otherwise load OpenVINO, whose runtime aborts under a preloaded
    jemalloc."""
    capabilities = getattr(torch.cpu, "get_capabilities", dict)()
    return bool(capabilities.get("avx512_bf16") or capabilities.get("amx_bf16"))


def learning_rate(base: float, progress: float, warmup: float = 0.03) -> float:
    if progress < warmup:
        return base * progress / warmup
    return 0.5 * base * (1 + math.cos(math.pi * min(1.0, (progress - warmup) / (1 - warmup))))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for add_arguments in (_add_network_arguments, _add_line_arguments, _add_optimisation_arguments,
                          _add_run_arguments):
        add_arguments(parser)
    args = parser.parse_args(argv)
    if problem := _argument_problem(args):
        parser.error(problem)
    if args.read_again_by is not None and args.read_again_below is None:
        args.read_again_below = READ_AGAIN_BELOW
    return args


def _add_network_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("network")
    group.add_argument("--output-channels", type=int, default=64,
                       help="the network's width, the channels of its last feature layer (str_ocr.model.STRModel); "
                            "--init's and --keep-close-to's weights have it too (default: %(default)s; the published "
                            "checkpoint's is 512)")
    group.add_argument("--init", type=Path, default=None,
                       help="start from these weights (fine-tuning), not from scratch")
    group.add_argument("--context-layers", type=int, default=None,
                       help="self-attention layers over the frames (str_ocr.model.FrameContext); layers --init "
                            "lacks start as the identity (default: as many as --init has, else 0)")
    group.add_argument("--frozen-batch-norm", action="store_true",
                       help="keep batch norm on its running statistics (as served) instead of each batch's: "
                            "mixed batches then do not move the statistics the earlier faces are read with")


_SHARES = {"light_on_dark": "light text on a dark ground", "stretch": "stretched or squeezed lines",
           "heavy": "lines drawn heavier than their face", "basic_layout": "lines laid out without shaping",
           "crops": "lines drawn as a detector's crops (str_ocr.crop_effects)",
           "balanced_kinds": "lines whose face is drawn kind first, every kind equally often",
           "old_style_figures": "lines drawn with old-style figures where the face has them",
           "warped_glyphs": "lines whose glyphs are bent by a smooth random displacement",
           "thin": f"lines in a font size of {THIN_MIN_SIZE} or more, not drawn heavier, whose strokes are thinned",
           "old_style_faces": "lines drawn in one of the set's faces with old-style figures, asking for them (onum); "
                              "the set must have some",
           "look_alikes": "random-character lines drawn from the characters most often read one for another "
                          "(0 and o, 1 and i or l, ...)",
           "random_characters": "lines of random characters in place of the other kinds of text",
           "long_fixed": f"fixed 32x100 lines of {LONG_FIXED_MIN_CHARS} characters or more, the earlier faces' too",
           "capitals": "lines drawn in capitals whatever case the others draw, the earlier faces' too"}
"""What each of ``Variety``'s shares of lines is, for its flag's help."""


def _add_line_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("lines drawn")
    group.add_argument("--fonts", default="training", choices=list(FONT_SETS), help="font set (default: %(default)s)")
    fixed = 0.4
    batches_fixed = fixed / (fixed + VARIABLE_BATCHES_A_DRAW * (1 - fixed))
    group.add_argument("--fixed-fraction", type=float, default=fixed,
                       help=f"chance that a draw of lines is one batch at the tutorial's fixed 32x100 rather than "
                            f"{VARIABLE_BATCHES_A_DRAW} batches of variable width (default: %(default)s, one batch in "
                            f"{1 / batches_fixed:.0f} fixed)")
    for share in fields(Variety):
        group.add_argument(f"--{share.name.replace('_', '-')}", type=float, default=share.default,
                           help=f"share of {_SHARES[share.name]} (default: %(default)s)")
    group.add_argument("--earlier-fonts", default="training", choices=list(FONT_SETS),
                       help="the faces earlier weights were trained on (default: %(default)s)")
    group.add_argument("--earlier-share", type=float, default=0.0,
                       help="share of lines drawn as earlier weights' were, so that they are not forgotten (default: "
                            "%(default)s)")
    group.add_argument("--earlier-share-variable", type=float, default=None,
                       help="that share among the variable-width lines alone (default: --earlier-share)")


def _add_optimisation_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("optimisation")
    group.add_argument("--steps", type=int, default=30000,
                       help="the run's length in steps of --batch-size lines, resumed ones included, over which the "
                            "learning rate falls; --time-budget may end it sooner (default: %(default)s)")
    group.add_argument("--batch-size", type=int, default=128, help="lines a step (default: %(default)s)")
    group.add_argument("--lr", type=float, default=2e-3,
                       help="peak learning rate of AdamW, reached after a warm-up and then lowered along a cosine "
                            "to 0 at the run's end (default: %(default)s)")
    group.add_argument("--context-lr", type=float, default=None,
                       help="the context layers' peak learning rate (default: --lr)")
    group.add_argument("--weight-decay", type=float, default=1e-4, help="AdamW's weight decay (default: %(default)s)")
    group.add_argument("--average-decay", type=float, default=0.0,
                       help="keep a moving average of the weights, each step moving it 1 - this of the way to them "
                            "(e.g. 0.999), and validate and write it as the run's weights; it starts at the initial "
                            "weights, which keep decay**steps of it; 0: none (default)")
    group.add_argument("--keep-close-to", type=Path, default=None,
                       help="weights (of --output-channels) whose reading of the earlier lines the run keeps close "
                            "to: a KL divergence from their per-frame outputs beside CTC, so that new faces are "
                            "learnt without losing how these read the old. It compares frames: give weights that "
                            "fire on the same frames as the run's, such as its --init")
    group.add_argument("--keep-weight", type=float, default=1.0,
                       help="how much that divergence, per earlier line, counts beside CTC per line (default: "
                            "%(default)s)")
    group.add_argument("--hard-lines", type=float, default=0.0, metavar="GAMMA",
                       help="weigh each line's CTC loss by (1 - p)**GAMMA, p the probability the network gives its "
                            "text, so that lines it reads surely count less (focal loss; e.g. 1); 0: every line "
                            "alike (default)")
    group.add_argument("--read-again-by", type=Path, default=None, metavar="CHECKPOINT",
                       help="count only the lines these weights read less surely than --read-again-below, as ocr "
                            "reads those again: give the first weights to train second weights on the lines they "
                            "are served (default: every line counts)")
    group.add_argument("--read-again-below", type=float, default=None, metavar="C",
                       help="with --read-again-by, the confidence below which a line counts (default: "
                            f"{READ_AGAIN_BELOW}, ocr's)")


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("run")
    group.add_argument("--seed", type=int, default=0,
                       help="seeds the lines drawn (the validation lines too) and the network's initial weights "
                            "(default: %(default)s)")
    group.add_argument("--time-budget", type=float, default=None,
                       help="minutes; training ends by then (default: none, --steps alone)")
    group.add_argument("--run-dir", type=Path, default=Path("runs/str"),
                       help="where last.pt, model.pth, figures.jsonl and figures.png go; a last.pt there is resumed "
                            "(default: %(default)s)")
    group.add_argument("--output", type=Path, default=None,
                       help="also write the final weights here (plain state_dict)")
    group.add_argument("--checkpoint-minutes", type=float, default=5.0,
                       help="save last.pt at least this often (default: %(default)s)")
    group.add_argument("--val-every", type=int, default=1000,
                       help="steps between validations (default: %(default)s)")
    group.add_argument("--val-size", type=int, default=512,
                       help="validation lines (in the --fonts faces, never trained on) read at each validation and "
                            "at the end (default: %(default)s)")
    group.add_argument("--held-out-size", type=int, default=512,
                       help="held-out lines read at each validation (default: %(default)s)")
    group.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, ... (default: %(default)s)")
    group.add_argument("--precision", default="auto", choices=["auto", "f32", "bf16"],
                       help="the network's arithmetic: bf16 autocast (weights and loss stay f32) or f32; auto: bf16 "
                            "on a GPU and on a CPU that computes bf16 natively, f32 elsewhere (default: %(default)s)")
    group.add_argument("--workers", type=int, default=None, help="data processes (default: the cores left over)")
    group.add_argument("--threads", type=int, default=None,
                       help="compute threads on the CPU (default: every core, the data processes' too)")


def _argument_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with a combination of flags, said so that the user knows what to change; None if nothing."""
    shares = ["fixed_fraction", *(share.name for share in fields(Variety)), "earlier_share", "earlier_share_variable"]
    for name in shares:
        if not 0 <= (getattr(args, name) or 0) <= 1:
            return f"--{name.replace('_', '-')} must be in [0, 1], got {getattr(args, name)}"
    if args.keep_close_to is not None and not earlier_lines(args).drawn:
        return ("--keep-close-to needs --earlier-share or --earlier-share-variable above 0 (e.g. 0.5): the "
                "divergence is taken on the earlier lines only")
    if args.keep_weight <= 0:
        return (f"--keep-weight must be above 0, got {args.keep_weight}: to train without the divergence, leave out "
                "--keep-close-to")
    if args.hard_lines < 0:
        return f"--hard-lines must be 0 or more, got {args.hard_lines}: 0 weighs every line alike"
    if args.read_again_below is not None and args.read_again_by is None:
        return "--read-again-below sets which lines --read-again-by's weights read again: give --read-again-by too"
    if args.read_again_below is not None and not 0 < args.read_again_below <= 1:
        return f"--read-again-below must be in (0, 1], got {args.read_again_below}: a line's confidence is in [0, 1]"
    if args.context_layers is not None and args.context_layers < 0:
        return f"--context-layers must be 0 or more, got {args.context_layers}"
    if args.context_lr is not None and args.context_layers == 0:
        return "--context-lr sets the context layers' learning rate: give --context-layers 1 or more"
    if not 0 <= args.average_decay < 1:
        return (f"--average-decay must be in [0, 1), got {args.average_decay}: 0.999 averages about the last "
                "thousand steps, 0 turns the average off")
    return None


def earlier_lines(args: argparse.Namespace) -> Earlier:
    """The earlier lines the run's flags ask for."""
    return Earlier(args.earlier_fonts, args.earlier_share, args.earlier_share_variable)


def plot_figures(log_path: Path, picture: Path) -> None:
    """The logged figures over the run's minutes: validation and held-out word accuracy, and the loss."""
    plt = pyplot()

    rows = [json.loads(line) for line in log_path.read_text().splitlines()]
    minutes = [row["minutes"] for row in rows]
    figure, (accuracy, loss) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label in (("val_acc", "validation (training faces)"), ("held_out", "held-out faces")):
        accuracy.plot(minutes, [row.get(key) for row in rows], marker="o", label=label)
    accuracy.set(xlabel="training minutes", ylabel="word accuracy", title="Lines read exactly")
    accuracy.legend()
    loss.plot(minutes, [row["loss"] for row in rows], marker="o", color="grey")
    loss.set(xlabel="training minutes", ylabel="CTC loss (mean of the last 100 steps)", title="Loss")
    figure.tight_layout()
    figure.savefig(picture, dpi=100)
    plt.close(figure)


Tensors = dict[str, torch.Tensor]


def _resume(args: argparse.Namespace, model: STRModel, optimizer: torch.optim.Optimizer,
            device: torch.device) -> tuple[int, float, Tensors | None]:
    """The step, training seconds and averaged weights to go on from: ``--run-dir``'s checkpoint, else ``--init``'s
    weights."""
    state_path = args.run_dir / "last.pt"
    if not state_path.exists():
        if args.init:
            init = load_model(args.init, args.output_channels)
            if init.context_layers > model.context_layers:
                raise SystemExit(f"train: {args.init} has {init.context_layers} context layers: pass --context-layers "
                                 f"{init.context_layers} or more")
            model.load_state_dict(init.state_dict(), strict=False)  # only the layers it lacks are left as they are
        return 0, 0.0, None
    state = torch.load(state_path, map_location=device, weights_only=False)
    decay = state["args"].get("average_decay", 0.0)
    if decay and decay != args.average_decay:  # going on without it would overwrite the average in last.pt
        raise SystemExit(f"train: {state_path} averages its weights with --average-decay {decay}: resume with that, "
                         "or start a new --run-dir")
    trained = Objective.of(state["args"])
    if trained != Objective.of(vars(args)):  # the loss must not change halfway through the schedule
        raise SystemExit(f"train: {state_path} was trained with {trained.flags()}: resume with those, or start a "
                         "new --run-dir")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    print(f"resuming {state_path} at step {state['step']}", file=sys.stderr)
    if args.average_decay and not decay:
        print(f"averaging the weights from step {state['step']} on", file=sys.stderr)
    return state["step"], state["elapsed"], state.get("average")


class Objective(NamedTuple):
    """What a run's loss is made of, which must not change when it resumes: the kept weights and their weight beside
    CTC (``--keep-close-to``), how lines are weighed (``--hard-lines``) and which count (``--read-again-by``)."""

    kept: str | None
    kept_weight: float | None
    hard_lines: float
    read_again_by: str | None
    read_again_below: float | None

    @classmethod
    def of(cls, args: dict) -> Objective:
        """As a run's arguments give it (none and 0 for flags older than the run)."""
        kept, read_again_by = args.get("keep_close_to"), args.get("read_again_by")
        return cls(str(kept) if kept is not None else None,
                   float(args["keep_weight"]) if kept is not None else None,
                   float(args.get("hard_lines", 0.0)),
                   str(read_again_by) if read_again_by is not None else None,
                   float(args["read_again_below"]) if read_again_by is not None else None)

    def flags(self) -> str:
        """The flags that give it, for a message."""
        kept = f"--keep-close-to {self.kept} --keep-weight {self.kept_weight:g}" if self.kept else "no --keep-close-to"
        counted = (f"--read-again-by {self.read_again_by} --read-again-below {self.read_again_below:g}"
                   if self.read_again_by else "no --read-again-by")
        return f"{kept}, {counted} and --hard-lines {self.hard_lines:g}"


def _moving_average(decay: float) -> Callable[[list[torch.Tensor], list[torch.Tensor], torch.Tensor], None]:
    """AveragedModel's update: floats move ``1 - decay`` of the way to the model's; counters (batch norm's
    num_batches_tracked) are copied, since an average rounded back to an integer would stay where it starts."""
    def update(averaged: list[torch.Tensor], current: list[torch.Tensor], _count: torch.Tensor) -> None:
        for average, value in zip(averaged, current):
            if average.is_floating_point():
                average.lerp_(value, 1 - decay)
            else:
                average.copy_(value)
    return update


def _weight_average(model: STRModel, decay: float, state: Tensors | None) -> AveragedModel | None:
    """The exponential moving average of ``model``'s weights and batch-norm statistics, from ``state`` (a resumed
    run's) or from the weights as they are now; None when ``decay`` is 0."""
    if decay == 0:
        return None
    average = AveragedModel(model, multi_avg_fn=_moving_average(decay), use_buffers=True)
    if state is not None:
        average.load_state_dict(state)
    else:
        average.update_parameters(model)  # the first update copies: the average starts at the initial weights
    return average


def _step(model: STRModel, optimizer: torch.optim.Optimizer, average: AveragedModel | None, batch: Batch,
          device: torch.device, bf16: bool, close: KeptClose | None = None,
          hard_lines: float = 0.0, read_again: ReadAgain | None = None) -> tuple[float, float]:
    """One optimiser step on ``batch`` (its lines weighed as ``ctc_loss``'s ``hard_lines`` says, only those the
    weights of ``read_again`` read again counted), the average following it; the batch's CTC loss, every line alike
    whatever the step weighed them by, so that runs compare, and its divergence from the kept weights of ``close``
    (0 without them)."""
    log_probs = line_log_probs(model, batch, device, bf16)
    per_line = line_ctc_losses(log_probs, batch)
    counted = None
    if read_again is not None:
        with torch.no_grad():  # f32, as an f32 engine serves them: bf16 moves confidences near ``below`` across it
            counted = line_confidences(line_log_probs(read_again.model, batch, device), batch) < read_again.below
    ctc = weighed_ctc_loss(per_line, batch, hard_lines, counted)
    divergence, weight = torch.zeros((), device=device), 0.0
    if close is not None and bool(batch.earlier.any()):
        with torch.no_grad():
            kept_log_probs = line_log_probs(close.model, batch, device, bf16)
        divergence, weight = kept_close_loss(log_probs, kept_log_probs, batch), close.weight
    optimizer.zero_grad(set_to_none=True)
    (ctc + weight * divergence).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    optimizer.step()
    if average is not None:
        average.update_parameters(model)
    plain = weighed_ctc_loss(per_line.detach(), batch) if hard_lines or counted is not None else ctc
    return plain.item(), divergence.item()


def _context_layers(args: argparse.Namespace) -> int:
    """The run's context layers: those of the run being resumed, else ``--context-layers``, else ``--init``'s."""
    state_path = args.run_dir / "last.pt"
    if state_path.exists():
        resumed = context_layers(torch.load(state_path, map_location="cpu", weights_only=False)["model"])
        if args.context_layers not in (None, resumed):
            raise SystemExit(f"train: {state_path} has {resumed} context layers: resume with --context-layers "
                             f"{resumed}, or start a new --run-dir")
        return resumed
    if args.context_layers is not None:
        return args.context_layers
    return load_model(args.init, args.output_channels).context_layers if args.init else 0


def _parameter_groups(model: STRModel, args: argparse.Namespace) -> tuple[list[dict], list[float]]:
    """The optimiser's parameter groups, the context layers' apart, and each group's peak learning rate
    (``--lr``, ``--context-lr``)."""
    if model.SequenceModeling is None:
        return [{"params": list(model.parameters())}], [args.lr]
    context = list(model.SequenceModeling.parameters())
    context_ids = {id(p) for p in context}
    rest = [p for p in model.parameters() if id(p) not in context_ids]
    peak = args.context_lr if args.context_lr is not None else args.lr
    return [{"params": rest}, {"params": context}], [args.lr, peak]


def _train_mode(model: STRModel, frozen_batch_norm: bool) -> None:
    model.train()
    if frozen_batch_norm:
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.eval()


def _kept_close(args: argparse.Namespace, device: torch.device) -> KeptClose | None:
    if args.keep_close_to is None:
        return None
    model = load_model(args.keep_close_to, args.output_channels).to(device, memory_format=torch.channels_last)
    # Computed as the run's network is (batch norm on each batch's own statistics, or on the running ones with
    # --frozen-batch-norm), so that equal weights diverge by nothing; momentum 0 leaves the kept weights' running
    # statistics as they are.
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.momentum = 0.0
    _train_mode(model.requires_grad_(False), args.frozen_batch_norm)
    return KeptClose(model, args.keep_weight)


def _read_again(args: argparse.Namespace, device: torch.device) -> ReadAgain | None:
    """``--read-again-by``'s weights, of their own width, read as served: batch norm on its running statistics."""
    if args.read_again_by is None:
        return None
    model = load_model(args.read_again_by, checkpoint_width(args.read_again_by))
    return ReadAgain(model.to(device, memory_format=torch.channels_last).eval().requires_grad_(False),
                     args.read_again_below)


def _figures(model: STRModel, validation: list[Sample], held_out: list[Sample],
             device: torch.device) -> dict[str, float]:
    figures = {"val_acc": validate(model, validation, device).word_accuracy}
    if held_out:
        figures["held_out"] = validate(model, held_out, device).word_accuracy
    return figures


def _device(name: str) -> torch.device:
    """``--device``: auto is the GPU where there is one, else the CPU."""
    if name != "auto":
        return torch.device(name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _check_faces(args: argparse.Namespace) -> None:
    """Stop now, not in a data process, when the faces the run draws are missing; warn when lines go unshaped."""
    font_files(args.fonts)
    if args.old_style_faces > 0:
        old_style_faces(font_files(args.fonts))  # or when none has old-style figures to draw
    if earlier_lines(args).drawn:
        font_files(args.earlier_fonts)
    if warning := unshaped_warning():
        print(f"train: {warning}", file=sys.stderr)


def allocator_warning(device: torch.device) -> str | None:
    """What to tell a run on the CPU whose allocator hands out fresh memory for each step's activations."""
    if device.type != "cpu" or keeps_freed_memory():
        return None
    return ("on a CPU the trainer's heap grows with every step unless jemalloc keeps what it frees for reuse: run it "
            "as make train does, under LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 "
            "(docs/model.md, Weights)")


def _batches(args: argparse.Namespace, step: int, device: torch.device) -> DataLoader:
    """The run's batches from ``step`` on, drawn in ``--workers`` data processes; on the CPU it also sets the
    process's compute threads (``--threads``), which share the cores with them."""
    cores = torch.get_num_threads() or 2
    workers = args.workers if args.workers is not None else max(1, cores - 1)
    if device.type == "cpu":
        # Drawing a batch takes a data process a fifth of the time the step on it takes one core, and a process
        # whose queue is full waits: compute sharing its core runs faster than leaving that core to it.
        torch.set_num_threads(args.threads or cores)
    variety = Variety(**{option.name: getattr(args, option.name) for option in fields(Variety)})
    batches = SyntheticBatches(args.seed + step, args.batch_size, args.fixed_fraction, fonts=args.fonts,
                               variety=variety, earlier=earlier_lines(args))
    return DataLoader(batches, batch_size=None, num_workers=workers, pin_memory=device.type == "cuda",
                      persistent_workers=workers > 0, prefetch_factor=4 if workers else None,
                      worker_init_fn=purge_freed_memory)


@dataclass
class _Run:
    """A run as it trains: the network, its optimiser and average and the steps and seconds done (what ``last.pt``
    holds), how a step is taken, and this process's losses."""

    args: argparse.Namespace
    model: STRModel
    optimizer: torch.optim.Optimizer
    peak_lrs: list[float]
    average: AveragedModel | None
    kept_close: KeptClose | None
    read_again: ReadAgain | None
    device: torch.device
    bf16: bool
    step: int
    elapsed: float
    losses: list[float] = field(default_factory=list)
    divergences: list[float] = field(default_factory=list)

    @property
    def validated(self) -> STRModel:
        """The weights validated and written: the average where there is one."""
        return self.average.module if self.average is not None else self.model

    def take_step(self, batch: Batch, progress: float) -> None:
        """One step on ``batch`` at the learning rates of ``progress`` (0 to 1) through the schedule."""
        for group, peak_lr in zip(self.optimizer.param_groups, self.peak_lrs):
            group["lr"] = learning_rate(peak_lr, progress)
        loss, divergence = _step(self.model, self.optimizer, self.average, batch, self.device, self.bf16,
                                 self.kept_close, self.args.hard_lines, self.read_again)
        self.losses.append(loss)
        self.divergences.append(divergence)
        self.step += 1

    def checkpoint(self) -> None:
        save_atomically({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                         "step": self.step, "elapsed": self.elapsed, "args": vars(self.args),
                         "average": self.average.state_dict() if self.average is not None else None},
                        self.args.run_dir / "last.pt")


def _start(args: argparse.Namespace, device: torch.device) -> _Run:
    """The run ``args`` ask for, resumed from ``--run-dir``'s ``last.pt`` where there is one."""
    kept_close = _kept_close(args, device)  # before anything is written: a wrong --keep-close-to stops the run here
    read_again = _read_again(args, device)
    model = STRModel(output_channels=args.output_channels, context_layers=_context_layers(args))
    model = model.to(device, memory_format=torch.channels_last)
    groups, peak_lrs = _parameter_groups(model, args)
    optimizer = torch.optim.AdamW(groups, lr=args.lr, weight_decay=args.weight_decay)
    args.run_dir.mkdir(parents=True, exist_ok=True)
    step, elapsed, average_state = _resume(args, model, optimizer, device)
    average = _weight_average(model, args.average_decay, average_state)
    return _Run(args, model, optimizer, peak_lrs, average, kept_close, read_again, device,
                uses_bf16(args.precision, device), step, elapsed)


def _log_validation(run: _Run, validation: list[Sample], held_out: list[Sample]) -> dict[str, str]:
    """Validate ``run.validated``, append the figures to ``figures.jsonl`` and draw them; the figures as shown."""
    figures = _figures(run.validated, validation, held_out, run.device)
    shown = {name: f"{value:.3f}" for name, value in figures.items()}
    if run.kept_close is not None:
        figures["kl"] = float(np.mean(run.divergences[-100:]))
    log_path = run.args.run_dir / "figures.jsonl"
    with log_path.open("a") as log:
        log.write(json.dumps({"step": run.step, "minutes": run.elapsed / 60,
                              "loss": float(np.mean(run.losses[-100:])), **figures}) + "\n")
    plot_figures(log_path, run.args.run_dir / "figures.png")
    return shown


def _train(run: _Run, data: DataLoader, validation: list[Sample], held_out: list[Sample]) -> None:
    """Step through ``data`` until ``--steps`` or ``--time-budget`` is spent, validating every ``--val-every``
    steps and checkpointing then and every ``--checkpoint-minutes``."""
    args = run.args
    budget = args.time_budget * 60 if args.time_budget else math.inf
    bar = tqdm(total=args.steps, initial=run.step, desc="train", unit="step", dynamic_ncols=True)
    metrics: dict[str, str] = {}
    last_tick = saved_at = time.monotonic()
    for batch in data:
        now = time.monotonic()
        run.elapsed += min(now - last_tick, MAX_STEP_SECONDS)
        last_tick = now
        progress = max(run.step / args.steps, run.elapsed / budget)
        if progress >= 1:
            break
        run.take_step(batch, progress)
        bar.update(1)
        if run.step % 20 == 0:
            kl_shown = {"kl": f"{np.mean(run.divergences[-20:]):.4f}"} if run.kept_close is not None else {}
            bar.set_postfix(loss=f"{np.mean(run.losses[-20:]):.3f}", **kl_shown,
                            lr=f"{run.optimizer.param_groups[0]['lr']:.1e}", **metrics)
        if run.step % args.val_every == 0:
            metrics = _log_validation(run, validation, held_out)
        if run.step % args.val_every == 0 or time.monotonic() - saved_at > args.checkpoint_minutes * 60:
            run.checkpoint()
            saved_at = time.monotonic()
    bar.close()


def _summary(run: _Run, final: Scores) -> dict[str, float]:
    """What ``main`` returns: the steps and minutes run, the first and last losses, the final validation."""
    losses = run.losses
    window = max(1, min(20, len(losses) // 4))  # CTC losses are noisy: compare means, not single steps
    return {"steps": run.step, "minutes": run.elapsed / 60,
            "first_loss": float(np.mean(losses[:window])) if losses else math.nan,
            "last_loss": float(np.mean(losses[-window:])) if losses else math.nan,
            "val_word_accuracy": final.word_accuracy, "val_cer": final.cer}


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = parse_args(argv)
    device = _device(args.device)
    torch.manual_seed(args.seed)
    _check_faces(args)
    if warning := allocator_warning(device):
        print(f"train: {warning}", file=sys.stderr)
    run = _start(args, device)
    data = _batches(args, run.step, device)
    validation = validation_set(args.seed, args.val_size, args.fonts)
    held_out = held_out_set(args.held_out_size)
    _train_mode(run.model, args.frozen_batch_norm)
    print(f"training on {device} in {'bf16' if run.bf16 else 'f32'}", file=sys.stderr)
    _train(run, data, validation, held_out)

    run.validated.eval()
    final = validate(run.validated, validation, device)
    run.checkpoint()
    for path in filter(None, [args.run_dir / "model.pth", args.output]):
        save_checkpoint(run.validated, path)
    print(f"trained {run.step} steps in {run.elapsed / 60:.1f} min on {device}: validation {final}", file=sys.stderr)
    return _summary(run, final)
