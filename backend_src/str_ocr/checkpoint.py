"""Loading and saving recogniser weights.

Two formats are read: the published ``None-ResNet-None-CTC.pth`` (saved from ``nn.DataParallel``,
so every key starts with ``module.``) and a plain ``state_dict`` as ``save_checkpoint`` writes it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import torch
from torch import nn

from .model import ContextLayer, STRModel

DATA_PARALLEL_PREFIX = "module."
_PREDICTION_WEIGHT = "Prediction.weight"

StateDict = Mapping[str, torch.Tensor]


class CheckpointMismatchError(ValueError):
    """The checkpoint's parameters do not fit the recogniser that was asked for."""


def strip_data_parallel_prefix(state: StateDict) -> dict[str, torch.Tensor]:
    """Keys as ``STRModel.state_dict()`` names them, whichever of the two formats ``state`` is in."""
    return {key.removeprefix(DATA_PARALLEL_PREFIX): value for key, value in state.items()}


def _state_width(state: StateDict) -> int | None:
    """The recogniser's width by its prediction layer's input, or None where the state has no such layer."""
    weight = state.get(_PREDICTION_WEIGHT)
    return weight.shape[1] if weight is not None and weight.ndim == 2 else None


def context_layers(state: StateDict) -> int:
    """How many ``FrameContext`` layers ``state`` (keys as ``STRModel.state_dict()`` names them) holds weights for:
    0 for None-ResNet-None-CTC."""
    prefix = "SequenceModeling.layers."
    indices = {int(key.removeprefix(prefix).split(".")[0]) for key in state if key.startswith(prefix)}
    if indices != set(range(len(indices))):
        raise CheckpointMismatchError(f"the context layers are numbered {sorted(indices)}: they must run from 0 "
                                      "without a gap")
    return len(indices)


def _mismatch_report(model: STRModel, state: StateDict) -> str | None:
    expected = model.state_dict()
    missing = sorted(expected.keys() - state.keys())
    unexpected = sorted(state.keys() - expected.keys())
    misshaped = sorted(
        f"{key}: checkpoint {list(state[key].shape)}, model {list(expected[key].shape)}"
        for key in expected.keys() & state.keys()
        if state[key].shape != expected[key].shape
    )
    if not (missing or unexpected or misshaped):
        return None
    lines = [f"the checkpoint does not fit STRModel(output_channels={model.output_channels}, "
             f"context_layers={model.context_layers}):"]
    for title, keys in (("missing keys", missing), ("unexpected keys", unexpected), ("mis-shaped keys", misshaped)):
        if keys:
            lines.append(f"  {len(keys)} {title}: " + ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else ""))
    width = _state_width(state)
    if width is not None and width != model.output_channels:
        lines.append(f"  its {_PREDICTION_WEIGHT} says output_channels={width}: pass that instead")
    return "\n".join(lines)


