"""The scene-text recogniser "None-ResNet-None-CTC", and its variant with self-attention over the frames.

No transformation, a ResNet feature extractor, no sequence model and a CTC head: the model of
Baek et al. 2019 (deep-text-recognition-benchmark) that the Triton tutorial serves. Parameter names
and shapes match the published ``None-ResNet-None-CTC.pth`` checkpoint at ``output_channels=512``.

With ``context_layers`` above 0, a sequence model sits between the ResNet and the classifier
(``SequenceModeling``, the stage deep-text-recognition-benchmark fills with a BiLSTM): pre-norm
self-attention layers in which each line's frames attend to its own frames only, so that a frame is
classified knowing its neighbours', not only its own receptive field.

Shapes, for a batch of N grey text lines of width W::

    input   [N, 1, 32, W]        normalised to [-1, 1] (see ``str_ocr.preprocess``)
    visual  [N, C, 1, W // 4 + 1] after the ResNet (C = output_channels)
    output  [N, W // 4 + 1, 37]  logits over the CTC classes (see ``str_ocr.text``)

Lines of different widths can share a batch: zero-pad them on the right to the widest and pass each
line's real width as ``widths``. The network then zeroes every activation past a line's own columns,
which is exactly what its convolutions' zero padding would have put there had the line run alone,
so each line's logits are its logits alone (to float rounding). The attention layers mask the frames
past each line's own as keys, which keeps that true with them.

Before the ResNet, a line drawn light on dark is negated (``dark_text_on_light``): the network then
reads every line dark on light, whichever way it was drawn or trained.
"""

from __future__ import annotations

import torch
from torch import nn

from .contract import INPUT_HEIGHT, MIN_WIDTH, NUM_CLASSES, output_length  # noqa: F401 - re-exported

BLOCKS_PER_STAGE = (1, 2, 5, 3)


def _conv3x3(in_channels: int, out_channels: int) -> nn.Conv2d:
    return nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a residual connection (ResNet-18/34 style)."""

    def __init__(self, in_channels: int, channels: int, downsample: nn.Module | None = None) -> None:
        super().__init__()
        self.conv1 = _conv3x3(in_channels, channels)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = _conv3x3(channels, channels)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        residual = x if self.downsample is None else self.downsample(x)
        out = _masked(self.relu(self.bn1(self.conv1(x))), mask)
        out = self.bn2(self.conv2(out))
        return _masked(self.relu(out + residual), mask)


def _masked(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    return x if mask is None else x * mask


def column_mask(widths: torch.Tensor, columns: int, dtype: torch.dtype) -> torch.Tensor:
    """``[N, 1, 1, columns]``: 1 on each line's real columns (``widths[n]`` of them), 0 past them."""
    return (torch.arange(columns, device=widths.device) < widths[:, None]).to(dtype)[:, None, None, :]


def dark_text_on_light(x: torch.Tensor, widths: torch.Tensor | None = None) -> torch.Tensor:
    """``x`` [N, 1, 32, W] with each line whose ground is darker than its ink negated, over its real columns.

    Most of a line is ground, so its mean lies on the ground's side of the middle of its range:
    below it, the ground is the dark side. Min, max and mean export to any ONNX runtime, a median does not.
    """
    if widths is None:
        low, high, mean = x.amin(dim=(1, 2, 3)), x.amax(dim=(1, 2, 3)), x.mean(dim=(1, 2, 3))
    else:
        real = column_mask(widths, x.shape[-1], x.dtype) > 0
        low = x.masked_fill(~real, torch.inf).amin(dim=(1, 2, 3))
        high = x.masked_fill(~real, -torch.inf).amax(dim=(1, 2, 3))
        mean = (x * real).sum(dim=(1, 2, 3)) / (widths.to(x.dtype) * x.shape[1] * x.shape[2])
    light_on_dark = mean < (low + high) / 2
    return torch.where(light_on_dark[:, None, None, None], -x, x)


def _stage(in_channels: int, channels: int, blocks: int) -> nn.Sequential:
    downsample = None
    if in_channels != channels:
        downsample = nn.Sequential(
            nn.Conv2d(in_channels, channels, kernel_size=1, stride=1, bias=False),
            nn.BatchNorm2d(channels),
        )
    layers = [BasicBlock(in_channels, channels, downsample)]
    layers += [BasicBlock(channels, channels) for _ in range(blocks - 1)]
    return nn.Sequential(*layers)


