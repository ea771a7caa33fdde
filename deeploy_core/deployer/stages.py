"""The stage driver shared by deployers and their wrappers.

Deployment is a fixed sequence of stages.  The driver always calls each stage on
the *outermost* object, so a wrapper that overrides a stage (the tiler wrapper
overriding ``bind``, say) is reached even though the stages themselves are
implemented by the platform deployer deep inside.  A stage therefore never calls
another stage itself; only the driver does.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

STAGES: tuple[str, ...] = ("frontend", "lower", "parse", "bind", "generate")
"""Stage method names in the order the driver runs them."""


class StageDriver:
    """Mixin with the one method that runs every stage in order on ``self``."""

    stages: ClassVar[tuple[str, ...]] = STAGES

    def deploy(
        self,
        model: Any,
        progress: Callable[[str], None] | None = None,
        after_stage: Callable[[str, Any], None] | None = None,
    ) -> Any:
        """Run all stages on ``model`` and return what the last stage returned.

        ``progress`` is told the name of each stage before it starts;
        ``after_stage(stage, deployer)`` runs after each one (e.g. to export state).
        """
        self.model = model
        result: Any = None
        for stage in self.stages:
            if progress is not None:
                progress(stage)
            result = getattr(self, stage)()
            if after_stage is not None:
                after_stage(stage, self)
        return result
