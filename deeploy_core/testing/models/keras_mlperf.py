"""Keras networks for the quantisation tests: the four MLPerf Tiny reference networks and two small ones.

The MLPerf Tiny networks are written from their published architectures (the
benchmark's training scripts describe them layer by layer): ResNet-8 for
CIFAR-10, DS-CNN for keyword spotting, MobileNetV1 with width 0.25 for visual
wake words at 96x96 and the fully connected autoencoder for anomaly
detection.  Weights are random but seeded, and batch normalisation gets random
statistics and every bias a random value (Keras initialises both to the
identity or zero, which would make the folded scales and offsets trivial and
hide requantisation mistakes).

The input's batch dimension stays ``None``, as in every Keras model a user
converts: the converted files then have a dynamic batch, which the compiler
must turn into 1 itself.

TensorFlow is imported inside the builders only: importing this module costs
nothing and needs nothing (the ``quant`` extra is optional).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

SEED = 0


@dataclass(frozen=True)
class KerasNet:
    """A network of this module: its builder and the input shape without the batch dimension.

    (Keras objects are typed ``Any``: keras ships no type information.)
    """

    name: str
    input_shape: tuple[int, ...]
    build: Callable[[], Any]
    heavy: bool  # an MLPerf network: slow to convert and compile, tests mark it heavy_model


def _layers() -> Any:
    from keras import layers

    return layers


def _conv_bn_relu(x: Any, filters: int, kernel: int | tuple[int, int], strides: int | tuple[int, int] = 1) -> Any:
    layers = _layers()
    x = layers.Conv2D(filters, kernel, strides=strides, padding="same", kernel_initializer="he_normal")(x)
    x = layers.BatchNormalization()(x)
    return layers.Activation("relu")(x)


def _depthwise_bn_relu(x: Any, strides: int = 1) -> Any:
    layers = _layers()
    x = layers.DepthwiseConv2D(3, strides=strides, padding="same")(x)
    x = layers.BatchNormalization()(x)
    return layers.Activation("relu")(x)


def resnet8() -> Any:
    """ResNet-8 (MLPerf Tiny image classification): 32x32x3 CIFAR-10 images, 10 classes, three residual stacks."""
    import keras

    layers = _layers()
    inputs = keras.Input(shape=(32, 32, 3))
    x = _conv_bn_relu(inputs, 16, 3)
    for filters, strides in ((16, 1), (32, 2), (64, 2)):
        y = _conv_bn_relu(x, filters, 3, strides)
        y = layers.Conv2D(filters, 3, padding="same", kernel_initializer="he_normal")(y)
        y = layers.BatchNormalization()(y)
        if strides != 1:  # the shortcut is projected by a strided 1x1 convolution when the shape changes
            x = layers.Conv2D(filters, 1, strides=strides, padding="same", kernel_initializer="he_normal")(x)
        x = layers.Activation("relu")(layers.add([x, y]))
    x = layers.AveragePooling2D(pool_size=int(x.shape[1]))(x)
    outputs = layers.Dense(10, activation="softmax", kernel_initializer="he_normal")(layers.Flatten()(x))
    return keras.Model(inputs, outputs, name="resnet8")


def dscnn() -> Any:
    """DS-CNN (MLPerf Tiny keyword spotting): 49x10 MFCC features, 64 filters, four depthwise-separable blocks."""
    import keras

    layers = _layers()
    inputs = keras.Input(shape=(49, 10, 1))
    x = _conv_bn_relu(inputs, 64, (10, 4), (2, 2))
    x = layers.Dropout(0.2)(x)
    for _ in range(4):
        x = _depthwise_bn_relu(x)
        x = _conv_bn_relu(x, 64, 1)
    x = layers.Dropout(0.4)(x)
    x = layers.AveragePooling2D(pool_size=(int(x.shape[1]), int(x.shape[2])))(x)
    outputs = layers.Dense(12, activation="softmax")(layers.Flatten()(x))
    return keras.Model(inputs, outputs, name="dscnn")


# (channel multiplier, depthwise stride) of MobileNetV1's 13 depthwise-separable blocks
_MOBILENET_BLOCKS = ((2, 1), (2, 2), (1, 1), (2, 2), (1, 1), (2, 2), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (2, 2),
                     (1, 1))


def mobilenet_v1_025() -> Any:
    """MobileNetV1, width 0.25 (MLPerf Tiny visual wake words): 96x96x3 images, 2 classes."""
    import keras

    layers = _layers()
    inputs = keras.Input(shape=(96, 96, 3))
    filters = 8  # 32 x 0.25
    x = _conv_bn_relu(inputs, filters, 3, 2)
    for multiplier, strides in _MOBILENET_BLOCKS:
        x = _depthwise_bn_relu(x, strides)
        filters *= multiplier
        x = _conv_bn_relu(x, filters, 1)
    x = layers.AveragePooling2D(pool_size=(int(x.shape[1]), int(x.shape[2])))(x)
    outputs = layers.Dense(2, activation="softmax")(layers.Flatten()(x))
    return keras.Model(inputs, outputs, name="mobilenet_v1_025")


def mobilenet_v2_035() -> Any:
    """Keras's own MobileNetV2, width 0.35, at 96x96 with 2 classes (a person detector; issue 32's cluster case).

    ``keras.applications`` builds it (no pretrained weights: seeded ones),
    with the ZeroPadding2D layers before its strided depthwise convolutions
    that tf2onnx exports as Pad nodes.
    """
    import keras

    return keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=2,
                                          name="mobilenet_v2_035")


def fc_autoencoder() -> Any:
    """The FC autoencoder (MLPerf Tiny anomaly detection): 640 -> 128 x4 -> 8 -> 128 x4 -> 640, BN and ReLU between."""
    import keras

    layers = _layers()
    inputs = keras.Input(shape=(640,))
    x = inputs
    for units in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = layers.Activation("relu")(layers.BatchNormalization()(layers.Dense(units)(x)))
    return keras.Model(inputs, layers.Dense(640)(x), name="fc_autoencoder")


def tiny_cnn() -> Any:
    """A small CNN with each op TFLite's int8 converter emits for the MLPerf networks, and Relu6 and Add besides.

    Conv (Relu), DepthwiseConv (Relu6), a residual Add, AveragePool, Dense and
    Softmax on a 12x12x3 image: seconds to convert, compile and run.
    """
    import keras

    layers = _layers()
    inputs = keras.Input(shape=(12, 12, 3))
    x = layers.Conv2D(8, 3, padding="same", activation="relu")(inputs)
    y = layers.DepthwiseConv2D(3, padding="same")(x)
    y = layers.ReLU(max_value=6.0)(y)
    y = layers.Conv2D(8, 1)(y)
    x = layers.add([x, y])
    x = layers.AveragePooling2D(2)(x)
    x = layers.Flatten()(x)
    outputs = layers.Dense(5, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="tiny_cnn")


def tiny_mlp() -> Any:
    """A small MLP: 32 -> 24 (ReLU) -> 16 (ReLU) -> 4."""
    import keras

    layers = _layers()
    inputs = keras.Input(shape=(32,))
    x = layers.Dense(24, activation="relu")(inputs)
    x = layers.Dense(16, activation="relu")(x)
    return keras.Model(inputs, layers.Dense(4)(x), name="tiny_mlp")


NETWORKS: dict[str, KerasNet] = {net.name: net for net in (
    KerasNet("tiny_cnn", (12, 12, 3), tiny_cnn, heavy=False),
    KerasNet("tiny_mlp", (32,), tiny_mlp, heavy=False),
    KerasNet("resnet8", (32, 32, 3), resnet8, heavy=True),
    KerasNet("dscnn", (49, 10, 1), dscnn, heavy=True),
    KerasNet("mobilenet_v1_025", (96, 96, 3), mobilenet_v1_025, heavy=True),
    KerasNet("fc_autoencoder", (640,), fc_autoencoder, heavy=True),
    KerasNet("mobilenet_v2_035", (96, 96, 3), mobilenet_v2_035, heavy=True),
)}
MLPERF_TINY = ("resnet8", "dscnn", "mobilenet_v1_025", "fc_autoencoder")
SMALL = ("tiny_cnn", "tiny_mlp")


def randomise(model: Any, seed: int = SEED) -> None:
    """Random batch-normalisation statistics and biases, so that folding them changes every scale and offset."""
    from keras import layers

    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            gamma, beta, mean, variance = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape).astype(np.float32),
                               rng.normal(0.0, 0.1, beta.shape).astype(np.float32),
                               rng.normal(0.0, 0.1, mean.shape).astype(np.float32),
                               rng.uniform(0.5, 1.5, variance.shape).astype(np.float32)])
        elif isinstance(layer, (layers.Conv2D, layers.DepthwiseConv2D, layers.Dense)) and layer.use_bias:
            weights = layer.get_weights()
            weights[-1] = rng.normal(0.0, 0.1, weights[-1].shape).astype(np.float32)
            layer.set_weights(weights)


def build(name: str, seed: int = SEED) -> Any:
    """The network ``name`` with seeded random weights (the same numbers on every run)."""
    import keras

    if name not in NETWORKS:
        raise ValueError(f"unknown Keras network {name!r}; known: {', '.join(NETWORKS)}")
    keras.utils.set_random_seed(seed)
    model = NETWORKS[name].build()
    randomise(model, seed)
    return model
