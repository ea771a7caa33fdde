"""HuggingFace ``transformers`` networks at small configs with random weights, as users export them.

Each model is built from its config class alone (no download, no tokenizer,
no pretrained weights) and seeded, so its export is reproducible offline.
Sizes are the smallest that keep every layer kind of the architecture (two
layers, a few heads, widths of 16-64): the point is which ONNX patterns the
exporters emit for attention masks, token embeddings, SDPA and upsampling
heads, not accuracy, and every weight becomes a literal in the C file.

Editing this file changes the export cache key (see
``transformers_export.py``), so the cached ONNX files always match it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tests.models.torchvision_without_ops import import_torchvision

if TYPE_CHECKING:
    import torch

SEQUENCE = 16
"""Tokens per text input (batch 1)."""
VOCABULARY = 64
"""Rows of the word embedding: random token ids must stay below this."""


@dataclass(frozen=True)
class InputSpec:
    """One graph input: its name, shape and what it holds (``float``, ``tokens`` or ``mask``)."""

    name: str
    shape: tuple[int, ...]
    kind: str = "float"


@dataclass(frozen=True)
class TransformersModel:
    """One network: its name, how to build it, its inputs, and whether it is CNN-like (also run on pulp-cluster)."""

    name: str
    build: Callable[[], torch.nn.Module]
    inputs: tuple[InputSpec, ...]
    cnn_like: bool = False
    heavy: bool = False
    """Slow to compile or run (marker ``heavy_model``): left out of the default CI run."""

    @property
    def token_inputs(self) -> tuple[str, ...]:
        """Inputs holding integers (token ids, masks): what ``--inputs`` would give a real deployment."""
        return tuple(spec.name for spec in self.inputs if spec.kind != "float")


def _single_output(model: torch.nn.Module, names: tuple[str, ...]) -> torch.nn.Module:
    """A module taking ``names`` positionally and returning the model output's first tensor; gradients off the
    weights and eval mode, as a deployment export is made."""
    import torch

    class FirstOutput(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            output = self.inner(**dict(zip(names, args)), return_dict=True)
            return output[0]  # type: ignore[no-any-return]

    return FirstOutput().eval()


def _bert() -> torch.nn.Module:
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=VOCABULARY, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=SEQUENCE, type_vocab_size=2)
    return _single_output(BertModel(config, add_pooling_layer=False),
                          ("input_ids", "attention_mask", "token_type_ids"))


def _distilbert() -> torch.nn.Module:
    from transformers import DistilBertConfig, DistilBertModel

    config = DistilBertConfig(vocab_size=VOCABULARY, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                              max_position_embeddings=SEQUENCE)
    return _single_output(DistilBertModel(config), ("input_ids", "attention_mask"))


def _gpt2() -> torch.nn.Module:
    from transformers import GPT2Config, GPT2Model

    config = GPT2Config(vocab_size=VOCABULARY, n_positions=SEQUENCE, n_embd=32, n_layer=2, n_head=2, use_cache=False,
                        bos_token_id=0, eos_token_id=0)
    return _single_output(GPT2Model(config), ("input_ids", "attention_mask"))


def _vit() -> torch.nn.Module:
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=64)
    return _single_output(ViTModel(config, add_pooling_layer=False), ("pixel_values",))


WHISPER_MELS = 16
WHISPER_FRAMES = 32
"""Mel bins and frames of the Whisper encoder's input (its two convolutions halve the frames to its 16 positions)."""


def _whisper_encoder() -> torch.nn.Module:
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    config = WhisperConfig(num_mel_bins=WHISPER_MELS, d_model=32, encoder_layers=2, encoder_attention_heads=2,
                           encoder_ffn_dim=64, max_source_positions=WHISPER_FRAMES // 2, vocab_size=VOCABULARY,
                           pad_token_id=0, bos_token_id=0, eos_token_id=0, decoder_start_token_id=1)
    return _single_output(WhisperEncoder(config), ("input_features",))


WAVEFORM = 800
"""Samples of the Wav2Vec2 input (three strided convolutions make 39 frames of it)."""


def _wav2vec2() -> torch.nn.Module:
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    config = Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                            conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                            num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4, vocab_size=VOCABULARY)
    return _single_output(Wav2Vec2Model(config), ("input_values",))


