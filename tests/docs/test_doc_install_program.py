"""The program of docs/install.rst prints what ONNX Runtime computes for the same input.

The page's session checks that the built program prints the line the page
shows; this checks the line itself against an independent reference, so
that the page's claim ("ONNX Runtime gives the same class and probability")
holds.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from deeploy_core.validate.reference import run_reference
from tests.docs.doc_blocks import REPO, read_blocks
from tests.docs.doc_commands import console_commands
from tests.docs.workspace import MODEL

PAGE = REPO / "docs" / "install.rst"


def _program_pattern() -> np.ndarray:
    """The input ``main.c`` builds: ``image[i] = (float)(i % 17) / 8.0f - 1.0f`` (checked against the page)."""
    [program] = [block.text for block in read_blocks(PAGE) if block.caption == "build/first-steps/main.c"]
    assert "image[i] = (float)(i % 17) / 8.0f - 1.0f;" in program
    return ((np.arange(3 * 32 * 32) % 17).astype(np.float32) / np.float32(8.0) - np.float32(1.0)).reshape(1, 3, 32, 32)


def test_the_printed_class_and_probability_are_onnx_runtimes(docs_data: Path) -> None:
    commands = [command for block in read_blocks(PAGE) if block.language == "console"
                for command in console_commands(block)]
    [shown] = [line for command in commands if command.argv == ("./build/first-steps/tiny_cnn",) for line in command.expected]
    match = re.fullmatch(r"class (\d+), probability (\d\.\d{4})", shown)
    assert match, shown
    [probabilities] = run_reference(docs_data / MODEL, {"input": _program_pattern()})
    assert int(match[1]) == int(np.argmax(probabilities))
    assert match[2] == f"{float(np.max(probabilities)):.4f}"


def test_following_the_page_writes_only_into_build() -> None:
    """Issue 33 point 8: the page wrote model.onnx, out/, tiled/, main.c and tiny_cnn into the checkout's root,
    where git lists them as untracked; ``build/`` is ignored."""
    ignored = Path(".gitignore")
    assert "build/" in (REPO / ignored).read_text().splitlines()
    blocks = read_blocks(PAGE)
    written = [block.caption for block in blocks if block.caption]
    for block in blocks:
        if block.language != "console":
            continue
        for command in console_commands(block):
            argv = list(command.argv)
            written += [argv[index + 1] for index, arg in enumerate(argv[:-1]) if arg == "-o"]
            if argv[-2:-1] == ["examples/make_tiny_cnn.py"] or (len(argv) > 1 and argv[1] == "examples/make_tiny_cnn.py"):
                written.append(argv[-1])
    assert len(written) >= 5, written
    assert all(path.startswith("build/") for path in written), written
