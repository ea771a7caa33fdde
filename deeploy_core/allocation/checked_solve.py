"""Calling an allocator's ``solve`` without trusting what comes back.

An allocator is plugin code: it may raise, return ``None`` or a plain dict, or
put strings or floats where offsets belong.  Left alone, each of these would
surface later as an unrelated ``AttributeError`` or ``TypeError`` deep inside
the core, with a traceback that points at the wrong project.  Checking the
*form* of the answer right at the call lets the error name the plugin instead.
Whether the offsets are *valid* (no overlap, aligned, within capacity) stays
the verifier's job, :func:`~deeploy_core.allocation.find_allocation_errors`.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from deeploy_core.allocation.problem import AllocationProblem, AllocationSolution
from deeploy_core.errors import DeeployError, PluginError
from deeploy_core.extension_origin import ExtensionOrigin


def malformed_solution(solution: object) -> str | None:
    """Why ``solution`` is not an :class:`AllocationSolution` with integer offsets per block id, or None."""
    if not isinstance(solution, AllocationSolution):
        return f"solve() returned {type(solution).__name__}, expected an AllocationSolution"
    if not isinstance(solution.offsets, Mapping):
        return f"solve() returned offsets of type {type(solution.offsets).__name__}, expected a dict of block id to int"
    for block_id, offset in solution.offsets.items():
        if not isinstance(block_id, str):
            return f"solve() returned an offset keyed by {block_id!r}, expected a block id (str)"
        if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
            return f"solve() returned offset {offset!r} for block {block_id!r}, expected an integer"
    return None


def allocator_origin(host: Any, name: str) -> ExtensionOrigin | None:
    """The plugin that registered allocator ``name`` in ``host`` (None without a host or registration)."""
    if host is None:
        return None
    try:
        return host.registered("allocator", name).origin
    except DeeployError:
        return None


def allocator_error(name: str, origin: ExtensionOrigin | None, cause: BaseException) -> DeeployError:
    """The one-line error for allocator ``name`` failing with ``cause``, naming its plugin when known."""
    if origin is None:
        return DeeployError(f"allocator {name!r} failed: {type(cause).__name__}: {cause}")
    distribution = f"{origin.distribution} {origin.version}".strip()
    return PluginError(origin.plugin, distribution, f"solving with allocator {name!r}", cause)


def solve_checked(
    allocator: Any, problem: AllocationProblem, name: str, origin: ExtensionOrigin | None
) -> AllocationSolution:
    """``allocator.solve(problem)``, or a one-line error naming the plugin if it raises or answers malformed.

    A :class:`~deeploy_core.errors.DeeployError` raised by the allocator is
    already meant for the user and passes through unchanged.
    """
    try:
        solution = allocator.solve(problem)
    except DeeployError:
        raise
    except Exception as error:  # noqa: BLE001 - the error boundary around plugin code
        raise allocator_error(name, origin, error) from error
    reason = malformed_solution(solution)
    if reason is not None:
        raise allocator_error(name, origin, TypeError(reason))
    return solution
