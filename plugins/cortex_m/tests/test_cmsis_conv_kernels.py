"""The CMSIS-NN conv/pool kernels' declarations against a real CMSIS-NN: source closures and scratch sizes.

* Each entry point's declared sources (:data:`deeploy_cortex_m.ops.cmsis_sources.SOURCES`) link: a Cortex-M4
  program that references the entry point links with exactly those files (no ``--gc-sections``, so every
  reference of every listed file must resolve), and dropping any one of them breaks the link.
* The scratch the layers ask of the arena equals CMSIS-NN's ``*_get_buffer_size`` for the DSP path, run on
  QEMU's Cortex-M4 (GCC): 1x1 stride-1 convolutions excepted, which ask for Arm Compiler 6's larger size.

Skipped when CMSIS-NN (``../shared/third-party/cmsis-nn`` or ``$CMSIS_NN_PATH``), arm-none-eabi-gcc or
qemu-system-arm is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from deeploy_core.testing import MPS2_LINKER_SCRIPT, MPS2_STARTUP
from deeploy_cortex_m.cores import CORES
from deeploy_cortex_m.ops import scratch_sizes
from deeploy_cortex_m.ops.cmsis_layer import Window
from deeploy_cortex_m.ops.cmsis_sources import SOURCES

CMSIS_NN = Path(os.environ.get("CMSIS_NN_PATH") or Path(__file__).resolve().parents[4] / "shared/third-party/cmsis-nn")
GCC = shutil.which("arm-none-eabi-gcc")
FLAGS = [*CORES["cortex-m4"].arch_flags, "-Os", "-std=c99", f"-I{CMSIS_NN / 'Include'}"]

pytestmark = [
    pytest.mark.skipif(not (CMSIS_NN / "Include/arm_nnfunctions.h").is_file(),
                       reason=f"no CMSIS-NN at {CMSIS_NN} (set CMSIS_NN_PATH or check out ../shared)"),
    pytest.mark.skipif(GCC is None, reason="arm-none-eabi-gcc not installed"),
]


def _compile(source: Path, obj: Path) -> None:
    subprocess.run([str(GCC), *FLAGS, "-c", str(source), "-o", str(obj)], check=True, capture_output=True, text=True)


def _link(objects: list[Path], elf: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(GCC), *FLAGS, "--specs=rdimon.specs", "-nostartfiles", "-T", str(MPS2_LINKER_SCRIPT),
                           *map(str, objects), "-o", str(elf)], capture_output=True, text=True)


def _program(tmp_path: Path, name: str, body: str) -> Path:
    source = tmp_path / f"{name}.c"
    source.write_text(f'#include <stdio.h>\n#include "arm_nnfunctions.h"\n{body}\n')
    obj = tmp_path / f"{name}.o"
    _compile(source, obj)
    return obj


@pytest.fixture(scope="module")
def startup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    obj = tmp_path_factory.mktemp("startup") / "startup.o"
    _compile(Path(MPS2_STARTUP), obj)
    return obj


@pytest.mark.parametrize("entry", sorted(SOURCES))
def test_declared_sources_are_exactly_what_the_entry_point_needs(entry: str, tmp_path: Path, startup: Path) -> None:
    main = _program(tmp_path, "main", f"int main(void) {{ void *volatile entry = (void *){entry}; "
                                      "return entry == 0; }")
    objects = []
    for index, source in enumerate(SOURCES[entry]):
        objects.append(tmp_path / f"{index}.o")
        _compile(CMSIS_NN / source, objects[-1])
    linked = _link([startup, main, *objects], tmp_path / "all.elf")
    assert linked.returncode == 0, linked.stderr
    for index, source in enumerate(SOURCES[entry]):
        without = _link([startup, main, *objects[:index], *objects[index + 1:]], tmp_path / "less.elf")
        assert without.returncode != 0, f"{source} is declared but {entry} links without it"


def _window(c: int, kh: int, kw: int, pad: int = 0, stride: int = 1, h: int = 8, w: int = 8, oc: int = 8,
            dilation: int = 1) -> Window:
    return Window(1, h, w, c, h, w, oc, kh, kw, (stride, stride), (pad, pad), (dilation, dilation))


CONV_CASES = [_window(3, 3, 3, 1), _window(64, 1, 1), _window(16, 1, 1, stride=2), _window(5, 1, 3, h=1),
              _window(8, 1, 4, h=1, stride=2), _window(7, 5, 5, 2, dilation=2), _window(64, 3, 3, 1)]
DEPTHWISE_CASES = [(_window(64, 3, 3, 1, oc=64), 1), (_window(64, 3, 3, 2, oc=64), 1), (_window(8, 5, 5, 2, oc=8), 1),
                   (_window(4, 3, 3, 1, oc=8), 2), (_window(8, 3, 3, 1, oc=8, dilation=2), 1)]
POOL_CASES = [_window(3, 2, 2), _window(64, 25, 5)]


def _dims(w: Window) -> str:
    return f"{{{w.n}, {w.h}, {w.w}, {w.c}}}"


def _conv_call(w: Window) -> str:
    return (f"{{ cmsis_nn_conv_params p = {{0, 0, {{{w.stride[1]}, {w.stride[0]}}}, {{{w.pad[1]}, {w.pad[0]}}}, "
            f"{{{w.dilation[1]}, {w.dilation[0]}}}, {{-128, 127}}}}; cmsis_nn_dims i = {_dims(w)}, "
            f"f = {{{w.oc}, {w.kh}, {w.kw}, {w.c}}}, o = {{{w.n}, {w.oh}, {w.ow}, {w.oc}}}; "
            f'printf("%ld\\n", (long)arm_convolve_wrapper_s8_get_buffer_size(&p, &i, &f, &o)); }}')


def _depthwise_call(w: Window, mult: int) -> str:
    return (f"{{ cmsis_nn_dw_conv_params p = {{0, 0, {mult}, {{{w.stride[1]}, {w.stride[0]}}}, "
            f"{{{w.pad[1]}, {w.pad[0]}}}, {{{w.dilation[1]}, {w.dilation[0]}}}, {{-128, 127}}}}; "
            f"cmsis_nn_dims i = {_dims(w)}, f = {{1, {w.kh}, {w.kw}, {w.oc}}}, o = {{{w.n}, {w.oh}, {w.ow}, {w.oc}}}; "
            f'printf("%ld\\n", (long)arm_depthwise_conv_wrapper_s8_get_buffer_size(&p, &i, &f, &o)); }}')


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm not installed")
def test_scratch_sizes_are_cmsis_nn_s_dsp_buffer_sizes(tmp_path: Path, startup: Path) -> None:
    from deeploy_core.testing.emulated_targets import run_program

    calls = [*map(_conv_call, CONV_CASES), *(_depthwise_call(w, m) for w, m in DEPTHWISE_CASES),
             *(f'printf("%ld\\n", (long)arm_avgpool_s8_get_buffer_size({w.ow}, {w.c}));' for w in POOL_CASES)]
    main = _program(tmp_path, "main", "int main(void) {\n" + "\n".join(calls) + "\nreturn 0;\n}")
    objects = [startup, main]
    for index, source in enumerate(("Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s8.c",
                                    "Source/ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s8.c",
                                    "Source/PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c")):
        objects.append(tmp_path / f"{index}.o")
        _compile(CMSIS_NN / source, objects[-1])
    linked = _link(objects, tmp_path / "sizes.elf")
    assert linked.returncode == 0, linked.stderr
    run = run_program(tmp_path / "sizes.elf")
    assert run.exit_code == 0, run.describe()
    cmsis = [int(line) for line in run.stdout.split()]
    ours = [*map(scratch_sizes.conv, CONV_CASES), *(scratch_sizes.depthwise_conv(w, m) for w, m in DEPTHWISE_CASES),
            *map(scratch_sizes.avgpool, POOL_CASES)]
    one_by_one_fast = [i for i, w in enumerate(CONV_CASES) if (w.kh, w.kw, w.stride, w.pad) == (1, 1, (1, 1), (0, 0))]
    for index, (have, want) in enumerate(zip(ours, cmsis, strict=True)):
        if index in one_by_one_fast:
            assert want == 0 and have == 2 * CONV_CASES[index].c * 2  # GCC's 0, Arm Compiler 6's 2·C int16
        else:
            assert have == want, (index, have, want)
