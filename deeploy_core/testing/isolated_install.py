"""A throw-away virtual environment holding the core and only the plugins a test names.

Plugin authors want to prove that their distribution works when it is the
only one installed next to the core (no accidental import of a sibling
plugin, a clear error when a user asks for one that is missing).  Creating a
venv and downloading onnx, ortools … for that would take minutes and need the
network, so the venv sees this environment's *third-party* packages through a
filtered copy of its site directories that leaves out every ``deeploy``
distribution, and the named projects are installed into it for real with pip
(from copies, so no build artefact lands in the checkout).

Example (in a test)::

    python = isolated_venv(tmp_path, [repo, repo / "plugins" / "generic_c", repo / "plugins" / "tetris"])
    subprocess.run([python, "-m", "deeploy_core", "plugins", "--json"], check=True)
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Callable, Mapping, Sequence

_BUILD_PRODUCTS = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.so", "*.pyd")
_TOP_LEVEL_LEFT_BEHIND = frozenset({".git", ".venv", "build", "tests", "docs", "plugins", "bench", "examples"})
"""Folders of a project checkout that are not part of what pip installs (the core's checkout holds the plugins)."""


def _left_behind(project: Path) -> Callable[[str, list[str]], set[str]]:
    top = str(project)

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = set(_BUILD_PRODUCTS(directory, names))
        if directory == top:
            skipped |= _TOP_LEVEL_LEFT_BEHIND.intersection(names)
        return skipped

    return ignore


def _filtered_site(directory: Path) -> Path:
    """Links to every entry of this environment's site directories except deeploy's own."""
    directory.mkdir()
    for parent in dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"]]):
        for entry in sorted(Path(parent).iterdir()):
            if "deeploy" in entry.name.lower() or (directory / entry.name).exists():
                continue
            (directory / entry.name).symlink_to(entry)
    return directory


def isolated_venv(root: Path, projects: Sequence[Path], env: Mapping[str, str] | None = None) -> Path:
    """Create ``root/venv``, install ``projects`` (project folders) into it and return its Python.

    ``env`` overrides environment variables of the ``pip install`` (e.g.
    ``{"CC": "false"}`` to install as if there were no C compiler).  With no
    ``projects`` the venv holds no deeploy distribution at all, for a test that
    runs the installs itself.
    """
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    target_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
    shared = _filtered_site(root / "shared-site")
    Path(target_site, "parent_packages.pth").write_text(f"import site; site.addsitedir({str(shared)!r})\n")
    copies = []
    for project in map(Path.resolve, projects):
        copy = root / "sources" / project.name
        copies.append(shutil.copytree(project, copy, ignore=_left_behind(project)))
    if copies:
        subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                        "--no-index", "--no-build-isolation", "--no-cache-dir", *map(str, copies)],
                       check=True, cwd=root, env={**os.environ, **(env or {})}, capture_output=True)
    return python
