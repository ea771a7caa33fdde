"""The built-in tilers' configuration: one frozen dataclass whose option fields are also the tilers' declared options.

:class:`TilerOptions` is the one statement of what a built-in tiler can be
told: its fields' names, types and defaults, and the tables below for the
values a field admits.  The tilers' descriptors take their ``options`` from it
(:meth:`TilerOptions.option_specs`), their factory builds one from the values
the user gave (:meth:`TilerOptions.with_options`), and the tiler wrapper is
constructed from it, so the schema, the factory's keywords and the wrapper's
defaults cannot disagree.

Light on purpose: the core's plugin module imports it when plugins load, so
it imports nothing of the tiler itself (the CP model, ortools, the graph).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deeploy_core.errors import DeeployError
from deeploy_core.options.fields import dataclass_option_specs, option_metadata
from deeploy_core.options.spec import OptionSpec, OptionValue, OptionValueError

BUFFERING_SLOTS = {"single": 1, "double": 2}
"""Buffers per streamed tensor in the compute level, by buffering scheme."""
STRATEGIES = {"max": "fewest tiles", "min": "smallest tiles", "random-max": "seeded mix"}
"""The CP-SAT objectives :func:`~deeploy_core.tiling.cp_model.solve_tiling` knows, by name: what each asks for."""
FUSION_MODES = {
    "none": "every layer tiled alone",
    "auto": "chains of layers tiled as one pattern, their intermediate tiles kept in the compute level, where that "
            "moves fewer bytes",
}
"""Fused (multi-layer) tiling, by mode: ``auto`` fuses a chain where the tiler's cost says it moves fewer bytes."""


@dataclass(frozen=True)
class TilerOptions:
    """The tiler's configuration: its name, search strategy, buffering, fusion, seed and deterministic limit.

    The fields with option metadata (``strategy``, ``fusion``) are the
    options the built-in tilers declare (``--option strategy=min``,
    ``--tiling-strategy``, ``--fusion``); the others are set by the tiler's
    registration (``name``, ``buffering``) or fixed (``seed``,
    ``time_limit``).
    """

    name: str = "tiler"
    """The tiler's registered name, which report.json's ``tiling.tiler`` gives."""
    strategy: str = field(default="max", metadata=option_metadata(
        "CP-SAT objective: " + ", ".join(f"{meaning} ({name})" for name, meaning in STRATEGIES.items()),
        choices=STRATEGIES))
    """The CP-SAT objective (:data:`STRATEGIES`)."""
    buffering: str = "single"
    """The buffering scheme (:data:`BUFFERING_SLOTS`); each built-in tiler has one, so it is no option."""
    fusion: str = field(default="auto", metadata=option_metadata(
        "; ".join(f"{mode}: {meaning}" for mode, meaning in FUSION_MODES.items()), choices=FUSION_MODES))
    """Fused tiling (:data:`FUSION_MODES`)."""
    seed: int = 0
    """The seed of ``random-max``'s layer weights and of the solver."""
    time_limit: float = 10.0
    """The solver's deterministic time limit per model, in seconds."""

    def __post_init__(self) -> None:
        if self.buffering not in BUFFERING_SLOTS:
            raise DeeployError(f"unknown buffering {self.buffering!r} ({' or '.join(BUFFERING_SLOTS)})")
        for spec in self.option_specs():
            try:
                spec.convert(getattr(self, spec.name))
            except OptionValueError as error:
                raise DeeployError(f"tiler {self.name!r}: {spec.name} {getattr(self, spec.name)!r} is not "
                                   f"{error}") from None

    @property
    def slots(self) -> int:
        return BUFFERING_SLOTS[self.buffering]

    @classmethod
    def option_specs(cls) -> tuple[OptionSpec, ...]:
        """The options a built-in tiler declares: one per option field, with the field's type and default."""
        return dataclass_option_specs(cls)

    @classmethod
    def with_options(cls, name: str, buffering: str, values: Mapping[str, OptionValue]) -> TilerOptions:
        """Tiler ``name``'s configuration, of scheme ``buffering``, with its options set to ``values`` (checked by
        the composer against :meth:`option_specs`; those left out keep their defaults)."""
        declared = [spec.name for spec in cls.option_specs()]
        unknown = sorted(set(values) - set(declared))
        if unknown:
            raise TypeError(f"tiler {name!r} takes no option {unknown[0]!r} (it takes: {', '.join(declared)})")
        options: dict[str, Any] = dict(values)
        return cls(name=name, buffering=buffering, **options)
