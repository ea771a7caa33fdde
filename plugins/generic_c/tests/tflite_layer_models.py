"""Single-layer Keras models quantised by TFLiteConverter (full int8) and converted by tf2onnx --tflite, cached.

Each model isolates one TFLite int8 kernel (Conv, depthwise Conv, Dense per
channel, per tensor and without bias, Add with a fused Relu, Mul, AveragePool, Softmax at two input
scales), so a difference from LiteRT
points at one kernel's arithmetic.  Converting imports TensorFlow and takes
a few seconds per model, so it runs once, in a child process (the converter
can crash the interpreter), and the files are kept under
``$DEEPLOY_CORE_QUANT_CACHE`` or ``~/.cache/deeploy-core/quant`` in a folder
named by a hash of this file and the versions of TensorFlow, tf2onnx and onnx.

Run as a script (the child): ``python tflite_layer_models.py FOLDER`` writes
``NAME.tflite`` and ``NAME.onnx`` for every model into FOLDER.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from deeploy_core.testing.tflite_export import cache_folder, installed_version

SEED = 3
CALIBRATION_SAMPLES = 64
TIMEOUT_S = 1200
MODELS = ("conv_relu", "conv_strided", "depthwise_relu6", "dense_relu", "dense_per_tensor", "dense_no_bias", "add_relu",
          "mul", "avgpool_same",
          "avgpool_valid", "global_average", "softmax", "softmax_wide")
SPREAD = {"softmax_wide": 40.0}
"""Standard deviation of a model's calibration data (default 2): softmax_wide's input scale puts most int8
differences beyond TFLite's softmax radius (its exp underflows to the output minimum there)."""
_ENVIRONMENT = {"TF_CPP_MIN_LOG_LEVEL": "3", "OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1",
                "TF_NUM_INTEROP_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}


def cache_key() -> str:
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for names in (("tensorflow-cpu", "tensorflow"), ("keras",), ("tf2onnx",), ("onnx",)):
        digest.update(f"{names[0]}={installed_version(*names)}\n".encode())
    return digest.hexdigest()[:16]


def converted() -> Path:
    """The folder holding ``NAME.tflite`` and ``NAME.onnx`` for every model (converted now if not cached)."""
    root = cache_folder()
    target = root / f"tflite-layers-{cache_key()}"
    if target.is_dir():
        return target
    scratch = Path(tempfile.mkdtemp(prefix=".tflite-layers-", dir=root))
    try:
        result = subprocess.run([sys.executable, __file__, str(scratch)], capture_output=True, text=True,
                                timeout=TIMEOUT_S, env={**os.environ, **_ENVIRONMENT})
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
            raise RuntimeError(f"converting the single-layer TFLite models failed (exit {result.returncode}):\n{tail}")
        try:
            os.replace(scratch, target)
        except OSError:  # another worker finished first: its files are the same
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def _build(name: str):  # type: ignore[no-untyped-def]
    """(Keras model, input shapes without the batch) of ``name``; weights and biases random but seeded."""
    import keras

    layers = keras.layers
    keras.utils.set_random_seed(SEED)
    bias = keras.initializers.RandomNormal(stddev=0.3, seed=SEED)
    if name in ("add_relu", "mul"):
        a, b = keras.Input((6, 6, 4), batch_size=1), keras.Input((6, 6, 4), batch_size=1)
        y = layers.ReLU()(layers.Add()([a, b])) if name == "add_relu" else layers.Multiply()([a, b])
        return keras.Model([a, b], y), [(6, 6, 4), (6, 6, 4)]
    if name.startswith("dense"):  # 512 outputs: enough requantisation ties to tell one rounding from two
        x = keras.Input((64,), batch_size=1)
        dense = layers.Dense(512, activation="relu" if name == "dense_relu" else None, bias_initializer=bias,
                             use_bias=name != "dense_no_bias")
        return keras.Model(x, dense(x)), [(64,)]
    if name in ("softmax", "softmax_wide"):
        x = keras.Input((37,), batch_size=1)
        return keras.Model(x, layers.Softmax()(x)), [(37,)]
    x = keras.Input((9, 9, 3), batch_size=1)
    if name == "conv_relu":
        y = layers.Conv2D(8, 3, padding="same", activation="relu", bias_initializer=bias)(x)
    elif name == "conv_strided":
        y = layers.Conv2D(6, 3, strides=2, bias_initializer=bias)(x)
    elif name == "depthwise_relu6":
        y = layers.ReLU(max_value=6.0)(layers.DepthwiseConv2D(3, padding="same", bias_initializer=bias)(x))
    elif name == "avgpool_same":
        y = layers.AveragePooling2D(3, 2, padding="same")(x)
    elif name == "avgpool_valid":
        y = layers.AveragePooling2D(2)(x)
    elif name == "global_average":  # TFLite's MEAN over H and W (it rescales: output scale of its own)
        y = layers.GlobalAveragePooling2D()(layers.Conv2D(16, 3, padding="same", activation="relu")(x))
    else:
        raise ValueError(f"unknown model {name!r}")
    return keras.Model(x, y), [(9, 9, 3)]


def _write(folder: Path) -> None:
    """(In the child.) Every model as ``NAME.tflite`` (full int8, int8 input and output) and ``NAME.onnx``."""
    import tensorflow as tf
    import tf2onnx

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    for name in MODELS:
        model, shapes = _build(name)
        rng = np.random.default_rng(SEED)
        samples = [[(rng.standard_normal((1, *shape)) * SPREAD.get(name, 2.0)).astype(np.float32) for shape in shapes]
                   for _ in range(CALIBRATION_SAMPLES)]
        converter = tf.lite.TFLiteConverter.from_keras_model(model)
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = lambda samples=samples: iter(samples)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
        if name == "dense_per_tensor":  # what converters before per-channel Dense produced
            converter._experimental_disable_per_channel_quantization_for_dense_layers = True
        tflite = folder / f"{name}.tflite"
        tflite.write_bytes(converter.convert())
        tf2onnx.convert.from_tflite(str(tflite), output_path=str(folder / f"{name}.onnx"))


if __name__ == "__main__":
    _write(Path(sys.argv[1]))
