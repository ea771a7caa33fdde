"""One option an extension declares: its name, type, default, help and the values it admits.

An option that only one extension understands (a cluster's core count, a
tiler's search objective, an allocator's seed) used to be a field of the
core's compile options, so a plugin could not add one of its own.  Now each
extension lists its options as :class:`OptionSpec` values on its descriptor;
the core checks what the user gives against them (``--option NAME=VALUE``)
before any factory runs, lists them in ``--help``, ``plugins --json`` and the
docs, and records the values used in report.json.  The schema is plain data,
so declaring it costs a plugin nothing at load time.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Union

OptionValue = Union[int, float, str, bool, None]
"""What an option holds once checked: a value of its declared type, or None for "unset" (only as a default)."""

OPTION_TYPES: dict[type, str] = {int: "int", float: "float", str: "str", bool: "bool"}
"""The types an option may declare, with the name listings and JSON use for them."""

_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class OptionValueError(ValueError):
    """A value an option does not admit; the message says what it expects ("an integer from 1 to 16")."""


@dataclass(frozen=True)
class OptionSpec:
    """An extension's option: ``name`` (what ``--option NAME=VALUE`` names), ``type`` and ``default``.

    ``default`` is a value of ``type`` or None, which means "unset: the
    extension decides" (a memory level keeps its level's own size).
    ``choices`` limits the values to a list; ``minimum``/``maximum`` bound a
    number.  The declaration is checked when the descriptor is made, so a
    plugin with a malformed option fails at load with its name in the message,
    not when a user first gives the option.
    """

    name: str
    type: type
    default: OptionValue
    help: str
    choices: tuple[OptionValue, ...] | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_PATTERN.match(self.name):
            raise ValueError(f"option name {self.name!r} is invalid: use lower-case letters, digits and '_', "
                             f"starting with a letter")
        if self.type not in OPTION_TYPES:
            raise TypeError(f"option {self.name!r}: type must be int, float, str or bool, got {self.type!r}")
        if self.choices is not None:
            object.__setattr__(self, "choices", tuple(self.choices))
            if not self.choices:
                raise ValueError(f"option {self.name!r}: choices must not be empty")
            for choice in self.choices:
                self._declared(choice, "choice")
        if (self.minimum is not None or self.maximum is not None) and self.type not in (int, float):
            raise TypeError(f"option {self.name!r}: only int and float options take a minimum or maximum")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise ValueError(f"option {self.name!r}: minimum {self.minimum} exceeds maximum {self.maximum}")
        if self.default is not None:
            self._declared(self.default, "default")

    def _declared(self, value: object, role: str) -> None:
        """A declared default or choice must itself be a valid value (the plugin's mistake, named at load)."""
        try:
            self.convert(value)
        except OptionValueError as error:
            raise ValueError(f"option {self.name!r}: {role} {value!r} is not {error}") from None

    @property
    def type_name(self) -> str:
        """``int``, ``float``, ``str`` or ``bool``."""
        return OPTION_TYPES[self.type]

    def expected(self) -> str:
        """What a value must be, in words: ``an integer from 1 to 16``, ``one of max, min``."""
        if self.choices is not None:
            return f"one of {', '.join(str(choice) for choice in self.choices)}"
        what = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}[self.type]
        if self.minimum is not None and self.maximum is not None:
            return f"{what} from {self.minimum} to {self.maximum}"
        if self.minimum is not None:
            return f"{what} of at least {self.minimum}"
        if self.maximum is not None:
            return f"{what} of at most {self.maximum}"
        return what

    def convert(self, value: object) -> OptionValue:
        """``value`` (text from the command line, or a Python value) as this option's type, or OptionValueError.

        Text is parsed (``"8"`` → 8, ``"yes"`` → True); a Python value must
        already have the type (an int is accepted for a float option, a bool
        never for a number).
        """
        converted = self._typed(value)
        if self.choices is not None and converted not in self.choices:
            raise OptionValueError(self.expected())
        if isinstance(converted, (int, float)) and not isinstance(converted, bool):
            if (self.minimum is not None and converted < self.minimum) \
                    or (self.maximum is not None and converted > self.maximum):
                raise OptionValueError(self.expected())
        return converted

    def _typed(self, value: object) -> OptionValue:
        if self.type is str:
            if isinstance(value, str):
                return value
            raise OptionValueError(self.expected())
        if self.type is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
                return value.strip().lower() in _TRUE
            raise OptionValueError(self.expected())
        if isinstance(value, bool):
            raise OptionValueError(self.expected())
        if self.type is int:
            if isinstance(value, int):
                return value
            if isinstance(value, str):
                try:
                    return int(value.strip(), 10)
                except ValueError:
                    pass
            raise OptionValueError(self.expected())
        if isinstance(value, (int, float)):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                raise OptionValueError(self.expected()) from None
        else:
            raise OptionValueError(self.expected())
        if not math.isfinite(number):
            raise OptionValueError(self.expected())
        return number

    def default_text(self) -> str:
        """The default as listings show it (``none`` for unset)."""
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        return str(self.default)

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``plugins --json``: name, type, default, help, choices, minimum, maximum."""
        return {"name": self.name, "type": self.type_name, "default": self.default, "help": self.help,
                "choices": list(self.choices) if self.choices is not None else None,
                "minimum": self.minimum, "maximum": self.maximum}


def check_option_specs(owner: str, options: object) -> tuple[OptionSpec, ...]:
    """An extension's ``options`` as a tuple of OptionSpec with distinct names, or a TypeError/ValueError naming
    ``owner`` (e.g. ``allocator 'tetris-random'``)."""
    if isinstance(options, OptionSpec):
        options = (options,)
    if not isinstance(options, (tuple, list)) or not all(isinstance(spec, OptionSpec) for spec in options):
        raise TypeError(f"{owner}: options must be a tuple of OptionSpec, got {options!r}")
    names = [spec.name for spec in options]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{owner}: option {repeated[0]!r} is declared twice")
    return tuple(options)
