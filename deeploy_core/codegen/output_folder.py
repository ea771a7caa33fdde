"""Everything an output folder holds besides the generated sources and report.json.

``compile -o OUT`` must give a folder that builds on its own: the runtime
files the network uses (copied), a Makefile, a CMakeLists.txt, a README.md
and, with sample data, the self-test.  Kept apart from
:class:`~deeploy_core.network.GeneratedNetwork`, which only hands over its
files, runtime and report, so the layout of the folder is decided in one place.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi
from deeploy_core.codegen.build_files import PROFILE_MAIN, BuildFlags, cmake_target, cmakelists, makefile
from deeploy_core.codegen.folder_readme import folder_readme
from deeploy_core.codegen.profile_program import profile_main
from deeploy_core.codegen.runtime_files import RuntimeFiles
from deeploy_core.platform.runtime_library import RuntimeLibrary


def build_flags(runtime: RuntimeLibrary) -> BuildFlags:
    """The platform's flags, split into what the build files always pass and what the user may replace."""
    return BuildFlags.split(runtime.cflags, runtime.ldflags)


def folder_texts(files: Mapping[str, str], runtime: RuntimeLibrary, placed: RuntimeFiles, report: Mapping[str, Any],
                 self_test: Mapping[str, str], api: NetworkApi = DEFAULT_API) -> dict[str, str]:
    """Build files, README and self-test sources by relative path (the generated ``files`` not included);
    ``placed``: where the runtime files the network needs go (:func:`runtime_files`)."""
    flags = build_flags(runtime)
    sources = sorted(name for name in files if name.endswith(".c"))
    has_test = bool(self_test)
    texts = {
        **self_test,
        PROFILE_MAIN: profile_main(report, has_test, api),
        "Makefile": makefile(sources, placed, flags, has_test),
        "CMakeLists.txt": cmakelists(sources, placed, flags, has_test, cmake_target(api.prefix)),
        "README.md": folder_readme(str(report.get("network", "network")), str(report.get("platform", "")), placed,
                                   has_test, api, cmake_target(api.prefix)),
    }
    return dict(sorted(texts.items()))


def write_build_folder(directory: Path, files: Mapping[str, str], runtime: RuntimeLibrary, placed: RuntimeFiles,
                       report: Mapping[str, Any], self_test: Mapping[str, str],
                       api: NetworkApi = DEFAULT_API) -> list[Path]:
    """Write the runtime copies, build files, README and self-test into ``directory``; returns the paths."""
    written: list[Path] = []
    for name, text in folder_texts(files, runtime, placed, report, self_test, api).items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    for name, source in placed.copies().items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, path)
        written.append(path)
    return written
