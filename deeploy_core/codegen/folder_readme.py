"""README.md of an output folder: how to build the network and call it, for whoever receives the folder."""

from __future__ import annotations

from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi
from deeploy_core.codegen.runtime_files import RuntimeFiles
from deeploy_core.mapping.external_library import ExternalLibrary
from deeploy_core.tolerance import MIN_COSINE, SCALE_TOLERANCE


def _call(api: NetworkApi) -> list[str]:
    """The calling sequence in the network's own names (``--prefix``), with the caller's arena for ``--arena user``."""
    if api.user_arena:
        init = [
            f"/* your buffer of {api.arena_bytes} bytes at a multiple of {api.arena_alignment}; between runs it is",
            "   yours again (e.g. the arena of another network run after this one) */",
            f"static unsigned char arena[{api.arena_bytes}] __attribute__((aligned({api.arena_alignment})));",
            f"if ({api.init}(arena) != 0) {{ /* refused: NULL or misaligned */ }}",
        ]
    else:
        init = [f"{api.init}();                                   /* once */"]
    return [
        "```c",
        '#include <string.h>',
        '#include "Network.h"',
        "",
        *init,
        f"memcpy({api.inputs}[0], data, {api.inputs_bytes}[0]);",
        f"{api.run}();                                    /* as often as needed */",
        f"/* results: {api.outputs}[i], {api.outputs_bytes}[i] bytes each */",
        "```",
    ]


def _cross_compile(runtime: RuntimeFiles) -> list[str]:
    """The cross-compile line: a Cortex-M4 with its FPU for a plain C folder; the chip SDK's tools for a folder
    whose code calls a HAL (pulp_hal.h), which only that SDK implements."""
    if any(path.endswith("pulp_hal.h") for path in runtime.headers):
        return ["make CC=<SDK>-gcc AR=<SDK>-ar CFLAGS='<SDK flags>'   # a chip build: its SDK implements",
                "                                       # runtime/include/pulp_hal.h (objects rebuilt on new flags)"]
    return ["make CC=arm-none-eabi-gcc AR=arm-none-eabi-ar \\",
            "     CFLAGS='-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os'   # Cortex-M4F",
            "                                       # (objects are rebuilt when CC or the flags change)"]


def _board_build(runtime: RuntimeFiles, self_test: bool) -> list[str]:
    """The build lines of a folder for a microcontroller board: the Makefile cross-compiles by default."""
    board = runtime.board
    assert board is not None
    lines = [f"make                                   # libnetwork.a (C99) with {board.compiler} "
             f"{' '.join(board.arch_flags)}",
             "make CC=... DC_ARCH='...'              # another compiler or core flags (objects are rebuilt)"]
    for library in _used(runtime):
        lines.append(f"{f'make {library.variable}=/path/to/it':<39}# the library's files the network calls, "
                     "from your copy")
    if self_test:
        emulator = board.emulator[0] if board.emulator else "its emulator"
        lines.append(f"make test                              # the self-test, run on {board.name} ({emulator})")
    lines.append("make profile                           # says how to time layers on the board")
    return lines


def _used(runtime: RuntimeFiles) -> list[ExternalLibrary]:
    """The user-provided libraries some layer calls (a platform may declare one that no layer of this network
    needs)."""
    return [library for library in runtime.external if library.sources]


def _external_section(runtime: RuntimeFiles) -> list[str]:
    """What each user-provided library is and which of its files the folder compiles."""
    lines: list[str] = []
    for library in _used(runtime):
        lines += [
            "",
            f"## {library.variable}",
            "",
            "Some layers call a library this folder does not contain: get it from",
            f"{library.where} and give its root as `{library.variable}` to `make`",
            f"(or `cmake -D{library.variable}=...`; a root given at compile time is the Makefile's default).",
            f"The build compiles the {len(library.sources)} of its files the network calls (listed in the",
            f"Makefile) and stops with one line if `{library.marker}` is not under that root.",
        ]
    return lines


def _board_profile(api: NetworkApi) -> list[str]:
    """How to time layers on the board (``make profile`` runs on a host only)."""
    return [
        "",
        "## Profile",
        "",
        f"Build `Network.c` with `-DDC_PROFILE`: `RunNetwork` then calls `{api.profile_mark}(k)` before layer k",
        "and after the last; define that function in your firmware to read a cycle counter (DWT_CYCCNT on a",
        "Cortex-M).  Without `-DDC_PROFILE` the marks compile to nothing.  `deeploy-core validate` on this",
        "platform counts every layer's instructions on the emulated board.",
    ]


