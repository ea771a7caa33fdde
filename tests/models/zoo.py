"""The networks the exporter tests build: torchvision, timm and torch.nn models at small input sizes.

Each entry names how to build the module (random weights: the caller seeds
torch first) and the input it takes.  Sizes are the smallest each network
accepts comfortably (32×32 images; a short sequence for the recurrent ones),
because the point is which ONNX patterns the exporters emit, not accuracy,
and every weight ends up as a literal in the generated C file.  Class counts
are cut to 10 for the same reason.

Editing this file changes the export cache key (see ``export.py``), so the
cached ONNX files always match the definitions here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tests.models.torchvision_without_ops import import_torchvision

if TYPE_CHECKING:
    import torch

CLASSES = 10
IMAGE = (1, 3, 32, 32)
SEQUENCE = (1, 8, 16)
"""Batch, time steps, features of the recurrent models' input."""
FEATURE_FRAMES = (1, 10, 32)
"""Batch, features, frames of the keyword spotter's input (Conv1d's channels-first layout)."""


@dataclass(frozen=True)
class ZooModel:
    """One network: its name, how to build it, the input shape it is exported and validated at."""

    name: str
    build: Callable[[], torch.nn.Module]
    input_shape: tuple[int, ...] = IMAGE
    heavy: bool = False
    """Millions of weights: a C file of tens of MB that takes gcc minutes (marker ``heavy_model``)."""


def _torchvision(name: str, **kwargs: object) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        models = import_torchvision().models
        return getattr(models, name)(weights=None, num_classes=CLASSES, **kwargs)  # type: ignore[no-any-return]

    return build


def _small_vit() -> torch.nn.Module:
    """torchvision's VisionTransformer with two 64-wide layers on 8×8 patches of a 32×32 image."""
    vit = import_torchvision().models.vision_transformer
    model = vit.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128,
                                  num_classes=CLASSES)
    # torchvision zero-initialises the classifier, so an untrained model outputs exact zeros, which any result
    # matches; torch's default Linear initialisation gives outputs worth comparing.
    model.heads.head.reset_parameters()
    return model


def _narrow_resnet18() -> torch.nn.Module:
    """resnet18's graph (7×7 stem, max-pool, two BasicBlocks per stage, GAP, linear) at a quarter of its width.

    The full network's 11 M weights make a C file of ~150 MB; this one has the
    same layers and patterns with 16/32/64/128 channels.
    """
    import torch

    resnet = import_torchvision().models.resnet
    model = resnet.ResNet(resnet.BasicBlock, [2, 2, 2, 2], num_classes=CLASSES)
    model.inplanes = 16
    model.conv1 = torch.nn.Conv2d(3, 16, kernel_size=7, stride=2, padding=3, bias=False)
    model.bn1 = torch.nn.BatchNorm2d(16)
    for index, width in enumerate((16, 32, 64, 128)):
        setattr(model, f"layer{index + 1}", model._make_layer(resnet.BasicBlock, width, 2, stride=1 if index == 0 else 2))
    model.fc = torch.nn.Linear(128, CLASSES)
    return model


def _narrow_efficientnet_b0() -> torch.nn.Module:
    """efficientnet_b0's stages (MBConv with squeeze-excitation, SiLU) at a quarter width and half depth."""
    efficientnet = import_torchvision().models.efficientnet
    setting, last_channel = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.5)
    return efficientnet.EfficientNet(setting, dropout=0.2, last_channel=last_channel, num_classes=CLASSES)


def _timm(name: str, **kwargs: object) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        import_torchvision()  # timm imports torchvision
        import timm

        return timm.create_model(name, pretrained=False, num_classes=CLASSES, **kwargs)  # type: ignore[no-any-return]

    return build


def _recurrent(kind: str) -> Callable[[], torch.nn.Module]:
    """A keyword-spotting-shaped classifier: one LSTM or GRU layer over the sequence, a linear layer on its end."""

    def build() -> torch.nn.Module:
        import torch

        class Classifier(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                cell = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
                self.recurrent = cell(SEQUENCE[2], 32, batch_first=True)
                self.head = torch.nn.Linear(32, CLASSES)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                sequence, _ = self.recurrent(x)
                return self.head(sequence[:, -1])  # type: ignore[no-any-return]

        return Classifier()

    return build


def _small_network(name: str) -> Callable[[], torch.nn.Module]:
    """A network of :mod:`tests.models.small_networks` (imported here: it needs torch)."""

    def build() -> torch.nn.Module:
        from tests.models import small_networks

        return getattr(small_networks, name)()  # type: ignore[no-any-return]

    return build


ZOO: tuple[ZooModel, ...] = (
    ZooModel("resnet18", _torchvision("resnet18"), heavy=True),
    ZooModel("resnet18_narrow", _narrow_resnet18),
    ZooModel("mobilenet_v2", _torchvision("mobilenet_v2")),
    ZooModel("mobilenet_v3_small", _torchvision("mobilenet_v3_small")),
    ZooModel("squeezenet1_1", _torchvision("squeezenet1_1")),
    ZooModel("shufflenet_v2_x0_5", _torchvision("shufflenet_v2_x0_5")),
    ZooModel("efficientnet_b0", _torchvision("efficientnet_b0"), heavy=True),
    ZooModel("efficientnet_b0_narrow", _narrow_efficientnet_b0),
    ZooModel("vit_small", _small_vit),
    ZooModel("deit_small", _timm("deit_tiny_patch16_224", img_size=32, patch_size=8, embed_dim=64, depth=2,
                                 num_heads=2)),
    # 64×64: at 32×32 its last stage is 1×1 and timm upsamples it to the 2×2 patch size with a bilinear Resize,
    # which no platform implements yet (the 32×32 entry records that refusal)
    ZooModel("mobilevit_xxs", _timm("mobilevit_xxs"), (1, 3, 64, 64)),
    ZooModel("mobilevit_xxs_32", _timm("mobilevit_xxs")),
    ZooModel("efficientvit_b0", _timm("efficientvit_b0")),
    ZooModel("lstm", _recurrent("lstm"), SEQUENCE),
    ZooModel("gru", _recurrent("gru"), SEQUENCE),
    ZooModel("unet", _small_network("UNet")),
    ZooModel("keyword_spotter", _small_network("KeywordSpotter"), FEATURE_FRAMES),
    ZooModel("separable_se_cnn", _small_network("SeparableSqueezeExcite")),
    # what bench/folding_cost.py times: ~1,200 nodes of TorchScript shape arithmetic; validated with -m heavy_model
    ZooModel("mobilevit_traced_sizes", _small_network("TracedSizeMobileViT"), (1, 3, 64, 64), heavy=True),
)
BY_NAME = {model.name: model for model in ZOO}


def instantiate(model: ZooModel, seed: int) -> torch.nn.Module:
    """The network with seeded random weights, batch-norm statistics measured on random batches, in eval mode.

    With the default running statistics (mean 0, variance 1) an untrained deep
    CNN's activations shrink layer after layer: mobilenet_v2's outputs at
    32×32 are ~1e-10, below any tolerance worth the name and useless for int8
    calibration.  Measuring the statistics on a few random batches, as
    training would, keeps every layer near unit scale.
    """
    import torch

    torch.manual_seed(seed)
    module = model.build()
    norms = [layer for layer in module.modules() if isinstance(layer, torch.nn.modules.batchnorm._BatchNorm)]
    if norms:
        for norm in norms:
            norm.reset_running_stats()
            norm.momentum = None  # a cumulative average over the batches below
        module.train()
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for _ in range(4):
                module(torch.randn((8, *model.input_shape[1:]), generator=generator))
    return module.eval()
