"""The scratch the CMSIS-NN conv/pool layers ask of the arena against a real CMSIS-NN's ``*_get_buffer_size``.

The functions are compiled for each path and run where that core is emulated:
the DSP path on QEMU's Cortex-M4 (``mps2-an386``), the Helium path on its
Cortex-M55 (``mps3-an547``), both built with GCC.  Every size must be
CMSIS-NN's, except 1x1 stride-1 convolutions on the DSP path, which ask for
Arm Compiler 6's larger size (:mod:`deeploy_cortex_m.ops.scratch_sizes`).
(Which sources each entry point needs is ``test_cmsis_sources.py``'s.)

Skipped when CMSIS-NN (``../shared/third-party/cmsis-nn`` or ``$CMSIS_NN_PATH``), arm-none-eabi-gcc or
qemu-system-arm is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from deeploy_core.testing import MPS2_STARTUP
from deeploy_cortex_m.board import arm_board
from deeploy_cortex_m.cores import CORES
from deeploy_cortex_m.ops import scratch_sizes
from deeploy_cortex_m.ops.cmsis_layer import Window

CMSIS_NN = Path(os.environ.get("CMSIS_NN_PATH") or Path(__file__).resolve().parents[4] / "shared/third-party/cmsis-nn")
GCC = shutil.which("arm-none-eabi-gcc")
FLAGS = ["-Os", "-std=c99", f"-I{CMSIS_NN / 'Include'}"]
CORES_BY_PATH = ("cortex-m4", "cortex-m55")
"""One core per CMSIS-NN path: the DSP extension and Helium."""

pytestmark = [
    pytest.mark.skipif(not (CMSIS_NN / "Include/arm_nnfunctions.h").is_file(),
                       reason=f"no CMSIS-NN at {CMSIS_NN} (set CMSIS_NN_PATH or check out ../shared)"),
    pytest.mark.skipif(GCC is None, reason="arm-none-eabi-gcc not installed"),
]


def _compile(core: str, source: Path, obj: Path) -> None:
    subprocess.run([str(GCC), *CORES[core].arch_flags, *FLAGS, "-c", str(source), "-o", str(obj)], check=True,
                   capture_output=True, text=True)


def _link(core: str, objects: list[Path], elf: Path) -> subprocess.CompletedProcess[str]:
    board = arm_board(CORES[core])
    return subprocess.run([str(GCC), *CORES[core].arch_flags, *FLAGS, *board.link_flags, "-T",
                           str(board.linker_script), *map(str, objects), "-o", str(elf)],
                          capture_output=True, text=True)


def _program(core: str, tmp_path: Path, name: str, body: str) -> Path:
    source = tmp_path / f"{name}.c"
    source.write_text(f'#include <stdio.h>\n#include "arm_nnfunctions.h"\n{body}\n')
    obj = tmp_path / f"{name}.o"
    _compile(core, source, obj)
    return obj


def _window(c: int, kh: int, kw: int, pad: int = 0, stride: int = 1, h: int = 8, w: int = 8, oc: int = 8,
            dilation: int = 1) -> Window:
    return Window(1, h, w, c, h, w, oc, kh, kw, (stride, stride), (pad, pad), (dilation, dilation))


CONV_CASES = [_window(3, 3, 3, 1), _window(64, 1, 1), _window(16, 1, 1, stride=2), _window(5, 1, 3, h=1),
              _window(8, 1, 4, h=1, stride=2), _window(7, 5, 5, 2, dilation=2), _window(64, 3, 3, 1),
              _window(8, 1, 3, 1, h=1, w=16), _window(4, 1, 5, 2, h=1, w=9, stride=3), _window(1, 10, 4, 2)]
DEPTHWISE_CASES = [(_window(64, 3, 3, 1, oc=64), 1), (_window(64, 3, 3, 2, oc=64), 1), (_window(8, 5, 5, 2, oc=8), 1),
                   (_window(4, 3, 3, 1, oc=8), 2), (_window(8, 3, 3, 1, oc=8, dilation=2), 1),
                   (_window(1, 3, 3, 1, oc=8), 8), (_window(1, 3, 3, 1, oc=1), 1), (_window(1, 5, 5, 0, oc=16), 16)]
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
@pytest.mark.parametrize("core", CORES_BY_PATH)
def test_scratch_sizes_are_cmsis_nn_s_buffer_sizes(core: str, tmp_path: Path) -> None:
    mve = CORES[core].mve
    startup = tmp_path / "startup.o"
    _compile(core, Path(MPS2_STARTUP), startup)
    calls = [*map(_conv_call, CONV_CASES), *(_depthwise_call(w, m) for w, m in DEPTHWISE_CASES),
             *(f'printf("%ld\\n", (long)arm_avgpool_s8_get_buffer_size({w.ow}, {w.c}));' for w in POOL_CASES)]
    main = _program(core, tmp_path, "main", "int main(void) {\n" + "\n".join(calls) + "\nreturn 0;\n}")
    objects = [startup, main]
    for index, source in enumerate(("Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s8.c",
                                    "Source/ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s8.c",
                                    "Source/PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c")):
        objects.append(tmp_path / f"{index}.o")
        _compile(core, CMSIS_NN / source, objects[-1])
    linked = _link(core, objects, tmp_path / "sizes.elf")
    assert linked.returncode == 0, linked.stderr
    run = subprocess.run([*arm_board(CORES[core]).emulator, str(tmp_path / "sizes.elf")], capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stdout + run.stderr
    cmsis = [int(line) for line in run.stdout.split()]
    ours = [*(scratch_sizes.conv(w, mve) for w in CONV_CASES),
            *(scratch_sizes.depthwise_conv(w, m, mve) for w, m in DEPTHWISE_CASES),
            *(scratch_sizes.avgpool(w, mve) for w in POOL_CASES)]
    assert len(set(ours)) > 5, ours  # the cases exercise distinct sizes
    one_by_one_fast = [i for i, w in enumerate(CONV_CASES) if (w.kh, w.kw, w.stride, w.pad) == (1, 1, (1, 1), (0, 0))]
    for index, (have, want) in enumerate(zip(ours, cmsis, strict=True)):
        if index in one_by_one_fast and not mve:
            assert want == 0 and have == 2 * CONV_CASES[index].c * 2  # GCC's 0, Arm Compiler 6's 2·C int16
        else:
            assert have == want, (index, have, want)
