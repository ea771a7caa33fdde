"""The stage driver shared by deployers and their wrappers.

Deployment is a fixed sequence of stages.  The driver always calls each stage on
the *outermost* object, so a wrapper that overrides a stage (the tiler wrapper
overriding ``bind``, say) is reached even though the stages themselves are
implemented by the platform deployer deep inside.  A stage therefore never calls
another stage itself; only the driver does.

The driver also times each stage and hands the progress receiver of the
running deployment to every stage and wrapper through the shared
:class:`~deeploy_core.compilation.Compilation` (:attr:`StageDriver.progress`),
so long loops deep inside a stage can report.
"""

from __future__ import annotations

import time
from os import PathLike
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol, runtime_checkable

from deeploy_core.progress import SILENT_PROGRESS, Progress, ProgressLike, as_progress

if TYPE_CHECKING:
    from deeploy_core.compilation import Compilation

STAGES: tuple[str, ...] = ("frontend", "lower", "parse", "bind", "generate")
"""Stage method names in the order the driver runs them."""

STAGE_TIMINGS = "stages"
"""The key of the per-stage seconds in a result's ``timings`` (see :class:`TimedResult`)."""


@runtime_checkable
class TimedResult(Protocol):
    """A deployment result that keeps wall-clock figures apart from its deterministic output
    (:class:`~deeploy_core.network.GeneratedNetwork`)."""

    timings: dict[str, dict[str, float]]


@runtime_checkable
class ReportedResult(Protocol):
    """A deployment result with a ``report.json`` to fill (:class:`~deeploy_core.network.GeneratedNetwork`)."""

    report: dict[str, Any]


class StageDriver:
    """Mixin with the one method that runs every stage in order on ``self``."""

    stages: ClassVar[tuple[str, ...]] = STAGES

    @property
    def compilation(self) -> Compilation:
        """The compilation the whole chain shares (the platform deployer's; wrappers return their inner one's)."""
        raise NotImplementedError

    @property
    def progress(self) -> Progress:
        """Where the running :meth:`deploy` reports to; silent outside a deployment.

        The receiver is kept in the shared compilation, so every wrapper in
        the chain reads the same one.
        """
        return self.compilation.progress

    def unwrap(self) -> Any:
        """The platform deployer at the bottom of the chain (both kinds of driver override this)."""
        raise NotImplementedError

    def deploy(
        self,
        model: str | PathLike[str],
        progress: ProgressLike = None,
        after_stage: Callable[[str, Any], None] | None = None,
    ) -> Any:
        """Run all stages on ``model`` (a path; kept as ``compilation.model``) and return what the last stage returned.

        ``progress`` (a :class:`~deeploy_core.progress.Progress` or a
        callback taking the stage name) is told each stage before it starts
        and, through :attr:`progress`, whatever the stages report inside;
        ``after_stage(stage, deployer)`` runs after each one (e.g. to export
        state).  When the result keeps ``timings`` (:class:`TimedResult`), the
        seconds of every stage go into ``timings["stages"]``, in stage order.
        When it has a report (:class:`ReportedResult`), the report gets the
        compile's ``options`` and ``provenance`` here, whatever deployer or
        wrappers made it: the driver is the one place every compile passes.
        """
        receiver = as_progress(progress)
        compilation = self.compilation
        compilation.progress = receiver
        compilation.model = str(model)
        seconds: dict[str, float] = {}
        result: Any = None
        try:
            for stage in self.stages:
                receiver.stage(stage)
                started = time.perf_counter()
                result = getattr(self, stage)()
                seconds[stage] = time.perf_counter() - started
                if after_stage is not None:
                    after_stage(stage, self)
        finally:
            compilation.progress = SILENT_PROGRESS
        if isinstance(result, TimedResult):
            result.timings[STAGE_TIMINGS] = seconds
        if isinstance(result, ReportedResult):
            self._record_compile(result.report)
        return result

    def _record_compile(self, report: dict[str, Any]) -> None:
        """Add what the compile was made of: the extensions' resolved ``options`` and the ``provenance``."""
        from deeploy_core.report.provenance import report_provenance, taking_part

        compilation = self.compilation
        operators = [layer.mapper.extension for layer in compilation.layers if layer.mapper.extension]
        report["options"] = compilation.extension_options.to_report()
        report["provenance"] = report_provenance(
            compilation.model, compilation.host,
            taking_part(compilation.platform_name, compilation.extension_options, operators))
