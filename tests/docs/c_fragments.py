"""C fragments of the docs, compiled into a program around a really generated network and run.

A fragment is what a page shows of a program that uses ``Network.h``: its
``#include`` lines and the statements that feed the network and read
``scores``.  The wrapper adds only what the page leaves to the reader — the
input data in ``image`` and a ``main`` — and prints ``scores``, so a fragment
that forgets a header, misnames the API or reads the wrong buffer fails to
build (``-Werror -pedantic``) or prints the wrong numbers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from deeploy_core.network import GeneratedNetwork
from deeploy_core.testing.c_flags import WARNING_FLAGS
from deeploy_core.validate import Toolchain

FRAGMENT_INPUT = "image"
FRAGMENT_OUTPUT = "scores"


def wrap_fragment(fragment: str, image: np.ndarray) -> str:
    """A whole C program: the fragment's includes, ``image`` holding ``image``, the statements, then ``scores``."""
    lines = fragment.splitlines()
    includes = [line for line in lines if line.lstrip().startswith("#")]
    statements = [line for line in lines if not line.lstrip().startswith("#")]
    values = ",\n    ".join(float(value).hex() for value in np.asarray(image, dtype=np.float32).ravel())
    body = "\n".join(f"    {line}" if line.strip() else "" for line in statements)
    return "\n".join([
        "/* A documentation fragment, wrapped by tests/docs/c_fragments.py. */",
        *includes,
        "#include <stdio.h>",
        "",
        f"static const float {FRAGMENT_INPUT}[{image.size}] = {{\n    {values}\n}};",
        "",
        "int main(void) {",
        body,
        "    for (unsigned long k = 0; k < DeeployNetwork_outputs_bytes[0] / sizeof(float); ++k) {",
        f"        printf(\"%.9g\\n\", (double){FRAGMENT_OUTPUT}[k]);",
        "    }",
        "    return 0;",
        "}",
        "",
    ])


def run_fragment(fragment: str, generated: GeneratedNetwork, image: np.ndarray, folder: Path) -> np.ndarray:
    """Build the wrapped fragment with ``generated`` and its runtime in ``folder``; return what it printed."""
    generated.write(folder)
    program = folder / "fragment_main.c"
    program.write_text(wrap_fragment(fragment, image), encoding="utf-8")
    runtime = generated.runtime
    toolchain = Toolchain.from_environment(extra_flags=WARNING_FLAGS)
    sources = [folder / name for name in sorted(generated.files) if name.endswith(".c")]
    executable = folder / "fragment"
    command = [*toolchain.compiler, *runtime.cflags, *toolchain.extra_flags, f"-I{folder}",
               *[f"-I{path}" for path in runtime.include_dirs], str(program), *map(str, sources),
               *map(str, sorted(runtime.sources)), "-o", str(executable), *runtime.ldflags]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, f"the fragment does not build:\n{built.stderr}"
    ran = subprocess.run([str(executable)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, f"the fragment's program failed ({ran.returncode}):\n{ran.stderr}"
    return np.array([float(value) for value in ran.stdout.split()], dtype=np.float32)
