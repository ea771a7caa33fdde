"""Emitting ``Network.h``, ``Network.c`` and ``Network_weights.c``.

The generated API, for any platform:

* ``InitNetwork()`` — once, before anything else;
* ``DeeployNetwork_inputs[i]`` / ``DeeployNetwork_outputs[i]`` — pointers into
  the static arena, with byte sizes in ``DeeployNetwork_inputs_bytes[i]`` etc.;
* ``RunNetwork()`` — any number of times; it allocates nothing.

A :class:`~deeploy_core.codegen.api_names.NetworkApi` renames all of it
(``--prefix``), moves the arena to the caller (``--arena user``:
``InitNetwork(void *arena)``) and places the weights and the arena in named
sections; the default API emits exactly the files described above.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi
from deeploy_core.codegen.arena_views import padded_bytes, typed_address, union_definition, union_members
from deeploy_core.codegen.c_layout import tidy_c
from deeploy_core.codegen.c_linkage import C_LINKAGE_CLOSE, C_LINKAGE_OPEN
from deeploy_core.codegen.execution_block import ExecutionBlock
from deeploy_core.codegen.profile_marks import profile_declaration, profile_macro, profile_mark_call
from deeploy_core.codegen.weight_literals import bit_pattern_rows, bits_c_type, has_bit_patterns, integer_rows
from deeploy_core.errors import DeeployError
from deeploy_core.ir import Buffer, BufferKind, NetworkContext
from deeploy_core.ir.names import c_comment_text
from deeploy_core.midend.memory_plan import MemoryPlan, align_up
from deeploy_core.platform.placement import STATIC_ARRAYS, StaticPlacement

HEADER_NAME = "Network.h"
SOURCE_NAME = "Network.c"
WEIGHTS_NAME = "Network_weights.c"
WEIGHTS_HEADER = "Network_weights.h"
WEIGHT_FILES = frozenset({WEIGHTS_NAME, WEIGHTS_HEADER})
"""The files that hold constant data only: no kernel call, no include beyond ``<stdint.h>`` and each other."""


@dataclass(frozen=True)
class NetworkSources:
    """The generated files by name (text, deterministic)."""

    files: dict[str, str]


ARENA_VIEW = "dc_arena_view"
"""The ``Network.c`` variable pointing at the arena as a union of element arrays (:mod:`.arena_views`)."""

def arena_view_lines(union_tag: str) -> list[str]:
    """The arena view and the byte-address macro the staging code uses (see the comment it carries into the C)."""
    return [
        "/* The arena seen as arrays of every element type: each tensor below points at an element of its own type */",
        "/* (ISO C effective types), from a pointer variable of its own that InitNetwork sets (docs/correctness.rst). */",
        f"static union {union_tag} *{ARENA_VIEW};",
        f"#define DC_ARENA_BASE ({ARENA_VIEW}->u8)",
    ]


POINTER_SUFFIX = "__at"
"""Suffix of the pointer variable of a constant copied at run time ("__" never occurs in a mangled name, so the
variable cannot meet another buffer's name; the weights file keeps the constant's own name for its source data)."""


def _shape_comment(buffer: Buffer) -> str:
    return f"{buffer.dtype} [{', '.join(map(str, buffer.shape))}]"


def in_outer_level(buffer: Buffer, placement: StaticPlacement) -> bool:
    """Whether the tiler placed ``buffer`` (a storage buffer) in one of the placement's levels beyond the arena's."""
    return buffer.memory_level is not None and buffer.memory_level in dict(placement.level_bases)


def constant_offsets(ctxt: NetworkContext, plan: MemoryPlan, placement: StaticPlacement) -> dict[str, int]:
    """Byte offsets of the constants' copies after the arena (only when the platform copies them there; a constant
    placed in a level beyond the arena's has its offset there instead)."""
    if not placement.constants_in_arena_level:
        return {}
    offsets, at = {}, align_up(plan.arena_bytes, placement.constant_alignment)
    for buffer in ctxt.of_kind(BufferKind.CONSTANT):
        if in_outer_level(buffer, placement):
            continue
        offsets[buffer.name] = at
        at = align_up(at + buffer.size_bytes, placement.constant_alignment)
    return offsets


def level_base_symbol(level: str) -> str:
    """The C variable holding the run-time base of a level beyond the arena's (``dc_l3_base``)."""
    return f"dc_{level.lower()}_base"