def _torch_initialised(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` with torch's default initialisation of its convolutions, linears and norms.

    transformers draws the weights of these vision models with std 0.02 (BatchNorm scales included), made for
    widths of hundreds; at 8-64 channels the activations shrink layer by layer, and MobileViT's logits came out as
    exact zeros (which any result matches).  torch's defaults keep outputs of order 0.1-1.
    """
    import torch

    for module in model.modules():
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear, torch.nn.BatchNorm2d, torch.nn.LayerNorm)):
            module.reset_parameters()
    return model


def _mobilevit() -> torch.nn.Module:
    from transformers import MobileViTConfig, MobileViTForImageClassification

    config = MobileViTConfig(image_size=64, hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
                             num_attention_heads=2, num_labels=10)
    return _single_output(_torch_initialised(MobileViTForImageClassification(config)), ("pixel_values",))


def _convnext() -> torch.nn.Module:
    from transformers import ConvNextConfig, ConvNextForImageClassification

    config = ConvNextConfig(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], image_size=32, num_labels=10)
    return _single_output(ConvNextForImageClassification(config), ("pixel_values",))


def _segformer() -> torch.nn.Module:
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    config = SegformerConfig(depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 32, 64], num_attention_heads=[1, 1, 2, 2],
                             decoder_hidden_size=32, num_labels=4, drop_path_rate=0.0)
    return _single_output(_torch_initialised(SegformerForSemanticSegmentation(config)), ("pixel_values",))


def _tokens(*names: str) -> tuple[InputSpec, ...]:
    return tuple(InputSpec(name, (1, SEQUENCE), "mask" if "mask" in name else "tokens") for name in names)


TRANSFORMERS_MODELS: tuple[TransformersModel, ...] = (
    TransformersModel("bert", _bert, _tokens("input_ids", "attention_mask", "token_type_ids")),
    TransformersModel("distilbert", _distilbert, _tokens("input_ids", "attention_mask")),
    TransformersModel("gpt2", _gpt2, _tokens("input_ids", "attention_mask")),
    TransformersModel("vit", _vit, (InputSpec("pixel_values", (1, 3, 32, 32)),)),
    TransformersModel("whisper-encoder", _whisper_encoder,
                      (InputSpec("input_features", (1, WHISPER_MELS, WHISPER_FRAMES)),)),
    TransformersModel("wav2vec2", _wav2vec2, (InputSpec("input_values", (1, WAVEFORM)),)),
    TransformersModel("mobilevit", _mobilevit, (InputSpec("pixel_values", (1, 3, 64, 64)),), cnn_like=True),
    TransformersModel("convnext", _convnext, (InputSpec("pixel_values", (1, 3, 32, 32)),), cnn_like=True),
    TransformersModel("segformer", _segformer, (InputSpec("pixel_values", (1, 3, 64, 64)),), cnn_like=True),
)
BY_NAME = {model.name: model for model in TRANSFORMERS_MODELS}


def instantiate(model: TransformersModel, seed: int) -> torch.nn.Module:
    """The network with the weights ``seed`` gives (torch's global generator, as transformers initialises)."""
    import torch

    # transformers imports torchvision when it is installed, which stops on its missing compiled operators here
    import_torchvision()
    torch.manual_seed(seed)
    return model.build()


def example_inputs(model: TransformersModel, seed: int) -> tuple[np.ndarray, ...]:
    """Seeded inputs: standard normal floats, token ids below :data:`VOCABULARY` (type ids 0/1), a padding mask
    (ones, then zeros after a random length of at least one token)."""
    generator = np.random.default_rng(seed)
    arrays = []
    for spec in model.inputs:
        if spec.kind == "float":
            arrays.append(generator.standard_normal(spec.shape).astype(np.float32))
        elif spec.kind == "mask":
            length = int(generator.integers(1, spec.shape[-1] + 1))
            arrays.append((np.arange(spec.shape[-1]) < length).astype(np.int64).reshape(spec.shape))
        else:
            high = 2 if spec.name == "token_type_ids" else VOCABULARY
            arrays.append(generator.integers(0, high, spec.shape).astype(np.int64))
    return tuple(arrays)