def folder_readme(network: str, platform: str, runtime: RuntimeFiles, self_test: bool,
                  api: NetworkApi = DEFAULT_API, cmake_target: str = "network") -> str:
    """The README text (no paths outside the folder, no dates: it must be the same on every compile)."""
    lines = [
        f"# {network} ({platform})",
        "",
        "Generated by deeploy_core.  This folder builds on its own: the generated network, the runtime kernels",
        "it calls (`runtime/src`) and the headers they include (`runtime/include`).",
        "",
        "## Build",
        "",
        "```sh",
    ]
    if runtime.board is not None:
        lines += _board_build(runtime, self_test)
    else:
        lines += ["make                                   # libnetwork.a (C99)", *_cross_compile(runtime)]
        if self_test:
            lines.append("make test                              # build and run the self-test")
        lines.append("make profile REPEATS=20                # every layer's best time over 20 runs, on this host")
    lines += [
        f"cmake -S . -B cmake-build && cmake --build cmake-build   # the same library as CMake target `{cmake_target}`",
        "```",
        "",
        "Or add the folder to your own build: compile `Network.c`, `Network_weights.c` and `runtime/src/*.c`",
        "with `-I. -Iruntime/include` and `-std=c99`"
        + (" (a host program adds `runtime/host/*.c` with `-Iruntime/host -pthread`)." if runtime.host_sources else "."),
        "Add `-ffunction-sections -fdata-sections` (the Makefile and CMake always do) and link the firmware",
        "with `-Wl,--gc-sections`: a kernel file holds a whole operator family, and only the functions the",
        "network calls should reach flash.",
        "",
        "## Call",
        "",
        *_call(api),
        "",
        "`report.json` describes the layers, the memory plan and the input/output types.",
        *_external_section(runtime),
    ]
    if runtime.host_sources:
        lines += [
            "",
            "## Hardware abstraction",
            "",
            "The generated code reaches the hardware only through `runtime/include/pulp_hal.h`, whose comments list",
            "what a port must provide (cluster start-up and fork, core id, barriers, the L1/L2/L3 regions and",
            "the DMA).  On a chip, the SDK implements that header.  `runtime/host` implements it on a Linux host",
            "(threads for cores, guarded memories, deferred DMA) so that the network can be tested on a PC: the",
            "Makefile links it into the self-test and `program`, never into `libnetwork.a`; CMake builds it as",
            f"`{cmake_target}_host` (turn it off with `-DNETWORK_HOST_EMULATION=OFF`).",
        ] if any(path.endswith("pulp_hal.h") for path in runtime.headers) else [
            "",
            "## Host emulation",
            "",
            "`runtime/host` emulates the hardware on a host; it is linked into test programs, not into",
            "`libnetwork.a`.",
        ]
    lines += _board_profile(api) if runtime.board is not None else [
        "",
        "## Profile",
        "",
        "`make profile` compiles `Network.c` again with `-DDC_PROFILE`, which makes `RunNetwork` call",
        f"`{api.profile_mark}(k)` before layer k and after the last, links `profile/dc_profile_main.c`",
        "(which reads `clock_gettime` there) and prints each layer's best time, op, kernel and MACs",
        "on the self-test's inputs." if self_test else "on zeroed inputs (compile with --inputs for real data).",
        "On a microcontroller, build with `-DDC_PROFILE` and define that function yourself to read a cycle",
        "counter.  Without `-DDC_PROFILE` the marks compile to nothing.",
    ]
    if self_test:
        lines += [
            "",
            "## Self-test",
            "",
            "`selftest/` holds the inputs and expected outputs given to `compile --inputs/--outputs` and a main",
            "that runs the network once, prints the largest error and the cosine similarity of every output and",
            "exits non-zero on a mismatch.  The rule is that of `deeploy-core validate`: a float output passes",
            f"when its largest error is at most {SCALE_TOLERANCE:g} times the expected values' max |value| and its",
            f"cosine similarity is at least {MIN_COSINE:g} (expected values that are all zeros cannot be judged and",
            "fail), unless `--atol`/`--rtol` were given to `compile` (then |actual - expected| <= atol + rtol *",
            "|expected|); integer outputs must match exactly, quantised outputs within `--lsb-tolerance` steps.",
        ]
    return "\n".join(lines) + "\n"