def _outer_levels_used(ctxt: NetworkContext, placement: StaticPlacement) -> list[tuple[str, str]]:
    """(level, base expression) of the placement's outer levels that hold some buffer, in the placement's order."""
    used = {buffer.memory_level for buffer in ctxt if in_outer_level(buffer, placement)}
    return [(level, base) for level, base in placement.level_bases if level in used]


def _outer_constants(ctxt: NetworkContext, placement: StaticPlacement) -> list[Buffer]:
    """Constants that ``InitNetwork`` copies into a level beyond the arena's (their offsets are set there)."""
    return [buffer for buffer in ctxt.of_kind(BufferKind.CONSTANT)
            if placement.constants_in_arena_level and in_outer_level(buffer, placement)]


def _constant_sources(ctxt: NetworkContext, constants: dict[str, int], placement: StaticPlacement = STATIC_ARRAYS
                      ) -> list[str]:
    """The ``const`` arrays ``InitNetwork`` copies from, listed before their names become pointers into the level."""
    outer = {buffer.name for buffer in _outer_constants(ctxt, placement)}
    names = [buffer.c_name for buffer in ctxt.of_kind(BufferKind.CONSTANT) if buffer.name in constants]
    names += [buffer.c_name for buffer in ctxt.of_kind(BufferKind.CONSTANT) if buffer.name in outer]
    if not names:
        return []
    return [f"static const void *const dc_constant_sources[{len(names)}] = {{{', '.join(names)}}};", ""]


@dataclass(frozen=True)
class BufferPointer:
    """How ``Network.c`` names one tensor: file-scope lines, and the statement ``InitNetwork`` sets it with (if any).

    A tensor in memory the network lays out at run time (the arena, an outer level, a constant's run-time copy)
    is a pointer variable of its own (:mod:`deeploy_core.codegen.arena_views` says why); a constant read where
    the weights file put it stays a macro naming that array.
    """

    declaration: str
    assignment: str | None = None


def _variable(name: str, c_type: str, address: str, const: bool = False) -> BufferPointer:
    qualifier = "const " if const else ""
    return BufferPointer(f"static {qualifier}{c_type} *{name};", f"{name} = {address};")


def _copied_constant(buffer: Buffer, address: str) -> BufferPointer:
    """A constant read from its run-time copy: its name becomes a pointer variable (the weights file keeps the
    array under the name, as the copy's source)."""
    variable = _variable(buffer.c_name + POINTER_SUFFIX, buffer.dtype.c_type, address, const=True)
    return BufferPointer(f"#undef {buffer.c_name}\n#define {buffer.c_name} {buffer.c_name + POINTER_SUFFIX}\n"
                         f"{variable.declaration}", variable.assignment)


def buffer_pointer(buffer: Buffer, ctxt: NetworkContext, constants: dict[str, int],
                   placement: StaticPlacement = STATIC_ARRAYS) -> BufferPointer:
    """The C name of ``buffer`` (an alias of its storage at the storage's offset plus its view offset)."""
    storage = ctxt.storage_of(buffer.name)
    view = ctxt.view_offset(buffer.name)  # non-zero only for a slab view (contiguous Split)
    c_type = buffer.dtype.c_type
    outer = in_outer_level(storage, placement)
    where = ""
    if outer:  # placed beyond the arena's level by the tiler: addressed from that level's base
        assert storage.memory_level is not None and storage.offset is not None, f"{storage.name!r} was not placed"
        where = f"{level_base_symbol(storage.memory_level)} + {storage.offset + view}"
    if storage.kind is BufferKind.CONSTANT:
        if outer and placement.constants_in_arena_level:  # copied into the outer level by InitNetwork
            return _copied_constant(buffer, f"(const {c_type} *)({where})")
        if storage.name in constants:  # the copy in the arena replaces the weights file's name for the stored data
            return _copied_constant(buffer, typed_address(ARENA_VIEW, c_type, constants[storage.name] + view))
        if view:
            return BufferPointer(f"#define {buffer.c_name} ((const {c_type} *)((const char *){storage.c_name} + {view}))")
        return BufferPointer(f"#define {buffer.c_name} ((const {c_type} *){storage.c_name})")
    if storage.offset is None and storage.memory_level is not None and not outer:
        return BufferPointer(f"/* no home storage: it exists only as {storage.memory_level} tiles inside a fused "
                             f"tile loop */")
    assert storage.offset is not None, f"buffer {storage.name!r} was not planned"
    if outer:
        return _variable(buffer.c_name, c_type, f"({c_type} *)({where})")
    return _variable(buffer.c_name, c_type, typed_address(ARENA_VIEW, c_type, storage.offset + view))


