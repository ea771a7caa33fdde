"""What a deployment produces."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi
from deeploy_core.codegen.output_folder import write_build_folder
from deeploy_core.codegen.runtime_files import RuntimeFiles, runtime_files
from deeploy_core.ir.tensor_spec import TensorSpec as TensorSpec
from deeploy_core.platform import RuntimeLibrary


@dataclass
class GeneratedNetwork:
    """Generated files by name, the report, and how to build them.

    Written out (:meth:`write`) it is the deliverable: a folder that builds on
    its own, with the runtime sources it calls, build files, a README and,
    when :attr:`self_test` holds sources, a self-test.
    """

    files: dict[str, str]
    report: dict[str, Any]
    runtime: RuntimeLibrary
    inputs: list[TensorSpec] = field(default_factory=list)
    outputs: list[TensorSpec] = field(default_factory=list)
    api: NetworkApi = DEFAULT_API
    """The names and arena ownership ``Network.h`` exports (``--prefix``, ``--arena``)."""
    self_test: dict[str, str] = field(default_factory=dict)
    """Self-test sources by relative path (``compile --inputs``); empty: the folder has no self-test."""
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    """Seconds: per stage (``stages``, filled by the stage driver; ``write`` added by :meth:`write`) and per
    stage part (e.g. ``tiling``: model build, solve, allocation).  Kept out of report.json, which must be
    byte-identical for the same model and options; :meth:`write_timings` puts them in a file of their own."""

    @cached_property
    def placed_runtime(self) -> RuntimeFiles:
        """The runtime files the generated code needs and where the output folder holds them (found once: the
        files are final when the network is generated)."""
        return runtime_files(self.files, self.runtime)

    def write(self, directory: Path) -> list[Path]:
        """Write every file (and ``report.json``), the runtime copies, build files, README and self-test into
        ``directory``; returns the paths written.

        ``timings.json`` is not among them: a folder written by this method is the
        same for the same model and options, whatever the machine's speed.
        """
        started = time.perf_counter()
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in sorted(self.files.items()):
            path = directory / name
            path.write_text(text, encoding="utf-8")
            written.append(path)
        report = directory / "report.json"
        report.write_text(json.dumps(self.report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(report)
        written += write_build_folder(directory, self.files, self.runtime, self.placed_runtime, self.report,
                                      self.self_test, self.api)
        self.timings.setdefault("stages", {})["write"] = time.perf_counter() - started
        return written

    def write_timings(self, directory: Path) -> Path:
        """Write :attr:`timings` as ``timings.json`` beside ``report.json`` (stages in the order they ran).

        Separate from :meth:`write` because the figures change from run to run;
        seconds are rounded to microseconds, finer than their run-to-run spread.
        """
        rounded = {part: {name: round(seconds, 6) for name, seconds in figures.items()}
                   for part, figures in self.timings.items()}
        path = directory / "timings.json"
        path.write_text(json.dumps(rounded, indent=2) + "\n", encoding="utf-8")
        return path