class ResNet(nn.Module):
    """The feature extractor's body: [N, 1, 32, W] -> [N, C, 1, W // 4 + 1].

    Heights halve five times (32 -> 1) while the width is pooled twice by 2 and then kept,
    so that every time step sees a 4-pixel-wide column of the line.
    """

    def __init__(self, input_channels: int, output_channels: int) -> None:
        super().__init__()
        stage_channels = [output_channels // 4, output_channels // 2, output_channels, output_channels]
        stem_channels = output_channels // 8

        self.conv0_1 = nn.Conv2d(input_channels, output_channels // 16, 3, 1, 1, bias=False)
        self.bn0_1 = nn.BatchNorm2d(output_channels // 16)
        self.conv0_2 = nn.Conv2d(output_channels // 16, stem_channels, 3, 1, 1, bias=False)
        self.bn0_2 = nn.BatchNorm2d(stem_channels)
        self.relu = nn.ReLU(inplace=True)

        self.maxpool1 = nn.MaxPool2d(kernel_size=2, stride=2, padding=0)
        self.layer1 = _stage(stem_channels, stage_channels[0], BLOCKS_PER_STAGE[0])
        self.conv1 = _conv3x3(stage_channels[0], stage_channels[0])
        self.bn1 = nn.BatchNorm2d(stage_channels[0])

        self.maxpool2 = nn.MaxPool2d(kernel_size=2, stride=2, padding=0)
        self.layer2 = _stage(stage_channels[0], stage_channels[1], BLOCKS_PER_STAGE[1])
        self.conv2 = _conv3x3(stage_channels[1], stage_channels[1])
        self.bn2 = nn.BatchNorm2d(stage_channels[1])

        # From here on the width is no longer halved: stride 1 and one column of padding.
        self.maxpool3 = nn.MaxPool2d(kernel_size=2, stride=(2, 1), padding=(0, 1))
        self.layer3 = _stage(stage_channels[1], stage_channels[2], BLOCKS_PER_STAGE[2])
        self.conv3 = _conv3x3(stage_channels[2], stage_channels[2])
        self.bn3 = nn.BatchNorm2d(stage_channels[2])

        self.layer4 = _stage(stage_channels[2], stage_channels[3], BLOCKS_PER_STAGE[3])
        self.conv4_1 = nn.Conv2d(stage_channels[3], stage_channels[3], 2, stride=(2, 1), padding=(0, 1), bias=False)
        self.bn4_1 = nn.BatchNorm2d(stage_channels[3])
        self.conv4_2 = nn.Conv2d(stage_channels[3], stage_channels[3], 2, stride=1, padding=0, bias=False)
        self.bn4_2 = nn.BatchNorm2d(stage_channels[3])

    def forward(self, x: torch.Tensor, widths: torch.Tensor | None = None) -> torch.Tensor:
        """``widths``: each line's real width, when lines of different widths share the batch."""
        # A line's real width at each resolution: output_length's formula, step by step.
        real = None if widths is None else [widths, widths // 2, widths // 4, widths // 4 + 1, widths // 4 + 2]

        def mask(x: torch.Tensor, resolution: int) -> torch.Tensor | None:
            return None if real is None else column_mask(real[resolution], x.shape[-1], x.dtype)

        def stage(x: torch.Tensor, blocks: nn.Sequential, conv: nn.Conv2d | None, bn: nn.BatchNorm2d | None,
                  resolution: int) -> torch.Tensor:
            m = mask(x, resolution)
            x = _masked(x, m)
            for block in blocks:
                x = block(x, m)
            return x if conv is None else _masked(self.relu(bn(conv(x))), m)

        m = mask(x, 0)
        x = _masked(self.relu(self.bn0_1(self.conv0_1(_masked(x, m)))), m)
        x = _masked(self.relu(self.bn0_2(self.conv0_2(x))), m)
        # The max-pools see ReLU outputs (>= 0): zeroed columns act as their -inf padding would.
        x = stage(self.maxpool1(x), self.layer1, self.conv1, self.bn1, 1)
        x = stage(self.maxpool2(x), self.layer2, self.conv2, self.bn2, 2)
        x = stage(self.maxpool3(x), self.layer3, self.conv3, self.bn3, 3)
        x = stage(x, self.layer4, None, None, 3)
        x = self.relu(self.bn4_1(self.conv4_1(x)))
        x = _masked(x, mask(x, 4))
        return self.relu(self.bn4_2(self.conv4_2(x)))


class ResNetFeatureExtractor(nn.Module):
    """Wraps the ResNet as ``ConvNet``, the name the published checkpoint uses."""

    def __init__(self, input_channels: int, output_channels: int) -> None:
        super().__init__()
        self.ConvNet = ResNet(input_channels, output_channels)

    def forward(self, x: torch.Tensor, widths: torch.Tensor | None = None) -> torch.Tensor:
        return self.ConvNet(x, widths)


class SelfAttention(nn.Module):
    """Multi-head self-attention, ``[N, T, C]`` -> ``[N, T, C]``, with the parameter names of ``nn.MultiheadAttention``
    (so that weights trained in ``nn.TransformerEncoderLayer`` load), written out in plain operations that every ONNX
    runtime and OpenVINO convert."""

    def __init__(self, channels: int, heads: int) -> None:
        super().__init__()
        if channels % heads:
            raise ValueError(f"channels ({channels}) must be a multiple of heads ({heads})")
        self.heads = heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * channels, channels))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * channels))
        self.out_proj = nn.Linear(channels, channels)
        nn.init.xavier_uniform_(self.in_proj_weight)

    def forward(self, x: torch.Tensor, padding: torch.Tensor | None) -> torch.Tensor:
        """``padding`` [N, T]: True at the frames past a line's own, which no frame attends to."""
        n, t, c = x.shape
        q, k, v = nn.functional.linear(x, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)
        q, k, v = (part.reshape(n, t, self.heads, c // self.heads).transpose(1, 2) for part in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (c // self.heads) ** 0.5  # [N, heads, T, T]
        if padding is not None:
            scores = scores.masked_fill(padding[:, None, None, :], -torch.inf)
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(n, t, c)
        return self.out_proj(attended)


class ContextLayer(nn.Module):
    """One pre-norm transformer encoder layer (ReLU, no dropout), named as ``nn.TransformerEncoderLayer``'s."""

    def __init__(self, channels: int, heads: int, feed_forward: int) -> None:
        super().__init__()
        self.self_attn = SelfAttention(channels, heads)
        self.norm1 = nn.LayerNorm(channels)
        self.norm2 = nn.LayerNorm(channels)
        self.linear1 = nn.Linear(channels, feed_forward)
        self.linear2 = nn.Linear(feed_forward, channels)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor, padding: torch.Tensor | None) -> torch.Tensor:
        x = x + self.self_attn(self.norm1(x), padding)
        return x + self.linear2(self.relu(self.linear1(self.norm2(x))))


class FrameContext(nn.Module):
    """``[N, T, C]`` frames -> ``[N, T, C]``, each line's frames attending to its own only.

    Each layer's residual branches end in projections set to zero at the start, so that an untrained
    ``FrameContext`` is the identity and weights trained without one read the same with it. The head count is
    fixed (``HEADS``): weights give no sign of it, so weights trained with another would load and misread.
    """

    HEADS, FEED_FORWARD_PER_CHANNEL = 4, 4

    def __init__(self, channels: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(ContextLayer(channels, self.HEADS, self.FEED_FORWARD_PER_CHANNEL * channels)
                                    for _ in range(layers))
        for layer in self.layers:
            for projection in (layer.self_attn.out_proj, layer.linear2):
                nn.init.zeros_(projection.weight)
                nn.init.zeros_(projection.bias)

    def forward(self, frames: torch.Tensor, widths: torch.Tensor | None = None) -> torch.Tensor:
        """``widths`` [N]: the lines' real widths in pixels, when lines of different widths share the batch."""
        padding = None
        if widths is not None:
            padding = torch.arange(frames.shape[1], device=frames.device)[None, :] >= output_length(widths)[:, None]
        for layer in self.layers:
            frames = layer(frames, padding)
        return frames


class STRModel(nn.Module):
    """None-ResNet-None-CTC: [N, 1, 32, W] grey lines -> [N, W // 4 + 1, 37] CTC logits; with ``context_layers``,
    that many self-attention layers over the frames (``FrameContext``) before the classifier."""

    def __init__(self, input_channels: int = 1, output_channels: int = 512, num_classes: int = NUM_CLASSES,
                 context_layers: int = 0) -> None:
        super().__init__()
        if output_channels % 16:
            raise ValueError("output_channels must be a multiple of 16 (the stem has output_channels / 16), "
                             f"got {output_channels}")
        if context_layers < 0:
            raise ValueError(f"context_layers must be 0 (none) or more, got {context_layers}")
        self.output_channels, self.context_layers = output_channels, context_layers
        self.FeatureExtraction = ResNetFeatureExtractor(input_channels, output_channels)
        self.SequenceModeling = FrameContext(output_channels, context_layers) if context_layers else None
        self.Prediction = nn.Linear(output_channels, num_classes)

    def forward(self, x: torch.Tensor, widths: torch.Tensor | None = None) -> torch.Tensor:
        """``x`` [N, 1, 32, W] -> [N, W // 4 + 1, 37]; ``widths`` [N]: real widths of zero-padded lines."""
        frames = self.frames(x, widths)
        if self.SequenceModeling is not None:
            frames = self.SequenceModeling(frames, widths)
        return self.Prediction(frames)

    def frames(self, x: torch.Tensor, widths: torch.Tensor | None = None) -> torch.Tensor:
        """``x`` [N, 1, 32, W] -> the ResNet's frames, [N, W // 4 + 1, C]."""
        visual = self.FeatureExtraction(dark_text_on_light(x, widths), widths)  # [N, C, 1, T]
        # The published model pools the height with AdaptiveAvgPool2d((None, 1)); it is already 1.
        return visual.mean(dim=2).permute(0, 2, 1)