def _section_macro(macro: str, section: str | None) -> list[str]:
    """``macro`` as a GCC section attribute (empty for other compilers, which place data with their own means)."""
    if section is None:
        return []
    return ["#if defined(__GNUC__)", f'#define {macro} __attribute__((section("{section}")))', "#else",
            f"#define {macro}", "#endif", ""]


def _weight_declaration(buffer: Buffer, count: int, placed: str) -> tuple[str, str]:
    """(header lines, source definition) of one constant.

    Floats are stored as a union of their bit patterns (how they are written,
    see :mod:`deeploy_core.codegen.weight_literals`) and the floats, and the
    buffer's name is a macro for the float view, so every reader still sees
    ``const float name[count]``.
    """
    assert buffer.values is not None
    values = buffer.values.astype(buffer.dtype.numpy, copy=False)
    comment = f"/* {c_comment_text(buffer.name)}: {_shape_comment(buffer)} */"
    if not has_bit_patterns(values.dtype):
        return (f"{comment}\nextern const {buffer.dtype.c_type} {buffer.c_name}[{count}];",
                f"{comment}\nconst {buffer.dtype.c_type} {buffer.c_name}[{count}] DC_ALIGNED{placed} = {{\n"
                f"{integer_rows(values)}\n}};")
    # "__" never occurs in a mangled name (its stem collapses runs of "_"), so these cannot meet another buffer's
    union, store = f"{buffer.c_name}__bits", f"{buffer.c_name}__store"
    declaration = "\n".join([
        comment,
        f"union {union} {{ {bits_c_type(values.dtype)} bits[{count}]; {buffer.dtype.c_type} values[{count}]; }};",
        f"extern const union {union} {store};",
        f"#define {buffer.c_name} ({store}.values)",
    ])
    return declaration, (f"{comment}\nconst union {union} {store} DC_ALIGNED{placed} = {{{{\n"
                         f"{bit_pattern_rows(values)}\n}}}};")


def emit_weights(ctxt: NetworkContext, api: NetworkApi = DEFAULT_API) -> tuple[str, str]:
    """``Network_weights.h`` and ``Network_weights.c``: every constant as typed ``const`` data."""
    placed = " DC_WEIGHTS_SECTION" if api.weights_section is not None else ""
    declarations, definitions = [], []
    for buffer in ctxt.of_kind(BufferKind.CONSTANT):
        declaration, definition = _weight_declaration(buffer, max(buffer.numel, 1), placed)
        declarations.append(declaration)
        definitions.append(definition)
    header = "\n".join(
        [
            "/* Generated by deeploy_core: constant tensors. */",
            f"#ifndef {api.weights_guard}",
            f"#define {api.weights_guard}",
            "#include <stdint.h>",
            *C_LINKAGE_OPEN,
            "",
            *declarations,
            "",
            *C_LINKAGE_CLOSE,
            "#endif",
            "",
        ]
    )
    source = "\n".join(
        [
            "/* Generated by deeploy_core: constant tensors. */",
            f'#include "{WEIGHTS_HEADER}"',
            "",
            "#if defined(__GNUC__)",
            "#define DC_ALIGNED __attribute__((aligned(16)))",
            "#else",
            "#define DC_ALIGNED",
            "#endif",
            "",
            *_section_macro("DC_WEIGHTS_SECTION", api.weights_section),
            *definitions,
            "",
        ]
    )
    return header, source


