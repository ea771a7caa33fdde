"""Keras networks converted the way users convert them: TFLiteConverter (float and full int8), then tf2onnx, cached.

For each network of :mod:`deeploy_core.testing.models.keras_mlperf` five files:

* ``float.tflite``: ``TFLiteConverter.from_keras_model`` with no options;
* ``int8.tflite``: full integer quantisation (int8 kernels only, int8 input and output, a seeded representative
  dataset);
* ``int8.onnx``: ``python -m tf2onnx.convert --tflite int8.tflite`` (QDQ around float ops);
* ``int8-dequantize.onnx``: the same with ``--dequantize`` (float weights, a Cast of the int8 input);
* ``float.onnx``: ``python -m tf2onnx.convert --tflite float.tflite``.

Converting takes tens of seconds per network, so the files are kept under
``$DEEPLOY_CORE_QUANT_CACHE`` or ``~/.cache/deeploy-core/quant``, in a folder
named by a hash of this file, the network definitions and the versions of
TensorFlow, Keras, tf2onnx and onnx: a change to any of them converts again.

Every conversion runs in a child process: TensorFlow's converter can crash
the interpreter (it segfaults on an int8 LSTM), which must be an error here,
not the end of the test run.  A network's files appear together or not at
all (they are written to a temporary folder that is renamed).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from deeploy_core.testing.models import keras_mlperf

CALIBRATION_SAMPLES = 32
CALIBRATION_SEED = 1
CONVERSION_TIMEOUT_S = 900
_SOURCES = (Path(__file__), Path(keras_mlperf.__file__))
_LIBRARIES = (("tensorflow-cpu", "tensorflow"), ("keras",), ("tf2onnx",), ("onnx",))
# One thread and no banners: the machine is shared, and TensorFlow's start-up lines are noise in an error message.
_CHILD_ENVIRONMENT = {"TF_CPP_MIN_LOG_LEVEL": "2", "OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1",
                      "TF_NUM_INTEROP_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}


class ConversionError(RuntimeError):
    """A converter failed or crashed; the message names the network, the step and the converter's last lines."""


@dataclass(frozen=True)
class ConvertedNetwork:
    """The five files of one network (see the module docstring)."""

    name: str
    folder: Path

    @property
    def float_tflite(self) -> Path:
        return self.folder / "float.tflite"

    @property
    def int8_tflite(self) -> Path:
        return self.folder / "int8.tflite"

    @property
    def int8_onnx(self) -> Path:
        return self.folder / "int8.onnx"

    @property
    def int8_dequantize_onnx(self) -> Path:
        return self.folder / "int8-dequantize.onnx"

    @property
    def float_onnx(self) -> Path:
        return self.folder / "float.onnx"


def cache_folder() -> Path:
    """Where converted files live (created on first use)."""
    folder = Path(os.environ.get("DEEPLOY_CORE_QUANT_CACHE") or Path.home() / ".cache" / "deeploy-core" / "quant")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def installed_version(*names: str) -> str:
    """The installed version of the first distribution of ``names`` found ("absent" when none is): the part of a
    cache key that changes when a converter is upgraded."""
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "absent"


def cache_key() -> str:
    """A short hash of the conversion code, the networks and the versions of the converters."""
    digest = hashlib.sha256()
    for source in _SOURCES:
        digest.update(source.read_bytes())
    for names in _LIBRARIES:
        digest.update(f"{names[0]}={installed_version(*names)}\n".encode())
    return digest.hexdigest()[:16]


def converted(name: str) -> ConvertedNetwork:
    """The network ``name`` converted to the five files, from the cache or converted now (tens of seconds)."""
    if name not in keras_mlperf.NETWORKS:
        raise ValueError(f"unknown Keras network {name!r}; known: {', '.join(keras_mlperf.NETWORKS)}")
    target = cache_folder() / cache_key() / name
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
        try:
            _convert_into(name, scratch)
            try:
                os.replace(scratch, target)
            except OSError:  # another worker finished first: its files are the same
                if not target.is_dir():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return ConvertedNetwork(name, target)


def _convert_into(name: str, folder: Path) -> None:
    _child(name, "TFLiteConverter", [sys.executable, "-m", __name__, name, str(folder)])
    tf2onnx = [sys.executable, "-m", "tf2onnx.convert"]
    _child(name, "tf2onnx --tflite int8.tflite",
           [*tf2onnx, "--tflite", str(folder / "int8.tflite"), "--output", str(folder / "int8.onnx")])
    _child(name, "tf2onnx --tflite int8.tflite --dequantize",
           [*tf2onnx, "--tflite", str(folder / "int8.tflite"), "--dequantize",
            "--output", str(folder / "int8-dequantize.onnx")])
    _child(name, "tf2onnx --tflite float.tflite",
           [*tf2onnx, "--tflite", str(folder / "float.tflite"), "--output", str(folder / "float.onnx")])


def _child(name: str, step: str, command: list[str]) -> None:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=CONVERSION_TIMEOUT_S,
                                env={**os.environ, **_CHILD_ENVIRONMENT})
    except subprocess.TimeoutExpired as error:
        raise ConversionError(f"{name}: {step} did not finish in {CONVERSION_TIMEOUT_S} s") from error
    if result.returncode != 0:
        how = f"crashed (signal {-result.returncode})" if result.returncode < 0 else f"failed (exit {result.returncode})"
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise ConversionError(f"{name}: {step} {how}:\n{tail}")


def calibration_samples(shape: tuple[int, ...], count: int = CALIBRATION_SAMPLES,
                        seed: int = CALIBRATION_SEED) -> list[np.ndarray]:
    """The representative dataset: seeded standard-normal batches of one, as validate's random float inputs."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, *shape)).astype(np.float32) for _ in range(count)]


def _write_tflite_files(name: str, folder: Path) -> None:
    """(In the child process.) Build the Keras network and write ``float.tflite`` and ``int8.tflite``."""
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    model = keras_mlperf.build(name)
    (folder / "float.tflite").write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())

    samples = calibration_samples(keras_mlperf.NETWORKS[name].input_shape)
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: ([sample] for sample in samples)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    (folder / "int8.tflite").write_bytes(converter.convert())


if __name__ == "__main__":  # the child process of _convert_into: NAME FOLDER
    _write_tflite_files(sys.argv[1], Path(sys.argv[2]))
