"""Small torch.nn networks of the kinds users bring beyond classifiers: segmentation, keyword spotting, mobile CNNs.

None of them comes from a model library, so each is written here in the
style its kind is usually written in, because that style decides which ONNX
patterns the exporters emit:

- :class:`UNet` upsamples once with ``nn.Upsample`` (nearest) and once with
  ``F.interpolate`` (bilinear), so both ``Resize`` modes appear;
- :class:`KeywordSpotter` runs a ``Conv1d`` front end over feature frames
  and an ``LSTM`` over its output steps;
- :class:`SeparableSqueezeExcite` is a depthwise-separable CNN whose blocks
  rescale their channels by a squeeze-excite gate;
- :class:`TracedSizeMobileViT` is MobileViT-sized (stem, inverted residuals,
  three MobileViT blocks of 2, 4 and 3 transformer layers) and reads every
  size from ``x.shape`` / ``x.size()`` as HuggingFace's implementation does,
  so its TorchScript export is full of ``Shape → Gather → Div → Concat →
  Reshape`` arithmetic for the front end's shape folding to remove (what
  ``bench/folding_cost.py`` times) while its dynamo export has static sizes.

Weights are random (the caller seeds torch); sizes are small, because the
point is the exported patterns and every weight becomes a C literal.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional

CLASSES = 10


def _conv_block(inputs: int, outputs: int, kernel: int = 3, stride: int = 1, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(inputs, outputs, kernel, stride, kernel // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(outputs), nn.ReLU())


class UNet(nn.Module):
    """Two down steps, two up steps with skip connections: nearest upsampling first, bilinear second."""

    def __init__(self, channels: int = 3, classes: int = 2) -> None:
        super().__init__()
        self.down1 = nn.Sequential(_conv_block(channels, 8), _conv_block(8, 8))
        self.down2 = _conv_block(8, 16)
        self.bottom = _conv_block(16, 32)
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.up2 = _conv_block(32 + 16, 16)
        self.up1 = _conv_block(16 + 8, 8)
        self.head = nn.Conv2d(8, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip1 = self.down1(x)
        skip2 = self.down2(functional.max_pool2d(skip1, 2))
        bottom = self.bottom(functional.max_pool2d(skip2, 2))
        up2 = self.up2(torch.cat([self.upsample(bottom), skip2], dim=1))
        up1 = functional.interpolate(up2, scale_factor=2.0, mode="bilinear", align_corners=False)
        return self.head(self.up1(torch.cat([up1, skip1], dim=1)))  # type: ignore[no-any-return]


class KeywordSpotter(nn.Module):
    """A strided Conv1d over feature frames (batch, features, frames), an LSTM over its steps, a linear head."""

    def __init__(self, features: int = 10, hidden: int = 24) -> None:
        super().__init__()
        self.front = nn.Sequential(nn.Conv1d(features, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm1d(16),
                                   nn.ReLU())
        self.recurrent = nn.LSTM(16, hidden, batch_first=True)
        self.head = nn.Linear(hidden, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        steps = self.front(x).transpose(1, 2)
        sequence, _ = self.recurrent(steps)
        return self.head(sequence[:, -1])  # type: ignore[no-any-return]


class _SqueezeExcite(nn.Module):
    def __init__(self, channels: int, reduced: int) -> None:
        super().__init__()
        self.reduce = nn.Conv2d(channels, reduced, 1)
        self.expand = nn.Conv2d(reduced, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = functional.adaptive_avg_pool2d(x, 1)
        gate = torch.sigmoid(self.expand(functional.relu(self.reduce(gate))))
        return x * gate


def _separable(inputs: int, outputs: int, stride: int) -> nn.Sequential:
    return nn.Sequential(_conv_block(inputs, inputs, stride=stride, groups=inputs),
                         _SqueezeExcite(inputs, max(inputs // 4, 4)), _conv_block(inputs, outputs, kernel=1))


class SeparableSqueezeExcite(nn.Module):
    """A strided stem, three depthwise-separable blocks with squeeze-excite, global pooling, a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(_conv_block(3, 16, stride=2), _separable(16, 32, 1), _separable(32, 64, 2),
                                      _separable(64, 64, 1))
        self.head = nn.Linear(64, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(functional.adaptive_avg_pool2d(self.features(x), 1), 1))  # type: ignore[no-any-return]