def emit_header(ctxt: NetworkContext, plan: MemoryPlan, network_name: str, api: NetworkApi = DEFAULT_API,
                layer_count: int = 0) -> str:
    """``Network.h``: the network's C API (names from ``api``); ``layer_count``: the layers ``RunNetwork`` runs."""
    inputs = ctxt.of_kind(BufferKind.INPUT)
    outputs = ctxt.graph_outputs
    user_arena = [
        f"/* {api.init}'s arena: {api.arena_bytes} bytes at an address that is a multiple of this */",
        f"#define {api.arena_alignment} {plan.alignment}",
        f"/* A type for that arena: {api.arena_bytes} bytes as arrays of every element type, so that each tensor is an */",
        f"/* object of its own type (ISO C effective types). Declare one, aligned as above, and pass its address. */",
        f"typedef union {api.arena_union_tag} {{ {union_members(plan.arena_bytes)} }} {api.arena_type};",
    ] if api.user_arena else []
    lines = [
        f"/* Generated by deeploy_core for network '{c_comment_text(network_name)}'. */",
        f"#ifndef {api.header_guard}",
        f"#define {api.header_guard}",
        "#include <stdint.h>",
        *C_LINKAGE_OPEN,
        "",
        f"#define {api.num_inputs} {len(inputs)}",
        f"#define {api.num_outputs} {len(outputs)}",
        f"#define {api.arena_bytes} {plan.arena_bytes}",
        *user_arena,
        "",
        f"extern void *{api.inputs}[{api.num_inputs} > 0 ? {api.num_inputs} : 1];",
        f"extern const uint32_t {api.inputs_bytes}[{api.num_inputs} > 0 ? {api.num_inputs} : 1];",
        f"extern void *{api.outputs}[{api.num_outputs}];",
        f"extern const uint32_t {api.outputs_bytes}[{api.num_outputs}];",
        "",
        *profile_declaration(api, layer_count),
        "",
        *([f"/* Returns 0 and runs in arena from now on; -1, changing nothing, for NULL or a misaligned arena. */"]
          if api.user_arena else []),
        f"{api.init_signature};",
        f"void {api.run}(void);",
        "",
        *C_LINKAGE_CLOSE,
        "#endif",
        "",
    ]
    return "\n".join(lines)


def check_placement(api: NetworkApi, placement: StaticPlacement, platform: str) -> None:
    """Refuse, in one line, an arena option that ``platform``'s placement cannot honour.

    ``--arena user`` and ``--arena-section`` need the arena to be a plain
    static array that nothing else fills: a platform that takes its arena from
    a HAL or copies constants next to it at start-up owns that memory itself.
    """
    owns_memory = not placement.arena_declaration or placement.constants_in_arena_level
    if api.user_arena and owns_memory:
        raise DeeployError(f"--arena user: platform {platform!r} places the arena itself (and copies constants into "
                           f"it in InitNetwork), so it cannot take the application's buffer; use --arena static")
    if api.arena_section is not None and (owns_memory or not placement.arena_declaration.endswith(";")):
        raise DeeployError(f"--arena-section: platform {platform!r} places the arena itself, not as a static array "
                           f"a section attribute could move; place it with the platform's own means instead")


def _arena_declaration(placement: StaticPlacement, api: NetworkApi, size: int) -> list[str]:
    """The arena's union type (unless ``Network.h`` has it) and the static arena (with its section attribute),
    or no arena when the platform or the caller provides it."""
    union = [] if api.user_arena else [union_definition(api.arena_union_tag, size)]
    if api.user_arena or not placement.arena_declaration:
        return union
    declaration = placement.arena_declaration.format(bytes=size, union=api.arena_union_tag)
    if api.arena_section is None:
        return [*union, declaration]
    return [*union, *_section_macro("DC_ARENA_SECTION", api.arena_section)[:-1],
            f"{declaration[:-1]} DC_ARENA_SECTION;"]


STANDARD_HEADERS = frozenset({
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h", "stdarg.h", "stdbool.h",
    "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h",
})
"""C library headers a kernel template may name: included with ``<…>``, since the output folder does not hold
them (a quoted include of one would search the folder first and reach the system only by fallback)."""


def include_line(header: str) -> str:
    """The ``#include`` of a header a template or placement names: ``<…>`` for the C library, ``"…"`` otherwise."""
    return f"#include <{header}>" if header in STANDARD_HEADERS else f'#include "{header}"'


