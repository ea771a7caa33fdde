"""The names and shape of the generated C API: ``--prefix``, ``--arena`` and the section options.

Firmware often links more than one network into one image, gives each a
place in its linker script and owns its RAM.  Every exported identifier of
``Network.h`` (functions, globals, macros, the header guard) therefore comes
from one :class:`NetworkApi`, so a prefix renames all of them at once and the
default reproduces the historical names byte for byte.  Globals that are not
part of the API but must still be visible to the linker (the constant arrays
``Network.c`` reads from ``Network_weights.c``) are namespaced through the
name mangler's prefix (:attr:`NetworkApi.mangler_prefix`); everything else in
``Network.c`` is ``static`` and cannot clash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeploy_core.errors import DeeployError
from deeploy_core.ir.names import C_KEYWORDS

ARENA_MODES = ("static", "user")
"""``static``: ``Network.c`` owns the arena; ``user``: ``InitNetwork(void *arena)`` takes the caller's buffer."""

DEFAULT_MANGLER_PREFIX = "dc"
"""The prefix of every mangled buffer name without ``--prefix`` (``dc_act_…``, ``dc_w_…``)."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SECTION = re.compile(r"[A-Za-z0-9_.$]+\Z")
"""Section names as GNU toolchains spell them; no quote or backslash can reach the C string literal."""
_LONGEST_PREFIX = 40
_SECTION_EXAMPLES = {"--weights-section": ".rodata.weights", "--arena-section": ".bss.arena"}
"""A name of the right kind for each option: the arena is writable and zero-initialised, the weights read-only."""


def check_prefix(prefix: str) -> str:
    """``prefix`` if it can start every exported C identifier; a one-line :class:`DeeployError` otherwise."""
    if not _IDENTIFIER.match(prefix):
        raise DeeployError(f"--prefix {prefix!r} is not a C identifier: use letters, digits and '_', not starting "
                           f"with a digit (e.g. --prefix kws)")
    if prefix.startswith("__") or re.match(r"_[A-Z]", prefix):
        raise DeeployError(f"--prefix {prefix!r} starts with '__' or '_' and a capital, which C reserves for the "
                           f"compiler and its library: drop the leading underscore(s)")
    if prefix in C_KEYWORDS:
        raise DeeployError(f"--prefix {prefix!r} is a C keyword: choose another name (e.g. --prefix net_{prefix})")
    if len(prefix) > _LONGEST_PREFIX:
        raise DeeployError(f"--prefix {prefix!r} is longer than {_LONGEST_PREFIX} characters: use a shorter name")
    return prefix


def check_section(option: str, section: str) -> str:
    """``section`` if it is a plain linker section name; a one-line :class:`DeeployError` otherwise."""
    if not _SECTION.match(section):
        raise DeeployError(f"{option} {section!r} is not a section name: use letters, digits, '.', '_' and '$' "
                           f"(e.g. {option} {_SECTION_EXAMPLES.get(option, '.rodata.weights')})")
    return section


@dataclass(frozen=True)
class NetworkApi:
    """How the generated code exports itself: name prefix, who owns the arena, and optional sections.

    ``prefix`` None keeps today's names (``InitNetwork``,
    ``DeeployNetwork_inputs``, ``DEEPLOY_NETWORK_ARENA_BYTES``); a prefix
    ``P`` gives ``P_InitNetwork``, ``P_inputs``, ``P_ARENA_BYTES``.  The prefix
    is used verbatim in macros as well, so two prefixes that differ only in
    case still give distinct macros.
    """

    prefix: str | None = None
    arena: str = "static"
    weights_section: str | None = None
    arena_section: str | None = None

    def __post_init__(self) -> None:
        if self.prefix is not None:
            check_prefix(self.prefix)
        if self.arena not in ARENA_MODES:
            raise DeeployError(f"--arena {self.arena!r}: expected one of {', '.join(ARENA_MODES)}")
        if self.weights_section is not None:
            check_section("--weights-section", self.weights_section)
        if self.arena_section is not None:
            check_section("--arena-section", self.arena_section)
            if self.arena_section == self.weights_section:
                raise DeeployError(f"--arena-section and --weights-section are both {self.arena_section!r}: the "
                                   f"arena is writable and the weights are read-only, so give them two sections")
            if self.user_arena:
                raise DeeployError("--arena-section has no arena to place with --arena user (the application owns "
                                   "the buffer): put your own buffer in the section, or use --arena static")

    @property
    def user_arena(self) -> bool:
        """The caller passes the arena to ``InitNetwork`` (``--arena user``)."""
        return self.arena == "user"

    def _function(self, name: str) -> str:
        return f"{self.prefix}_{name}" if self.prefix else name

    def _global(self, name: str) -> str:
        return f"{self.prefix}_{name}" if self.prefix else f"DeeployNetwork_{name}"

    def _macro(self, name: str) -> str:
        return f"{self.prefix}_{name}" if self.prefix else f"DEEPLOY_NETWORK_{name}"

    @property
    def init(self) -> str:
        return self._function("InitNetwork")

    @property
    def run(self) -> str:
        return self._function("RunNetwork")

    @property
    def inputs(self) -> str:
        return self._global("inputs")

    @property
    def inputs_bytes(self) -> str:
        return self._global("inputs_bytes")

    @property
    def outputs(self) -> str:
        return self._global("outputs")

    @property
    def outputs_bytes(self) -> str:
        return self._global("outputs_bytes")

    @property
    def num_inputs(self) -> str:
        return self._macro("NUM_INPUTS")

    @property
    def num_outputs(self) -> str:
        return self._macro("NUM_OUTPUTS")

    @property
    def arena_bytes(self) -> str:
        return self._macro("ARENA_BYTES")

    @property
    def num_layers(self) -> str:
        """How many layers ``RunNetwork`` runs: a profile build marks each start and the end (``NUM_LAYERS + 1``)."""
        return self._macro("NUM_LAYERS")

    @property
    def profile_mark(self) -> str:
        """The function a profile build (``-DDC_PROFILE``) calls between layers; the application defines it."""
        return self._global("profile_mark")

    @property
    def arena_alignment(self) -> str:
        return self._macro("ARENA_ALIGNMENT")

    @property
    def arena_union_tag(self) -> str:
        """The tag of the arena's union of element arrays (``Network.h`` defines it with ``--arena user``)."""
        return f"{self.mangler_prefix}_arena_elements"

    @property
    def arena_type(self) -> str:
        """The type a caller declares its arena with (``--arena user``): the union, under the API's prefix."""
        return self._global("arena_t")

    @property
    def header_guard(self) -> str:
        return f"{self.prefix}_NETWORK_H" if self.prefix else "DC_NETWORK_H"

    @property
    def weights_guard(self) -> str:
        return f"{self.prefix}_NETWORK_WEIGHTS_H" if self.prefix else "DC_NETWORK_WEIGHTS_H"

    @property
    def mangler_prefix(self) -> str:
        """Start of every mangled buffer name: ``P_dc`` never equals an API name (``P_inputs``, ``P_RunNetwork``)."""
        return f"{self.prefix}_{DEFAULT_MANGLER_PREFIX}" if self.prefix else DEFAULT_MANGLER_PREFIX

    @property
    def init_signature(self) -> str:
        """``InitNetwork``'s prototype: ``int …(void *arena)`` with a caller's arena, ``void …(void)`` otherwise."""
        return f"int {self.init}(void *arena)" if self.user_arena else f"void {self.init}(void)"


