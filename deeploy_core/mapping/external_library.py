"""A C library the user brings, which an output folder builds from where the user keeps it.

Some kernels are not ours to ship: Arm's CMSIS-NN is the user's dependency,
under its own licence and at the version their firmware already uses.  An
output folder therefore names the library's files relative to one build
variable (``CMSIS_NN_PATH``) instead of copying them; the Makefile and the
CMakeLists.txt stop with one line saying what to set and where to get the
library when the variable does not lead to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ExternalLibrary:
    """Files of a user-provided C library, relative to the folder the build variable ``variable`` names.

    Kernels declare the files they call (a platform its always-needed ones);
    the network's build gets the union of the layers' declarations per
    variable, so only the kernels a network calls are compiled.
    """

    variable: str
    """The make/CMake variable holding the library's root folder (``CMSIS_NN_PATH``)."""
    marker: str
    """A file every copy of the library has, relative to the root: how the build tells a wrong path from a
    right one (``Include/arm_nnfunctions.h``)."""
    where: str
    """Where a user gets the library, named in the missing-path error (a URL)."""
    include_dirs: tuple[str, ...] = ()
    """Header folders relative to the root, added to the include path of every object."""
    sources: tuple[str, ...] = ()
    """C files relative to the root, compiled into the network library."""
    defines: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per-source preprocessor definitions (``(source, ("NAME", ...))``): a kernel whose arithmetic a macro selects
    (CMSIS-NN's single rounding) gets it in its own translation units only."""
    default_root: str = field(default="", compare=False)
    """The root to use when the user gives none at build time (a compile option's value; empty: none)."""

    def merged(self, other: ExternalLibrary) -> ExternalLibrary:
        """This declaration and ``other`` (same variable) as one: the union of their files, sorted."""
        if other.variable != self.variable:
            raise ValueError(f"cannot merge {other.variable} into {self.variable}")
        defines: dict[str, set[str]] = {}
        for source, names in (*self.defines, *other.defines):
            defines.setdefault(source, set()).update(names)
        return ExternalLibrary(
            variable=self.variable, marker=self.marker, where=self.where,
            include_dirs=tuple(sorted(set(self.include_dirs) | set(other.include_dirs))),
            sources=tuple(sorted(set(self.sources) | set(other.sources))),
            defines=tuple(sorted((source, tuple(sorted(names))) for source, names in defines.items())),
            default_root=self.default_root or other.default_root,
        )

    def missing_message(self) -> str:
        """The one line a build prints when the variable does not lead to the library."""
        return (f"{self.variable} does not name a copy of the library ({self.marker} not found under it): "
                f"get it from {self.where} and build with {self.variable}=/path/to/it")


def merge_external(libraries: tuple[ExternalLibrary, ...]) -> tuple[ExternalLibrary, ...]:
    """One declaration per variable (the union of the files), sorted by variable."""
    by_variable: dict[str, ExternalLibrary] = {}
    for library in libraries:
        known = by_variable.get(library.variable)
        by_variable[library.variable] = library if known is None else known.merged(library)
    return tuple(by_variable[name] for name in sorted(by_variable))