def emit_source(
    ctxt: NetworkContext,
    plan: MemoryPlan,
    blocks: list[ExecutionBlock],
    headers: list[str],
    network_name: str,
    extra_definitions: list[str] | None = None,
    placement: StaticPlacement = STATIC_ARRAYS,
    api: NetworkApi = DEFAULT_API,
) -> str:
    """``Network.c``: the arena, buffer pointers, layer closures, ``InitNetwork`` and ``RunNetwork``.

    The caller checks ``api`` against ``placement`` first (:func:`check_placement`).
    """
    inputs = ctxt.of_kind(BufferKind.INPUT)
    outputs = [ctxt[name] for name in ctxt.graph_outputs]
    constants = constant_offsets(ctxt, plan, placement)
    outer_constants = _outer_constants(ctxt, placement)
    outer_levels = _outer_levels_used(ctxt, placement)
    pointed = [buffer for buffer in ctxt if buffer.kind is not BufferKind.CONSTANT or buffer.name in constants
               or ctxt.storage_of(buffer.name) in outer_constants]
    pointers = [(buffer, buffer_pointer(buffer, ctxt, constants, placement)) for buffer in pointed]
    level_bytes = max([plan.arena_bytes] + [constants[b.name] + b.size_bytes for b in ctxt.of_kind(BufferKind.CONSTANT)
                                            if b.name in constants])
    where = "one static arena" if placement is STATIC_ARRAYS else "one arena"
    if api.user_arena:
        where = f"the caller's arena (given to {api.init})"
    lines = [
        f"/* Generated by deeploy_core for network '{c_comment_text(network_name)}'. */",
        "#include <stdint.h>",
        "#include <stddef.h>",
        *(["#include <string.h>"] if constants or outer_constants else []),
        f'#include "{HEADER_NAME}"',
        f'#include "{WEIGHTS_HEADER}"',
        *[include_line(header) for header in sorted({*headers, *placement.headers})],
        "",
        f"/* {where[0].upper() + where[1:]} for every activation: {plan.arena_bytes} bytes (lower bound {plan.lower_bound}). */",
        *_arena_declaration(placement, api, padded_bytes(level_bytes)),
        *arena_view_lines(api.arena_union_tag),
        *[f"/* {level}: the tensors the arena's level could not hold (its base is set by {api.init}). */\n"
          f"static uint8_t *{level_base_symbol(level)};" for level, _ in outer_levels],
        *placement.definitions,
        "",
        *_constant_sources(ctxt, constants, placement),
        *[f"/* {c_comment_text(buffer.name)}: {buffer.kind.value} {_shape_comment(buffer)} */\n{pointer.declaration}"
          for buffer, pointer in pointers],
        "",
        f"void *{api.inputs}[{max(len(inputs), 1)}];",
        f"const uint32_t {api.inputs_bytes}[{max(len(inputs), 1)}] = {{{', '.join(str(b.size_bytes) for b in inputs) or '0'}}};",
        f"void *{api.outputs}[{len(outputs)}];",
        f"const uint32_t {api.outputs_bytes}[{len(outputs)}] = {{{', '.join(str(b.size_bytes) for b in outputs)}}};",
        "",
    ]
    lines.extend(extra_definitions or [])
    for block in blocks:
        lines.extend(block.definitions)
        lines.append("")
    lines.append(f"{api.init_signature} {{")
    if api.user_arena:
        lines.append(f"    if (arena == NULL || (uintptr_t)arena % {api.arena_alignment} != 0) return -1;")
    lines.extend(f"    {line}" for line in placement.init_lines)
    arena = "arena" if api.user_arena else f"({placement.arena_base})"
    lines.append(f"    {ARENA_VIEW} = (union {api.arena_union_tag} *){arena};")
    for level, base in outer_levels:
        lines.append(f"    {level_base_symbol(level)} = (uint8_t *)({base});")
    lines.extend(f"    {pointer.assignment}" for _, pointer in pointers if pointer.assignment is not None)
    copied = [buffer for buffer in ctxt.of_kind(BufferKind.CONSTANT) if buffer.name in constants]
    for index, buffer in enumerate(copied):
        lines.append(f"    memcpy(DC_ARENA_BASE + {constants[buffer.name]}, dc_constant_sources[{index}], {buffer.size_bytes});")
    for index, buffer in enumerate(outer_constants, start=len(copied)):
        assert buffer.memory_level is not None
        lines.append(f"    memcpy({level_base_symbol(buffer.memory_level)} + {buffer.offset}, dc_constant_sources[{index}], "
                     f"{buffer.size_bytes});")
    for index, buffer in enumerate(inputs):
        lines.append(f"    {api.inputs}[{index}] = (void *){buffer.c_name};")
    for index, buffer in enumerate(outputs):
        lines.append(f"    {api.outputs}[{index}] = (void *){buffer.c_name};")
    if api.user_arena:
        lines.append("    return 0;")
    lines.append("}")
    lines.append("")
    lines.extend(profile_macro(api))
    lines.append(f"void {api.run}(void) {{")
    for index, block in enumerate(blocks):
        lines.append(f"    {profile_mark_call(index)}")
        for text in block.body:
            lines.extend(f"    {line}" for line in text.splitlines())
    lines.append(f"    {profile_mark_call(len(blocks))}")
    lines.append("}")
    lines.append("")
    return tidy_c("\n".join(lines))