def _read_state(checkpoint: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    if not isinstance(state, Mapping) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointMismatchError(f"{os.fspath(checkpoint)} is not a state_dict (a mapping of names to tensors)")
    return strip_data_parallel_prefix(state)


def load_model(
    checkpoint: str | os.PathLike[str] | None = None,
    output_channels: int = 512,
    device: str | torch.device = "cpu",
) -> STRModel:
    """The recogniser in eval mode: ``[N, 1, 32, W] -> [N, W // 4 + 1, 37]``.

    ``checkpoint`` is a file in either format (see the module docstring); without one, the weights
    are PyTorch's default initialisation. The model has as many ``FrameContext`` layers as the file
    holds. Raises ``CheckpointMismatchError`` naming the missing, unexpected and mis-shaped keys when
    the file does not fit ``output_channels`` and its context layers.
    """
    state = _read_state(checkpoint) if checkpoint is not None else {}
    model = STRModel(output_channels=output_channels, context_layers=context_layers(state))
    if checkpoint is not None:
        report = _mismatch_report(model, state)
        if report:
            raise CheckpointMismatchError(f"{os.fspath(checkpoint)}: {report}")
        model.load_state_dict(state)
    return model.to(device).eval()


def checkpoint_width(checkpoint: str | os.PathLike[str]) -> int:
    """The ``output_channels`` of the recogniser whose weights ``checkpoint`` holds (its prediction layer's input)."""
    width = _state_width(_read_state(checkpoint))
    if width is None:
        raise CheckpointMismatchError(f"{os.fspath(checkpoint)} has no {_PREDICTION_WEIGHT} [classes, channels]")
    return width


def save_checkpoint(model: STRModel, path: str | os.PathLike[str]) -> None:
    """Write ``model``'s weights as a plain state_dict (no ``module.`` prefix), the format ``load_model`` reads."""
    state = {key: value.detach().cpu() for key, value in model.state_dict().items()}
    torch.save(state, path)


def blend_weights(first: STRModel, second: STRModel, share: float) -> STRModel:
    """``first``, moved in place ``share`` of the way to ``second`` parameter by parameter (batch-norm statistics
    too; counters are ``second``'s), and returned. Between weights and their fine-tuned descendant, a blend keeps
    much of what the fine-tune gained and forgets less of what the first read (Wortsman et al. 2022, "Robust
    fine-tuning of zero-shot models")."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must lie in [0, 1], got {share}")
    ours, theirs = first.state_dict(), second.state_dict()
    if report := _mismatch_report(first, theirs):
        raise CheckpointMismatchError(f"the second weights cannot be blended into the first: {report}")
    first.load_state_dict({name: (1 - share) * value + share * theirs[name] if value.is_floating_point()
                           else theirs[name] for name, value in ours.items()})
    return first


def _side_by_side(channels: int, copies: int) -> torch.Tensor:
    """Each of ``channels`` copied ``copies`` times, the copies next to each other."""
    return torch.arange(channels).repeat_interleave(copies)


def _copied_channels(channels: int, wide_channels: int, generator: torch.Generator) -> torch.Tensor:
    """For each of ``wide_channels``, the one of ``channels`` it copies: at an exact multiple, each channel that
    many times, side by side (as ``_widened_context_layer`` needs); otherwise each old channel, then random ones."""
    if wide_channels % channels == 0:
        return _side_by_side(channels, wide_channels // channels)
    extra = torch.randint(channels, (wide_channels - channels,), generator=generator)
    return torch.cat([torch.arange(channels), extra])


def _shared_among_copies(weight: torch.Tensor, copied: torch.Tensor) -> torch.Tensor:
    """``weight`` reading its dimension 1 from the channels ``copied`` copies: each channel's share divided."""
    copies = torch.bincount(copied, minlength=weight.shape[1]).to(weight.dtype)
    return (weight / copies.view((1, -1) + (1,) * (weight.ndim - 2)))[:, copied]


def _copied_weight(weight: torch.Tensor, inputs: torch.Tensor, outputs: torch.Tensor) -> torch.Tensor:
    """``weight`` [out, in, ...] reading its inputs' copies (``inputs``) and writing its outputs' (``outputs``)."""
    return _shared_among_copies(weight.detach(), inputs)[outputs]


def _noisy(weight: torch.Tensor, noise: float, generator: torch.Generator) -> torch.Tensor:
    return weight + noise * weight.std() * torch.randn(weight.shape, generator=generator)


def _widened_features(model: STRModel, copied: dict[int, torch.Tensor], noise: float,
                      generator: torch.Generator) -> dict[str, torch.Tensor]:
    """The ResNet's weights, each layer's channels copied as ``copied[its width]`` says."""
    state = {}
    for name, module in model.FeatureExtraction.named_modules(prefix="FeatureExtraction"):
        if isinstance(module, nn.Conv2d):
            reads_the_image = module is model.FeatureExtraction.ConvNet.conv0_1  # whose one channel is not copied
            inputs = torch.arange(module.in_channels) if reads_the_image else copied[module.in_channels]
            state[f"{name}.weight"] = _noisy(_copied_weight(module.weight, inputs, copied[module.out_channels]),
                                             noise, generator)
        elif isinstance(module, nn.BatchNorm2d):
            for key in ("weight", "bias", "running_mean", "running_var"):
                state[f"{name}.{key}"] = getattr(module, key).detach()[copied[module.num_features]]
            state[f"{name}.num_batches_tracked"] = module.num_batches_tracked.detach().clone()
    return state


def _widened_context_layer(layer: ContextLayer, residual: torch.Tensor, noise: float,
                           generator: torch.Generator) -> dict[str, torch.Tensor]:
    """One ``ContextLayer``'s weights, its frames' channels copied as ``residual`` says: each channel k times,
    side by side. Every channel copied as often keeps each layer norm's mean and variance; side by side keeps each
    head's channels in one head. A head's dot products then grow k-fold while the attention divides by only
    sqrt(k) more, so queries scale by 1/sqrt(k). The feed-forward layer's channels copy k times too."""
    factor = len(residual) // layer.norm1.normalized_shape[0]
    hidden = _side_by_side(layer.linear1.out_features, factor)
    in_weight = _noisy(torch.cat([_copied_weight(part, residual, residual)
                                  for part in layer.self_attn.in_proj_weight.chunk(3)]), noise, generator)
    in_bias = torch.cat([part.detach()[residual] for part in layer.self_attn.in_proj_bias.chunk(3)])
    queries = slice(0, len(residual))
    in_weight[queries] *= factor ** -0.5
    in_bias[queries] *= factor ** -0.5
    state = {"self_attn.in_proj_weight": in_weight, "self_attn.in_proj_bias": in_bias}
    for name, inputs, outputs in (("self_attn.out_proj", residual, residual), ("linear1", residual, hidden),
                                  ("linear2", hidden, residual)):
        linear = layer.get_submodule(name)
        state[f"{name}.weight"] = _noisy(_copied_weight(linear.weight, inputs, outputs), noise, generator)
        state[f"{name}.bias"] = linear.bias.detach()[outputs]
    for name in ("norm1", "norm2"):
        norm = layer.get_submodule(name)
        state[f"{name}.weight"], state[f"{name}.bias"] = norm.weight.detach()[residual], norm.bias.detach()[residual]
    return state


def widen_weights(model: STRModel, output_channels: int, noise: float = 0.0, seed: int = 0) -> STRModel:
    """A recogniser ``output_channels`` wide that computes what ``model`` computes (Chen et al. 2016, "Net2Net").

    Every layer widens by the same factor. Each new channel copies an old one of its layer; the layer after it
    divides that old channel's weights among its copies, so sums are unchanged. Weights with context layers widen
    to an exact multiple only (``_copied_channels``). Copies stay copies under training unless something tells
    them apart: ``noise`` adds that share of each weight tensor's standard deviation, as Gaussian noise, to the
    convolutions' and the context layers' weights. The copies do not depend on ``noise``.
    """
    old = model.output_channels
    if output_channels % 16 or output_channels <= old:
        raise ValueError(f"output_channels must be a multiple of 16 wider than {old}, got {output_channels}")
    if model.context_layers and output_channels % old:
        raise ValueError(f"weights with context layers widen to a multiple of their {old} channels ({2 * old}, "
                         f"{3 * old}, ...: their layer norms need every channel copied as often), "
                         f"got {output_channels}")
    choices, noises = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed + 1)
    # One choice of copies per width: a residual connection adds layers of one width channel by channel, so both
    # must copy alike, and in this network layers of equal width are exactly those that meet.
    copied = {channels: _copied_channels(channels, channels * output_channels // old, choices)
              for channels in sorted({m.out_channels for m in model.modules() if isinstance(m, nn.Conv2d)})}
    wide = STRModel(output_channels=output_channels, context_layers=model.context_layers)
    state = _widened_features(model, copied, noise, noises)
    if model.SequenceModeling is not None:
        for index, layer in enumerate(model.SequenceModeling.layers):
            for key, value in _widened_context_layer(layer, copied[old], noise, noises).items():
                state[f"SequenceModeling.layers.{index}.{key}"] = value
    state["Prediction.weight"] = _shared_among_copies(model.Prediction.weight.detach(), copied[old])
    state["Prediction.bias"] = model.Prediction.bias.detach().clone()
    wide.load_state_dict(state)
    return wide.train(model.training)
