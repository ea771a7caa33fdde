"""Checking the user's option assignments against the options the selected extensions declare.

Only the extensions a compile selects (its platform, memory level, tiler,
allocator and code transformations) contribute options, so an option of an
installed but unused plugin is an error, not a silent no-op.  Every
assignment must land on exactly one declared option: an unknown name lists
what the selected extensions take (and, when an unselected extension
declares it, which one and how to select it); a name two of them declare
asks for a qualifier; a value of the wrong type, outside the range or not
among the choices names the option, its extension and what it expects.
Giving one option twice is refused rather than silently keeping one value.
Declared defaults fill in everything not given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from deeploy_core.errors import DeeployError
from deeploy_core.options.assignments import OptionAssignment
from deeploy_core.options.resolved import KIND_LABELS, ExtensionOptions, ExtensionValues, owner_label
from deeploy_core.options.spec import OptionSpec, OptionValue, OptionValueError

if TYPE_CHECKING:
    from deeploy_core.extensions import Extension

SELECTING_FLAGS = {"platform": "--platform", "memory_level": "--memory-level", "tiler": "--tiler",
                   "allocator": "--allocator", "code_transformation": "--code-transformation"}
"""The flag that selects an extension of each kind, for hints about options of unselected extensions."""


@dataclass(frozen=True)
class SelectedExtension:
    """An extension the compile uses, with its kind (descriptors of one class serve one kind)."""

    kind: str
    extension: Extension

    @property
    def name(self) -> str:
        return self.extension.name

    @property
    def options(self) -> tuple[OptionSpec, ...]:
        return tuple(getattr(self.extension, "options", ()))

    @property
    def label(self) -> str:
        return owner_label(self.kind, self.name)

    def spec(self, option: str) -> OptionSpec | None:
        return next((spec for spec in self.options if spec.name == option), None)

    def takes(self) -> str:
        return ", ".join(spec.name for spec in self.options) or "no options"


def _kind_of(qualifier: str) -> str | None:
    kind = qualifier.replace("-", "_")
    return kind if kind in KIND_LABELS else None


def resolve_options(selected: Sequence[SelectedExtension], assignments: Sequence[OptionAssignment],
                    installed: Sequence[SelectedExtension] = (), partial: bool = False) -> ExtensionOptions:
    """Every selected extension's values: the assignments checked and converted, defaults for the rest.

    ``installed`` (every installed extension that may take options) only
    serves the hint of an unknown option.  With ``partial``, assignments that
    match no selected extension are skipped instead of refused: the composer
    resolves once before the platform names its chain of code
    transformations (for the platform's own values) and once after, in full.
    """
    given: dict[tuple[int, str], tuple[OptionValue, OptionAssignment]] = {}
    for assignment in assignments:
        target = _target(selected, assignment, installed, partial)
        if target is None:
            continue
        index, spec = target
        owner = selected[index]
        try:
            value = spec.convert(assignment.value)
        except OptionValueError as error:
            raise DeeployError(f"{assignment.source}: option {spec.name!r} of {owner.label} takes {error}, "
                               f"got {_shown(assignment.value)}") from None
        earlier = given.get((index, spec.name))
        if earlier is not None:
            raise DeeployError(f"{assignment.source}: option {spec.name!r} of {owner.label} is already set by "
                               f"{earlier[1].source}; give it once")
        given[(index, spec.name)] = (value, assignment)
    return ExtensionOptions(tuple(
        ExtensionValues(entry.kind, entry.name,
                        {spec.name: given[(index, spec.name)][0] if (index, spec.name) in given else spec.default
                         for spec in entry.options})
        for index, entry in enumerate(selected)))


def _target(selected: Sequence[SelectedExtension], assignment: OptionAssignment,
            installed: Sequence[SelectedExtension], partial: bool) -> tuple[int, OptionSpec] | None:
    """(index into ``selected``, spec) of the option ``assignment`` sets, or a one-line error."""
    name, source = assignment.name, assignment.source
    flag = assignment.flag
    if flag is not None:
        owners = [index for index, entry in enumerate(selected) if entry.kind == flag.kind]
        if not owners:
            raise DeeployError(f"{source}: {flag.absent}")
        owner = selected[owners[0]]
        spec = owner.spec(flag.option)
        if spec is None:
            raise DeeployError(f"{source}: {flag.missing.format(owner=owner.label, takes=owner.takes())}")
        return owners[0], spec
    candidates = list(range(len(selected)))
    if assignment.qualifier is not None:
        kind = _kind_of(assignment.qualifier)
        by_kind = [index for index in candidates if selected[index].kind == kind]
        candidates = by_kind or [index for index in candidates if selected[index].name == assignment.qualifier]
        if not candidates:
            if partial:
                return None
            raise DeeployError(f"{source}: {assignment.qualifier!r} is not a selected extension (selected: "
                               f"{_listing(selected, with_options=False)}){_hint_qualifier(assignment.qualifier, installed)}")
    declaring = [index for index in candidates if selected[index].spec(name) is not None]
    if not declaring:
        if partial:
            return None
        if assignment.qualifier is not None and len(candidates) == 1:
            owner = selected[candidates[0]]
            raise DeeployError(f"{source}: {owner.label} takes no option {name!r} (it takes: {owner.takes()})")
        raise DeeployError(f"{source}: no selected extension takes an option {name!r} (the selected ones take: "
                           f"{_listing(selected, with_options=True)}){_hint_unselected(name, selected, installed)}")
    if len(declaring) > 1:
        labels = " and ".join(selected[index].label for index in declaring)
        example = selected[declaring[0]]
        qualifier = example.kind if sum(selected[i].kind == example.kind for i in declaring) == 1 else example.name
        raise DeeployError(f"{source}: {labels} both take an option {name!r}; say which with a qualifier, "
                           f"e.g. --option {qualifier}.{name}={assignment.value}")
    spec = selected[declaring[0]].spec(name)
    assert spec is not None
    return declaring[0], spec


def _shown(value: object) -> str:
    """A given value as messages quote it: text as typed, anything else as Python writes it."""
    return value if isinstance(value, str) and value.strip() else repr(value)


def _listing(selected: Sequence[SelectedExtension], with_options: bool) -> str:
    if with_options:
        return "; ".join(f"{entry.label}: {entry.takes()}" for entry in selected) or "nothing"
    return ", ".join(entry.label for entry in selected) or "nothing"


def _hint_unselected(name: str, selected: Sequence[SelectedExtension], installed: Sequence[SelectedExtension]) -> str:
    """``; allocator 'tetris-random' takes 'seed' but is not selected (--allocator tetris-random)`` or nothing."""
    chosen = {(entry.kind, entry.name) for entry in selected}
    others = [entry for entry in installed if (entry.kind, entry.name) not in chosen and entry.spec(name) is not None]
    if not others:
        return ""
    shown = ", ".join(f"{entry.label} (select it with {SELECTING_FLAGS.get(entry.kind, '--' + entry.kind)} "
                      f"{entry.name})" for entry in others[:3])
    return f"; {name!r} is an option of {shown}, which {'is' if len(others) == 1 else 'are'} not selected"


def _hint_qualifier(qualifier: str, installed: Sequence[SelectedExtension]) -> str:
    others = [entry for entry in installed if entry.name == qualifier]
    if not others:
        return ""
    entry = others[0]
    return f"; {entry.label} is installed: select it with {SELECTING_FLAGS.get(entry.kind, '--' + entry.kind)} " \
           f"{entry.name}"
