"""Every CMSIS-NN mapper declares exactly the CMSIS-NN sources its kernel needs (issue 35).

An output folder compiles only the sources its layers' mappers declare, so a
missing file is an undefined reference at the user's link and a superfluous
one is dead weight.  For each mapper of :func:`cmsis_mappers` (whoever added
it) on each of CMSIS-NN's paths -- the DSP extension (Cortex-M4) and Helium
(Cortex-M55), which reach different files -- a program for that core that
takes the address of the CMSIS-NN entry functions the mapper's name names is
linked with exactly the declared sources,
each compiled with its declared definitions, and without ``--gc-sections``:
every reference of every declared file must resolve (no undefined
references), and every declared file must be needed (dropping any one of them
breaks the link) — a file no kernel function reaches is not declared.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from deeploy_core.plugin_api import ExternalLibrary, NodeMapper
from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2, PACKAGE_FILES, compile_flags
from deeploy_cortex_m.cores import CORES
from deeploy_cortex_m.names import CORTEX_M4, CORTEX_M55
from deeploy_cortex_m.ops import cmsis_mappers
from plugins.cortex_m.tests.cmsis_tflite_cases import cmsis_nn_path

PATHS = {CORTEX_M4: False, CORTEX_M55: True}
"""A core per CMSIS-NN path -> whether it is Helium's."""
MAPPERS = [(core, op, mapper) for core, mve in PATHS.items() for op, mappers in sorted(cmsis_mappers(mve).items())
           for mapper in mappers]


def _reason() -> str | None:
    if cmsis_nn_path() is None:
        return "CMSIS-NN not found: set CMSIS_NN_PATH or keep it at ../shared/third-party/cmsis-nn"
    return CORTEX_M4_MPS2.missing()


pytestmark = pytest.mark.skipif(_reason() is not None, reason=_reason() or "")


def _library(mapper: NodeMapper) -> ExternalLibrary:
    assert mapper.runtime is not None and len(mapper.runtime.external) == 1, f"{mapper.label()} declares no library"
    return mapper.runtime.external[0]


def _link(core: str, library: ExternalLibrary, sources: tuple[str, ...], entries: list[str],
          folder: Path) -> subprocess.CompletedProcess[str]:
    root = cmsis_nn_path()
    assert root is not None
    compiler = CORTEX_M4_MPS2.cross.compiler
    m4_flags = CORES[CORTEX_M4].arch_flags
    arch = [flag for flag in compile_flags(CORTEX_M4_MPS2, "-Os", ()) if flag not in m4_flags]
    flags = [*CORES[core].arch_flags, *arch, *(f"-I{root / include}" for include in library.include_dirs)]
    main = folder / "main.c"
    keep = ", ".join(f"(const void *)&{entry}" for entry in entries)
    main.write_text(f'#include "arm_nnfunctions.h"\nconst void *volatile dc_entries[] = {{{keep}}};\n'
                    "int main(void) { return dc_entries[0] == 0; }\n")
    defines = dict(library.defines)
    objects = []
    for index, source in enumerate([str(PACKAGE_FILES / CORTEX_M4_MPS2.startup_sources[0]), str(main),
                                    *(str(root / name) for name in sources)]):
        relative = next((name for name in sources if str(root / name) == source), "")
        obj = folder / f"{index:02d}.o"
        subprocess.run([compiler, *flags, *(f"-D{name}" for name in defines.get(relative, ())), "-c", source,
                        "-o", str(obj)], check=True, capture_output=True, text=True)
        objects.append(str(obj))
    return subprocess.run([compiler, *flags, *CORTEX_M4_MPS2.link_flags, *objects, "-lm", "-o",
                           str(folder / "program.elf")], capture_output=True, text=True)


@pytest.mark.parametrize("core,op,mapper", MAPPERS, ids=[f"{core}-{mapper.label()}" for core, _, mapper in MAPPERS])
def test_declared_sources_link_a_program_calling_the_kernel(core: str, op: str, mapper: NodeMapper,
                                                            tmp_path: Path) -> None:
    library = _library(mapper)
    entries = re.findall(r"\barm_\w+", mapper.label())
    assert entries, f"{mapper.label()}: the name should say which CMSIS-NN function the layer calls"
    result = _link(core, library, library.sources, entries, tmp_path)
    assert result.returncode == 0, f"{core}: {op} / {mapper.label()}: {result.stderr}"
    for dropped in library.sources:
        rest = tuple(name for name in library.sources if name != dropped)
        assert _link(core, library, rest, entries, tmp_path).returncode != 0, \
            f"{core}: {mapper.label()}: {dropped} is not needed"


def test_the_paths_reach_different_files() -> None:
    """The table is per path, not one union: Helium's convolutions need no int16 widening, its depthwise wrapper
    reaches the regular convolution."""
    dsp, mve = ({mapper.label(): set(_library(mapper).sources) for c, _, mapper in MAPPERS if c == core}
                for core in PATHS)
    conv = "CMSIS-NN arm_convolve_wrapper_s8"
    assert "Source/NNSupportFunctions/arm_s8_to_s16_unordered_with_offset.c" in dsp[conv] - mve[conv]
    depthwise = "CMSIS-NN arm_depthwise_conv_wrapper_s8"
    assert "Source/ConvolutionFunctions/arm_convolve_s8.c" in mve[depthwise] - dsp[depthwise]


def test_single_rounding_is_defined_for_the_fully_connected_path_only() -> None:
    """Conv (and Add/Mul, Softmax) keep CMSIS-NN's double rounding, LiteRT's for them; FullyConnected rounds once."""
    defined = {source for _, _, mapper in MAPPERS for source, names in _library(mapper).defines
               if "CMSIS_NN_USE_SINGLE_ROUNDING" in names}
    assert defined == {"Source/FullyConnectedFunctions/arm_fully_connected_s8.c",
                       "Source/FullyConnectedFunctions/arm_fully_connected_per_channel_s8.c",
                       "Source/NNSupportFunctions/arm_nn_vec_mat_mult_t_s8.c",
                       "Source/NNSupportFunctions/arm_nn_vec_mat_mult_t_per_ch_s8.c"}
    for _, _, mapper in MAPPERS:
        if "fully_connected" not in mapper.label():
            assert not defined & set(_library(mapper).sources), f"{mapper.label()} shares a single-rounding source"
