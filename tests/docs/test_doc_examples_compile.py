"""The extensions the docs write are real extensions: registered in a host, they compile a network that runs.

Running a page proves its examples execute; these tests use what they
define.  The tutorial's best-fit allocator, the tiling page's allocator that
places tile buffers inside the tiler's CP-SAT model, and the allocator and
code transformation of the hook reference each go into a
:class:`~deeploy_core.plugins.PluginHost` next to the generic C platform,
compile the example network, and the result is checked: the placement by the
core's independent verifier, the code by building it, running it and
comparing with ONNX Runtime.
"""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

from deeploy_core import AllocatorExtension, hookimpl, hookspecs
from deeploy_core.allocation import (
    AllocationBlock,
    AllocationProblem,
    AllocationSolution,
    TilingModelAllocator,
    find_allocation_errors,
)
from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.network import GeneratedNetwork
from deeploy_core.plugins import PluginHost, PluginStatus
from tests.docs.doc_blocks import REPO, read_blocks
from tests.docs.workspace import MODEL

ARENA_ALIGNMENT = 16
"""The generic C platform's arena alignment: every offset in its report is a multiple of it."""


def _block_text(page: str, caption: str = "", language: str = "python") -> list[str]:
    return [block.text for block in read_blocks(REPO / page) if block.caption == caption
            and block.language == language]


def _tutorial_plugin(tmp_path: Path) -> ModuleType:
    """The tutorial's ``deeploy_bestfit/plugin.py``, written out and imported as a module."""
    [source] = _block_text("docs/writing-a-plugin.rst", "deeploy-bestfit/deeploy_bestfit/plugin.py")
    path = tmp_path / "tutorial_bestfit_plugin.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("tutorial_bestfit_plugin", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page_namespace(page: str) -> dict[str, Any]:
    """What a page's uncaptioned Python blocks define, run in order in one namespace."""
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for source in _block_text(page):
        exec(compile(source, page, "exec"), namespace)  # noqa: S102 - the docs' own example
    return namespace


def _hook_example(hook_name: str) -> dict[str, Any]:
    """The names the hook reference's example of ``hook_name`` defines (run as the doctest it is)."""
    [test] = [t for t in doctest.DocTestFinder().find(hookspecs) if t.name.endswith(f".{hook_name}")]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, clear_globs=False)
    assert runner.failures == 0
    return test.globs


def _allocator_plugin(name: str, factory: Callable[[], Any]) -> object:
    class Plugin:
        @hookimpl
        def register_allocators(self, register: Callable[[AllocatorExtension], None]) -> None:
            register(AllocatorExtension(name=name, factory=factory, description=f"docs example {name}"))

    return Plugin()


def _compile_and_run(host: PluginHost, docs_data: Path, docs_inputs: dict[str, np.ndarray],
                     docs_golden: list[np.ndarray], options: CompileOptions) -> GeneratedNetwork:
    generated, result = validate_with_data(docs_data / MODEL, options, host, docs_inputs, docs_golden,
                                           atol=1e-5, rtol=1e-5)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    return generated


def _arena_is_placed_validly(report: dict[str, Any], allocator: str) -> None:
    """The arena of ``report`` was placed by ``allocator``, and the independent verifier accepts it."""
    memory = report["memory"]
    assert memory["allocator"] == allocator
    buffers = memory["buffers"]
    problem = AllocationProblem(
        tuple(AllocationBlock(b["name"], b["first_step"], b["end_step"], b["size"]) for b in buffers),
        alignment=ARENA_ALIGNMENT)
    solution = AllocationSolution(offsets={b["name"]: b["offset"] for b in buffers})
    assert find_allocation_errors(problem, solution) == []
    assert memory["arena_bytes"] >= solution.peak(problem) >= problem.lower_bound() == memory["lower_bound_bytes"]


