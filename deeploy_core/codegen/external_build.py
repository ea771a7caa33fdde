"""The Makefile and CMake lines that build user-provided libraries (CMSIS-NN) from where the user keeps them.

Nothing of such a library is copied into the folder: its licence and version
are the user's.  The build takes its root from one variable
(``make CMSIS_NN_PATH=...``, ``cmake -DCMSIS_NN_PATH=...``), compiles the
files the network's kernels call into ``libnetwork.a`` and stops with one line
when the variable does not lead to the library.
"""

from __future__ import annotations

from deeploy_core.mapping.external_library import ExternalLibrary


def used(external: tuple[ExternalLibrary, ...]) -> tuple[ExternalLibrary, ...]:
    """The libraries the network calls: a platform declares its library even for networks that call none of it
    (a float network on a Cortex-M), and those build without it."""
    return tuple(library for library in external if library.sources)


def _objects_variable(library: ExternalLibrary) -> str:
    return f"DC_{library.variable}_OBJS"


def external_make_variables(external: tuple[ExternalLibrary, ...]) -> list[str]:
    """Each library's root, include path, sources and objects, and the missing-path check (before the rules)."""
    lines: list[str] = []
    for library in used(external):
        var, objects = library.variable, _objects_variable(library)
        sources = " ".join(library.sources)
        lines += [
            f"# {var}: the root of a library you provide (nothing of it is copied here): make {var}=/path/to/it",
            f"{var} ?= {library.default_root}".rstrip(),
            *(f"override CPPFLAGS += -I$({var})/{folder}" for folder in library.include_dirs),
            f"DC_{var}_SRCS := {sources}",
            f"{objects} := $(patsubst %.c,$(OBJDIR)/{var}/%.o,$(DC_{var}_SRCS))",
            "# Only a goal that compiles needs it: make clean works without.",
            "ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)",
            f"ifeq ($(wildcard $({var})/{library.marker}),)",
            f"$(error {library.missing_message()})",
            "endif",
            "endif",
            "",
        ]
    return lines


def external_objects(external: tuple[ExternalLibrary, ...]) -> str:
    """The objects of every library, as make references (empty: none)."""
    return " ".join(f"$({_objects_variable(library)})" for library in used(external))


def external_make_rules(external: tuple[ExternalLibrary, ...]) -> list[str]:
    """How each library's objects are compiled: with the folder's flags, plus per-source definitions."""
    lines: list[str] = []
    for library in used(external):
        var = library.variable
        lines += [
            f"$(OBJDIR)/{var}/%.o: $({var})/%.c $(DC_FLAGS_STAMP)",
            "\t@mkdir -p $(dir $@)",
            "\t$(CC) $(CPPFLAGS) $(DC_STD) $(DC_SECTIONS) $(DC_ARCH) $(CFLAGS) $(DC_DEFINES) -c $< -o $@",
        ]
        for source, names in library.defines:
            definitions = " ".join(f"-D{name}" for name in names)
            lines.append(f"$(OBJDIR)/{var}/{source[:-2]}.o: DC_DEFINES := {definitions}")
        lines.append("")
    return lines


def external_cmake(external: tuple[ExternalLibrary, ...], target: str) -> list[str]:
    """CMake: each library's root as a cache path, checked, its sources added to ``target``."""
    lines: list[str] = []
    for library in used(external):
        var = library.variable
        lines += [
            "",
            f"# {var}: the root of a library you provide (nothing of it is copied here): -D{var}=/path/to/it",
            f'set({var} "{library.default_root}" CACHE PATH "root of {var.removesuffix("_PATH")}")',
            f'if(NOT EXISTS "${{{var}}}/{library.marker}")',
            f'  message(FATAL_ERROR "{library.missing_message()}")',
            "endif()",
            f"target_sources({target} PRIVATE",
            *(f"    ${{{var}}}/{source}" for source in library.sources),
            ")",
            f"target_include_directories({target} PUBLIC "
            + " ".join(f"${{{var}}}/{folder}" for folder in library.include_dirs) + ")",
        ]
        for source, names in library.defines:
            lines.append(f"set_source_files_properties(${{{var}}}/{source} PROPERTIES COMPILE_DEFINITIONS "
                         f"\"{';'.join(names)}\")")
    return lines
