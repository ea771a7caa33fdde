"""What docs/generated-code.rst claims about firmware holds beyond the page's own session.

The page's session builds and runs the two-network program and checks that
it prints the lines the page shows; here those lines are checked against
ONNX Runtime on the same inputs, so that the page's claim ("ONNX Runtime
gives the same classes and probabilities") holds.  The linker-script sketch
of the page is linked for real: a Cortex-M4 image of the example network
compiled with the page's section options must hold the weights in flash and
the arena in the second RAM without contents, and without ``NOLOAD`` the
arena's zeros would be stored (the reason the page gives for it).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from deeploy_core.validate.reference import run_reference
from tests.docs.doc_blocks import REPO, read_blocks
from tests.docs.doc_commands import DocCommand, console_commands
from tests.docs.doc_shell import DocShell
from tests.docs.workspace import MODEL, fresh_workspace

PAGE = REPO / "docs" / "generated-code.rst"
ROUND = re.compile(r"round (\d): image class (\d+) \((\d\.\d{4})\), keyword (\d+) \((\d\.\d{4})\)")
ARENA = re.compile(r"arena: (\d+) bytes for both \(cnn (\d+), kws (\d+)\)")


def _file_block(caption: str) -> str:
    [text] = [block.text for block in read_blocks(PAGE) if block.caption == caption]
    return text


def _commands() -> list[DocCommand]:
    return [command for block in read_blocks(PAGE) if block.language == "console"
            for command in console_commands(block)]


def _pattern(count: int, modulus: int, divisor: float) -> np.ndarray:
    """``(float)(i % modulus) / divisor - 1.0f`` for i < count, in float32 as the C program computes it."""
    return (np.arange(count) % modulus).astype(np.float32) / np.float32(divisor) - np.float32(1.0)


def test_the_two_networks_print_what_onnx_runtime_computes(docs_data: Path, tmp_path: Path) -> None:
    program = _file_block("two_networks.c")
    assert "image[i] = (float)(i % 17) / 8.0f - 1.0f;" in program
    assert "features[i] = (float)(i % 9) / 4.0f - 1.0f;" in program
    (tmp_path / "make_kws.py").write_text(_file_block("make_kws.py"), encoding="utf-8")
    made = subprocess.run([sys.executable, "make_kws.py", "kws.onnx"], cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    [classes] = run_reference(docs_data / MODEL, {"input": _pattern(3 * 32 * 32, 17, 8.0).reshape(1, 3, 32, 32)})
    [keywords] = run_reference(tmp_path / "kws.onnx", {"features": _pattern(64, 9, 4.0).reshape(1, 64)})

    [shown] = [command.expected for command in _commands() if command.argv == ("./two_networks",)]
    [arena] = [match for line in shown if (match := ARENA.fullmatch(line))]
    assert int(arena[1]) == max(int(arena[2]), int(arena[3]))
    rounds = [match for line in shown if (match := ROUND.fullmatch(line))]
    assert [int(match[1]) for match in rounds] == [1, 2]
    for match in rounds:
        assert int(match[2]) == int(np.argmax(classes))
        assert match[3] == f"{float(np.max(classes)):.4f}"
        assert int(match[4]) == int(np.argmax(keywords))
        assert match[5] == f"{float(np.max(keywords)):.4f}"


_MEMORY = """MEMORY
{
  FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 1024K
  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 128K
  SRAM2 (rw) : ORIGIN = 0x10000000, LENGTH = 256K
}
ENTRY(main)
"""
"""The memory map the sketch assumes (``FLASH``, ``SRAM2``) plus the RAM the rest of a program needs."""

_OWN_SECTIONS = """  .text : { *(.text*) *(.rodata*) } > FLASH
  .data : { *(.data*) } > RAM AT > FLASH
  .bss : { *(.bss*) *(COMMON) } > RAM"""
"""What the sketch's comment stands for: the output sections of the part's own script."""

_APPLICATION = '#include "Network.h"\nint main(void) { InitNetwork(); RunNetwork(); return 0; }\n'


def _linker_script(sketch: str, keep_noload: bool = True) -> str:
    lines = [_OWN_SECTIONS if line.strip().startswith("/*") else line for line in sketch.splitlines()]
    script = _MEMORY + "\n".join(lines) + "\n"
    return script if keep_noload else script.replace(" (NOLOAD)", "")


def _sections(objdump: str) -> dict[str, tuple[int, int, str]]:
    """``objdump -h``: section name -> (size, address, flags)."""
    found: dict[str, tuple[int, int, str]] = {}
    lines = objdump.splitlines()
    for index, line in enumerate(lines[:-1]):
        words = line.split()
        if len(words) == 7 and words[0].isdigit():
            found[words[1]] = (int(words[2], 16), int(words[3], 16), lines[index + 1].strip())
    return found


def test_the_linker_sketch_puts_the_weights_in_flash_and_loads_no_arena(docs_data: Path, tmp_path: Path) -> None:
    tools = {name: shutil.which(f"arm-none-eabi-{name}") for name in ("gcc", "ar", "objdump")}
    if not all(tools.values()):
        pytest.skip("arm-none-eabi-gcc not installed (Debian packages gcc-arm-none-eabi libnewlib-arm-none-eabi)")
    [sketch] = [block.text for block in read_blocks(PAGE) if block.language == "text" and "NOLOAD" in block.text]
    [placing] = [command for command in _commands()
                 if command.argv[:1] == ("deeploy-core",) and "--weights-section" in command.argv]
    [cross] = [command for command in _commands()
               if any(arg.startswith("CC=arm-none-eabi-gcc") for arg in command.argv)]
    [cflags] = [arg.split("=", 1)[1] for arg in cross.argv if arg.startswith("CFLAGS=")]
    shell = DocShell(fresh_workspace(docs_data, tmp_path / "work"), tmp_path / "scratch")
    output = placing.argv[placing.argv.index("-o") + 1]
    folder = shell.folder / output
    for command in (placing, dataclasses.replace(cross, argv=tuple(output if arg == "out" else arg
                                                                      for arg in cross.argv))):
        result = shell.run(command)
        assert result.returncode == 0, f"{command.text}:\n{result.stderr}"
    assert (folder / "libnetwork.a").is_file()
    (tmp_path / "app.c").write_text(_APPLICATION, encoding="utf-8")
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))

    def link(script: str, name: str) -> dict[str, tuple[int, int, str]]:
        (tmp_path / f"{name}.ld").write_text(script, encoding="utf-8")
        elf = tmp_path / f"{name}.elf"
        linked = subprocess.run([str(tools["gcc"]), *cflags.split(), f"-I{folder}", str(tmp_path / "app.c"),
                                 str(folder / "libnetwork.a"), "-lm", "-nostartfiles", "--specs=nosys.specs",
                                 "-T", str(tmp_path / f"{name}.ld"), "-o", str(elf)], capture_output=True, text=True)
        assert linked.returncode == 0, linked.stderr
        dumped = subprocess.run([str(tools["objdump"]), "-h", str(elf)], capture_output=True, text=True, check=True)
        return _sections(dumped.stdout)

    sections = link(_linker_script(sketch), "sketch")
    weights_size, weights_address, weights_flags = sections[".dc_weights"]
    assert 0x08000000 <= weights_address < 0x08100000 and weights_size >= report["weight_bytes"] > 0
    assert "CONTENTS" in weights_flags and "READONLY" in weights_flags
    arena_size, arena_address, arena_flags = sections[".dc_arena"]
    assert 0x10000000 <= arena_address < 0x10040000 and arena_size == report["memory"]["arena_bytes"]
    assert "CONTENTS" not in arena_flags and "LOAD" not in arena_flags, arena_flags

    without_noload = link(_linker_script(sketch, keep_noload=False), "loaded")
    assert "CONTENTS" in without_noload[".dc_arena"][2], "the page says the arena's zeros are stored without NOLOAD"