DEFAULT_API = NetworkApi()
"""Today's names, the arena inside ``Network.c``, no sections."""


_ALIASED = ("inputs", "inputs_bytes", "outputs", "outputs_bytes", "num_inputs", "num_outputs", "arena_bytes", "run",
            "num_layers", "profile_mark")


def default_name_macros(api: NetworkApi) -> list[str]:
    """``#define DEFAULT_NAME API_NAME`` for every name ``api`` changes, ``InitNetwork`` aside.

    Host programs written once against the default names (the validation
    harness, a self-test) include these after ``Network.h`` to call a
    prefixed network; ``InitNetwork`` is left to them because with
    ``--arena user`` its call needs an arena.
    """
    return [f"#define {getattr(DEFAULT_API, name)} {getattr(api, name)}" for name in _ALIASED
            if getattr(api, name) != getattr(DEFAULT_API, name)]


def default_name_shim(api: NetworkApi) -> list[str]:
    """C lines that let a ``main`` written against the default API drive a network compiled with ``api``.

    To include right after ``Network.h`` (and ``<stdio.h>``): the renamed
    names as macros (:func:`default_name_macros`) and, with ``--arena user``,
    an aligned static buffer that a function-like ``InitNetwork()`` passes to
    the network, returning 2 from the caller when it is refused.  Empty for
    the default API.
    """
    if api.prefix is None and not api.user_arena:
        return []
    lines = ["/* The network was compiled with --prefix/--arena: the default names used below, mapped onto its API. */",
             *default_name_macros(api)]
    if api.user_arena:
        # Over-allocated and aligned by hand (C99 has no alignment specifier), in the network's arena type.
        lines += [
            "#include <stdint.h>",
            f"static {api.arena_type} dc_shim_arena[1 + {api.arena_alignment} / sizeof({api.arena_type})];",
            f"#define InitNetwork() if ({api.init}((void *)(((uintptr_t)dc_shim_arena + {api.arena_alignment} - 1)"
            f" / {api.arena_alignment} * {api.arena_alignment})) != 0) {{ fprintf(stderr, \"InitNetwork refused the "
            f"arena\\n\"); return 2; }}",
        ]
    elif api.init != DEFAULT_API.init:
        lines.append(f"#define {DEFAULT_API.init} {api.init}")
    return lines