class _SelfAttention(nn.Module):
    """Multi-head attention whose head split and merge read the sizes from the tensor, as HuggingFace writes it,
    through PyTorch's SDPA (whose TorchScript export computes the scale from the query's shape)."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_width = width // heads
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)
        self.output = nn.Linear(width, width)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.size()[:-1] + (self.heads, self.head_width)).permute(0, 2, 1, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        query, key, value = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        context = functional.scaled_dot_product_attention(query, key, value).permute(0, 2, 1, 3).contiguous()
        return self.output(context.view(context.size()[:-2] + (self.heads * self.head_width,)))  # type: ignore[no-any-return]


class _TransformerLayer(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attention = _SelfAttention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.SiLU(), nn.Linear(2 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))  # type: ignore[no-any-return]


class _MobileViTBlock(nn.Module):
    """Local conv, unfold into 2×2 patches, transformer layers over the patches, fold back, fuse with the input."""

    patch = 2

    def __init__(self, channels: int, width: int, layers: int) -> None:
        super().__init__()
        self.local = nn.Sequential(_conv_block(channels, channels), nn.Conv2d(channels, width, 1, bias=False))
        self.transformer = nn.Sequential(*(_TransformerLayer(width, 2) for _ in range(layers)))
        self.norm = nn.LayerNorm(width)
        self.project = _conv_block(width, channels, kernel=1)
        self.fuse = _conv_block(2 * channels, channels)

    def _patches(self, size: Any) -> Any:
        """How many patches cover ``size``: while tracing, HuggingFace computes it on the traced size tensor (``Div``,
        ``Ceil``, ``Cast``: arithmetic onnx's shape inference does not follow), otherwise on Python ints."""
        if torch.jit.is_tracing():
            return torch.ceil(size / self.patch).to(torch.int64)
        return math.ceil(size / self.patch)

    def _unfold(self, x: torch.Tensor) -> tuple[torch.Tensor, dict[str, Any]]:
        batch, channels, height, width = x.shape
        rows, columns = self._patches(height), self._patches(width)
        patches = x.reshape(batch * channels * rows, self.patch, columns, self.patch).transpose(1, 2)
        patches = patches.reshape(batch, channels, rows * columns, self.patch * self.patch).transpose(1, 3)
        patches = patches.reshape(batch * self.patch * self.patch, rows * columns, -1)
        return patches, {"batch": batch, "channels": channels, "rows": rows, "columns": columns}

    def _fold(self, patches: torch.Tensor, sizes: dict[str, Any]) -> torch.Tensor:
        batch, channels, rows, columns = sizes["batch"], patches.size(-1), sizes["rows"], sizes["columns"]
        features = patches.contiguous().view(batch, self.patch * self.patch, rows * columns, -1).transpose(1, 3)
        features = features.reshape(batch * channels * rows, columns, self.patch, self.patch).transpose(1, 2)
        return features.reshape(batch, channels, rows * self.patch, columns * self.patch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        patches, sizes = self._unfold(self.local(x))
        features = self._fold(self.norm(self.transformer(patches)), sizes)
        return self.fuse(torch.cat([x, self.project(features)], dim=1))  # type: ignore[no-any-return]


class _InvertedResidual(nn.Module):
    def __init__(self, inputs: int, outputs: int, stride: int) -> None:
        super().__init__()
        hidden = 2 * inputs
        self.body = nn.Sequential(_conv_block(inputs, hidden, kernel=1), _conv_block(hidden, hidden, stride=stride,
                                                                                      groups=hidden),
                                  nn.Conv2d(hidden, outputs, 1, bias=False), nn.BatchNorm2d(outputs))
        self.residual = stride == 1 and inputs == outputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)  # type: ignore[no-any-return]


class TracedSizeMobileViT(nn.Module):
    """mobilevit_xxs's layout (16-channel stem, inverted residuals, MobileViT blocks of 2/4/3 layers at 64/80/96
    wide) with HuggingFace-style size arithmetic; for 64×64 inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _conv_block(3, 16, stride=2), _InvertedResidual(16, 16, 1), _InvertedResidual(16, 24, 2),
            _InvertedResidual(24, 24, 1), _InvertedResidual(24, 48, 2), _MobileViTBlock(48, 64, 2),
            _InvertedResidual(48, 64, 2), _MobileViTBlock(64, 80, 4), _InvertedResidual(64, 80, 1),
            _MobileViTBlock(80, 96, 3), _conv_block(80, 320, kernel=1))
        self.head = nn.Linear(320, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(functional.adaptive_avg_pool2d(self.features(x), 1), 1))  # type: ignore[no-any-return]
