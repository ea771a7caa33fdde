"""Shared fixtures: the backends to test, and the published benchmark instances when ``../shared`` is there."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from deeploy_core.allocation import AllocationProblem, read_instance
from deeploy_core.plugins import PluginHost
from deeploy_minimalloc import native_available
from deeploy_minimalloc import plugin as minimalloc_plugin

REPO = Path(__file__).resolve().parents[3]
CHALLENGING = REPO.parent / "shared" / "bench" / "alloc" / "minimalloc-challenging"

REQUIRE_NATIVE = "DEEPLOY_MINIMALLOC_REQUIRE_NATIVE"
"""Set (CI sets it) to make a missing C core a failure instead of a skip, so a broken build cannot hide."""

if os.environ.get(REQUIRE_NATIVE) and not native_available():
    raise pytest.UsageError(f"{REQUIRE_NATIVE} is set but the MiniMalloc C search core was not built in this install")

_NO_NATIVE = pytest.mark.skipif(not native_available(), reason="the C search core was not built in this install")


@pytest.fixture(params=[pytest.param("native", marks=_NO_NATIVE), "python"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn; the native one is skipped (with the reason) when it was not built."""
    return str(request.param)


@pytest.fixture
def native_backend() -> str:
    if not native_available():
        pytest.skip("the C search core was not built in this install")
    return "native"


@pytest.fixture(scope="session")
def challenging_dir() -> Path:
    if not CHALLENGING.is_dir():
        pytest.skip(f"the published MiniMalloc instances are not available: {CHALLENGING} is missing "
                    f"(they live in ../shared next to the repository)")
    return CHALLENGING


@pytest.fixture(scope="session")
def challenging(challenging_dir: Path) -> Callable[[str], AllocationProblem]:
    """Instance ``A``…``K`` at the capacity in its file name (1048576), or ``input`` (capacity 12)."""

    def load(name: str) -> AllocationProblem:
        return read_instance(challenging_dir / ("input.12.csv" if name == "input" else f"{name}.1048576.csv"))

    return load


@pytest.fixture(scope="session")
def minimalloc_host() -> PluginHost:
    """The generic C platform (to compile real networks) and this plugin, nothing else."""
    generic_c = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C platform plugin is not installed")
    host = PluginHost()
    host.add_plugin(generic_c, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(minimalloc_plugin, name="minimalloc", distribution="deeploy-minimalloc")
    return host


@pytest.fixture(scope="session")
def minimalloc_runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("minimalloc-runtime-cache")