def test_the_tutorial_allocator_places_and_runs_the_example_network(
        tmp_path: Path, generic_c_host: PluginHost, docs_data: Path, docs_inputs: dict[str, np.ndarray],
        docs_golden: list[np.ndarray]) -> None:
    plugin = _tutorial_plugin(tmp_path)
    assert generic_c_host.add_plugin(plugin, name="bestfit").status is PluginStatus.OK
    untiled = _compile_and_run(generic_c_host, docs_data, docs_inputs, docs_golden,
                               CompileOptions(platform="generic-c", allocator="best-fit"))
    _arena_is_placed_validly(untiled.report, "best-fit")
    assert untiled.report["memory"]["arena_bytes"] == untiled.report["memory"]["lower_bound_bytes"]
    tiled = _compile_and_run(generic_c_host, docs_data, docs_inputs, docs_golden,
                             CompileOptions(platform="generic-c", allocator="best-fit", level_sizes={"L1": 16000}))
    _arena_is_placed_validly(tiled.report, "best-fit")
    assert tiled.report["memory_levels"]["L1"]["used"] <= 16000


def test_the_tutorial_allocator_refuses_a_capacity_below_what_it_needs(tmp_path: Path) -> None:
    best_fit = _tutorial_plugin(tmp_path).BestFit()
    blocks = (AllocationBlock("a", 0, 2, 40), AllocationBlock("b", 1, 3, 24), AllocationBlock("c", 2, 4, 40))
    fits = best_fit.solve(AllocationProblem(blocks, capacity=64, alignment=8))
    assert fits.feasible and find_allocation_errors(AllocationProblem(blocks, capacity=64, alignment=8), fits) == []
    refused = best_fit.solve(AllocationProblem(blocks, capacity=63))
    assert not refused.feasible and "capacity is 63" in refused.reason


def test_the_tiling_page_allocator_places_tile_buffers_inside_the_model(
        generic_c_host: PluginHost, docs_data: Path, docs_inputs: dict[str, np.ndarray],
        docs_golden: list[np.ndarray]) -> None:
    example = _page_namespace("docs/tiling.rst")["AddressesInTheModel"]
    labels: list[str] = []

    class Recorded(example):  # type: ignore[misc, valid-type]
        def add_to_tiling_model(self, model: Any, blocks: Any, capacity: int, label: str) -> Any:
            labels.append(label)
            return super().add_to_tiling_model(model, blocks, capacity, label)

    assert isinstance(Recorded(), TilingModelAllocator)
    generic_c_host.add_plugin(_allocator_plugin("addresses-in-the-model", Recorded), name="tiling-example")
    generated = _compile_and_run(generic_c_host, docs_data, docs_inputs, docs_golden,
                                 CompileOptions(platform="generic-c", allocator="addresses-in-the-model",
                                                level_sizes={"L1": 12000}))
    assert len(labels) >= len(generated.report["tiling"]["layers"]) > 0
    assert generated.report["memory_levels"]["L1"]["used"] <= 12000


def test_the_hook_reference_allocator_compiles_the_example_network(
        generic_c_host: PluginHost, docs_data: Path, docs_inputs: dict[str, np.ndarray],
        docs_golden: list[np.ndarray]) -> None:
    example = _hook_example("register_allocators")
    generic_c_host.add_plugin(example["StackPlugin"](), name="stack-allocator")
    generated = _compile_and_run(generic_c_host, docs_data, docs_inputs, docs_golden,
                                 CompileOptions(platform="generic-c", allocator="stack"))
    _arena_is_placed_validly(generated.report, "stack")
    buffers = generated.report["memory"]["buffers"]
    assert generated.report["memory"]["arena_bytes"] >= sum(b["size"] for b in buffers), "it never reuses memory"


def test_the_hook_reference_code_transformation_marks_every_layer(
        generic_c_host: PluginHost, docs_data: Path, docs_inputs: dict[str, np.ndarray],
        docs_golden: list[np.ndarray]) -> None:
    example = _hook_example("register_code_transformations")
    generic_c_host.add_plugin(example["MarkingPlugin"](), name="marking")
    generated = _compile_and_run(generic_c_host, docs_data, docs_inputs, docs_golden,
                                 CompileOptions(platform="generic-c", code_transformations=("mark-layers",)))
    network = generated.files["Network.c"]
    layers = generated.report["layers"]
    for layer in layers:
        assert layer["code_transformations"] == ["memory-passthrough", "mark-layers", "closure"]
        starts = network.index(f"/* layer {layer['index']} starts */")
        assert starts < network.index(f"/* layer {layer['index']} ends */")

