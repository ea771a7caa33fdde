"""Running an allocator plugin on Deeploy's peer networks: the two checks every allocator's tests want.

An allocator author needs to know (1) that the activation arena it lays out
for a real network is valid and how close it comes to the lower bound, and
(2) that tile buffers it places in a small L1 give a network that still
computes the golden outputs.  Both helpers take a plugin host that holds a
platform (``generic-c``) and the allocator, and re-check the maps
independently instead of trusting the compiler's own verification.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deeploy_core.allocation import AllocationBlock, AllocationProblem, AllocationSolution, find_allocation_errors
from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.testing.peer_tests import PeerTest
from deeploy_core.validate.build import Toolchain


def arena_with(peer: PeerTest, allocator: str, host: PluginHost, platform: str = "generic-c") -> tuple[Any, dict[str, Any]]:
    """Compile ``peer`` untiled with ``allocator``; re-verify its arena map; return the deployer and the memory report.

    The memory report holds ``arena_bytes``, ``lower_bound_bytes`` and ``allocator``.
    """
    deployer, generated = compile_model(
        peer.model, CompileOptions(platform=platform, input_types=peer.input_types(), allocator=allocator), host)
    compilation = deployer.compilation  # the arena plan and the buffers, shared by the whole deployer chain
    plan = compilation.memory_plan
    if plan is None:
        raise TypeError(f"platform {platform!r} left no arena plan in its compilation")
    blocks = tuple(AllocationBlock(name, life.first, life.end, max(compilation.ctxt[name].size_bytes, 1))
                   for name, life in plan.lifetimes.items())
    problem = AllocationProblem(blocks, capacity=plan.arena_bytes)
    errors = find_allocation_errors(problem, AllocationSolution(plan.offsets))
    assert errors == [], f"{peer.name}: the arena map of {allocator!r} is invalid: {errors[0]}"
    memory = generated.report["memory"]
    assert memory["allocator"] == allocator
    return deployer, memory


def check_tiled_run(peer: PeerTest, allocator: str, host: PluginHost, cache_dir: Path, l1: int = 16000,
                    buffering: str = "double", platform: str = "generic-c") -> None:
    """Tile ``peer`` into an L1 of ``l1`` bytes with ``allocator`` placing the tile buffers; build, run, compare.

    Built with the warning flags of the peer tests (warnings are errors).
    """
    options = CompileOptions(platform=platform, input_types=peer.input_types(), allocator=allocator,
                             level_sizes={"L1": l1}, buffering=buffering)
    tolerance = 1e-4 if peer.is_float else 0.0
    generated, result = validate_model(peer.model, options, host, inputs_npz=peer.inputs, outputs_npz=peer.outputs,
                                       atol=tolerance, rtol=tolerance, repeats=1, cache_dir=cache_dir,
                                       toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    level = generated.report["memory_levels"]["L1"]
    assert level["used"] <= level["capacity"] == l1
