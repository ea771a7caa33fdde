"""The Python API behind the command line: compile and validate a model by platform name."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np


from deeploy_core.builtin.plugin import DEFAULT_ALLOCATOR
from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi
from deeploy_core.codegen.profile_marks import PROFILE_DEFINE
from deeploy_core.compilation import CompileSettings
from deeploy_core.compose import DeployerChoice, compose_deployer
from deeploy_core.deployer import ComposedDeployer, Deployer
from deeploy_core.progress import ProgressLike, as_progress
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.claims import platform_claims
from deeploy_core.frontend.custom_ops import OpClaims
from deeploy_core.frontend.importer import import_model
from deeploy_core.ir import DataType
from deeploy_core.network import GeneratedNetwork
from deeploy_core.options.assignments import OptionAssignment, mapping_assignments, short_flag_assignments
from deeploy_core.plugins import PluginHost
from deeploy_core.temporary_paths import scratch_folder
from deeploy_core.validate import Toolchain, ValidationResult, build_executable, compare_outputs, run_profiled
from deeploy_core.validate.data import bind_inputs, graph_input_specs, load_npz_by_position, random_inputs
from deeploy_core.validate.token_inputs import integer_draws
from deeploy_core.validate.reference_kind import check_reference, reference_outputs
from deeploy_core.validate.sample_types import sample_types, with_sample_types


@dataclass(frozen=True)
class CompileOptions:
    """What to compile for: platform and the optional wrappers by name, the core's settings, and the values of
    the selected extensions' own options.

    ``options`` holds extension options as ``--option`` takes them: by name
    (``{"cores": 8}``) or qualified by kind or extension name
    (``{"allocator.seed": 3}``, ``{"tetris-random.seed": 3}``); values may be
    text (parsed like the command line's) or of the option's type.
    ``level_sizes``, ``cores`` and ``tiling_strategy`` are conveniences equal
    to the short flags ``--l1/--l2/--l3``, ``--cores`` and
    ``--tiling-strategy``: each sets one option of the selected memory level,
    platform or tiler (``l1``, ``cores``, ``strategy``), with the short flag's
    messages when that extension does not declare it.  A level size also
    turns tiling on, as ``--l1`` does.
    """

    platform: str
    memory_level: str | None = None
    tiler: str | None = None
    allocator: str = DEFAULT_ALLOCATOR
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    input_types: dict[str, DataType] = field(default_factory=dict)
    quantization: str = "exact"
    network_name: str | None = None
    level_sizes: dict[str, int] = field(default_factory=dict)
    """``--l1``/``--l2``/``--l3``: the memory level's size options by level name (``{"L1": 16000}`` sets ``l1``);
    a level size turns tiling on."""
    buffering: str | None = None
    """``--buffering``: a shorthand that selects the built-in tiler of that scheme (None: the tiler decides)."""
    memory_hierarchy: str | None = None
    """A memory-level name or a YAML hierarchy file."""
    tiling_strategy: str | None = None
    """``--tiling-strategy``: the tiler's ``strategy`` option (None: the tiler's default)."""
    fusion: str | None = None
    """``--fusion``: the tiler's ``fusion`` option, ``none`` or ``auto`` (None: the tiler's default)."""
    tiling_from: Path | None = None
    """A ``report.json`` of an earlier compile whose tiling solution and memory map are reused."""
    cores: int | None = None
    """``--cores``: the platform's ``cores`` option (None: the platform's default)."""
    code_transformations: tuple[str, ...] = ()
    """Installed code transformations to run (``--code-transformation``, in order) besides those the platform's
    chain includes; an installed transformation that nobody names does not run."""
    options: dict[str, object] = field(default_factory=dict)
    """Values of the selected extensions' declared options (``--option NAME=VALUE``), by name or qualified name."""
    c_api: NetworkApi = DEFAULT_API
    """Names, arena ownership and sections of the generated C API (``--prefix``, ``--arena``, ``--*-section``)."""

    def option_assignments(self) -> tuple[OptionAssignment, ...]:
        """What the short-flag fields and :attr:`options` ask of the selected extensions, for resolution."""
        return (*short_flag_assignments(self.level_sizes, self.cores, self.tiling_strategy, self.fusion),
                *mapping_assignments(self.options))


def compile_model(
    model_path: Path,
    options: CompileOptions,
    host: PluginHost,
    progress: ProgressLike = None,
    state_dir: Path | None = None,
) -> tuple[ComposedDeployer, GeneratedNetwork]:
    """Compose the deployer the options name and run every stage on ``model_path``.

    report.json gains ``options`` (the values every selected extension was
    made with, per kind) and ``provenance`` from the stage driver, which
    records them for every deployment.
    """
    settings = CompileSettings(
        input_shapes=options.input_shapes,
        input_types=options.input_types,
        quantization=options.quantization,
        network_name=options.network_name or model_path.stem,
        code_transformations=options.code_transformations,
        c_api=options.c_api,
    )
    memory_level, tiler, settings = tiling_choice(options, settings, platform_memory_level(host, options.platform),
                                                  lambda name: declared_buffering(host, name))
    choice = DeployerChoice(
        platform=options.platform,
        memory_level=memory_level,
        tiler=tiler,
        allocator=options.allocator,
        settings=settings,
        assignments=options.option_assignments(),
    )
    deployer = compose_deployer(host, choice)
    generated = deployer.deploy(str(model_path), progress, _state_exporter(state_dir) if state_dir else None)
    return deployer, generated


def _registration(host: PluginHost, kind: str, name: str, field_name: str, default: object) -> object:
    """A field of the registration of extension ``name`` of ``kind``, or ``default`` when nothing of that name
    is registered (composing the deployer then reports it with the list of installed extensions)."""
    if name not in {extension.name for extension in host.extensions(kind)}:
        return default
    return getattr(host.extension(kind, name), field_name, default)


def platform_memory_level(host: PluginHost, platform: str) -> str | None:
    """The memory level a platform always compiles with (its registration says), or None."""
    return _registration(host, "platform", platform, "memory_level", None)  # type: ignore[return-value]


UNKNOWN_TILER = "?"
"""What :func:`declared_buffering` answers for a tiler nobody registered (composing reports it)."""


def declared_buffering(host: PluginHost, tiler: str) -> str | None:
    """The buffering scheme tiler ``tiler`` declares (None: none), or :data:`UNKNOWN_TILER`."""
    return _registration(host, "tiler", tiler, "buffering", UNKNOWN_TILER)  # type: ignore[return-value]


def tiling_choice(options: CompileOptions, settings: CompileSettings, platform_level: str | None = None,
                  tiler_buffering: Callable[[str], str | None] | None = None,
                  ) -> tuple[str | None, str | None, CompileSettings]:
    """(memory level, tiler, ``settings`` with the files the tiling options name) implied by the tiling options.

    A level size, a memory level or hierarchy, a tiler or a buffering turns the
    memory-aware, tiled flow on; the built-in two-level hierarchy and single buffering are
    the defaults.  The tiler alone decides the buffering: ``--buffering``
    selects the built-in tiler of that scheme, and naming a tiler that declares
    another scheme (``tiler_buffering`` answers what a tiler declares) is a
    usage error rather than a silent override.  ``--tiling-from`` without a
    tiler reuses the tiler named in that report.  A platform whose kernels only
    read its compute memory (``platform_level``, from its registration) is
    always tiled, with its own hierarchy by default.
    """
    from deeploy_core.builtin.plugin import BUFFERING_TILERS, HOST_TWO_LEVEL, SINGLE_BUFFERING
    from deeploy_core.tiling.loading import load_tiling, tiler_of_report

    memory_level, tiler = options.memory_level, options.tiler
    hierarchy_file: Path | None = None
    if options.memory_hierarchy is not None:
        path = Path(options.memory_hierarchy)
        if path.suffix in (".yaml", ".yml") or path.exists():
            hierarchy_file = path
        else:
            memory_level = memory_level or options.memory_hierarchy
    if options.buffering is not None and options.buffering not in BUFFERING_TILERS:
        raise DeeployError(f"--buffering {options.buffering}: unknown buffering (choose {' or '.join(BUFFERING_TILERS)})")
    if tiler is not None and options.buffering is not None and tiler_buffering is not None:
        declared = tiler_buffering(tiler)
        if declared is None:
            raise DeeployError(f"--buffering {options.buffering} with --tiler {tiler}: that tiler declares no buffering "
                               f"scheme; drop --buffering")
        if declared not in (options.buffering, UNKNOWN_TILER):
            raise DeeployError(f"--buffering {options.buffering} contradicts --tiler {tiler} ({declared} buffering); "
                               f"give one of them, e.g. --tiler {BUFFERING_TILERS[options.buffering]}")
    wants_tiling = bool(options.level_sizes) or options.memory_hierarchy is not None or tiler is not None \
        or options.memory_level is not None \
        or options.buffering is not None or options.tiling_from is not None or platform_level is not None
    if tiler is None and options.buffering is None and options.tiling_from is not None:
        tiler = tiler_of_report(options.tiling_from)
    if wants_tiling:
        memory_level = memory_level or platform_level or HOST_TWO_LEVEL
        tiler = tiler or BUFFERING_TILERS.get(options.buffering or "", SINGLE_BUFFERING)
    solution, memory_map = load_tiling(options.tiling_from) if options.tiling_from is not None else (None, None)
    return memory_level, tiler, replace(settings, memory_hierarchy_file=hierarchy_file, tiling_solution=solution,
                                        memory_map=memory_map)


def _state_exporter(state_dir: Path) -> Callable[[str, Deployer], None]:
    """Writes the compilation's state into ``state_dir/<n>-<stage>`` after each stage."""
    from deeploy_core.network.state import export_state

    def after_stage(stage: str, deployer: Deployer) -> None:
        export_state(deployer.compilation, state_dir / f"{list(deployer.stages).index(stage) + 1}-{stage}", stage)

    return after_stage


def reference_inputs(model_path: Path, inputs_npz: Path | None, seed: int = 0,
                     input_shapes: dict[str, tuple[int, ...]] | None = None,
                     input_types: dict[str, DataType] | None = None,
                     claims: OpClaims | None = None) -> dict[str, np.ndarray]:
    """Inputs from an ``.npz`` (bound by position) or deterministic random ones.

    The shapes come from the imported model, so a model the compiler refuses
    (an absurd or dynamic input shape) is refused before any data is made.
    Random data for an input the user typed as an integer (``--input-type``)
    holds whole numbers of that type's range, stored in the model's declared
    type: the compiled code reads it exactly, and ONNX Runtime computes on the
    very same values.  Integer inputs that index an embedding or act as a
    mask get ids within the table or 0/1 padding masks
    (:mod:`deeploy_core.validate.token_inputs`).
    """
    model = import_model(model_path, input_shapes, claims).model
    specs = graph_input_specs(model)
    if inputs_npz is None:
        return random_inputs(specs, seed, input_types, integer_draws(model))
    return bind_inputs(specs, load_npz_by_position(inputs_npz, len(specs)))


def validate_model(
    model_path: Path,
    options: CompileOptions,
    host: PluginHost,
    inputs_npz: Path | None = None,
    outputs_npz: Path | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    repeats: int = 2,
    build_dir: Path | None = None,
    cache_dir: Path | None = None,
    progress: ProgressLike = None,
    toolchain: Toolchain | None = None,
    lsb_tolerance: float | None = None,
    notice: Callable[[str], None] | None = None,
    reference: Path | None = None,
    profile: bool = False,
) -> tuple[GeneratedNetwork, ValidationResult]:
    """Compile, build, run and compare with golden outputs (``outputs_npz``) or ONNX Runtime.

    Float outputs are judged by error relative to the reference's scale and by
    cosine similarity unless ``atol`` or ``rtol`` is given (then element-wise
    ``|a - e| <= atol + rtol * |e|``); see :mod:`deeploy_core.tolerance`.

    With ``inputs_npz``, inputs the options leave untyped may take the integer
    types Deeploy's rule reads off the arrays (see
    :mod:`deeploy_core.validate.sample_types`); ``notice`` hears which.

    ``reference``, a ``.tflite`` file, makes LiteRT's reference kernels on
    that file the reference (:mod:`deeploy_core.validate.reference_kind`).

    ``profile`` builds with the clock reads between layers
    (:mod:`deeploy_core.codegen.profile_marks`): the result's ``layer_ns``
    holds each layer's best time over the ``repeats`` runs.
    """
    check_reference(reference, outputs_npz)
    inputs = reference_inputs(model_path, inputs_npz, input_shapes=options.input_shapes, input_types=options.input_types,
                              claims=platform_claims(host, options.platform))
    expected = None
    if outputs_npz is not None:
        expected = load_npz_by_position(outputs_npz)

    def attempt(input_types: dict[str, DataType]) -> tuple[GeneratedNetwork, ValidationResult]:
        return validate_with_data(
            model_path, replace(options, input_types=input_types), host, inputs, expected, atol, rtol, repeats,
            build_dir, cache_dir, progress, toolchain, lsb_tolerance, reference, profile,
        )

    if inputs_npz is None:
        return attempt(dict(options.input_types))
    return with_sample_types(attempt, options.input_types, sample_types(model_path, inputs_npz, options.input_types),
                             notice)


def validate_with_data(
    model_path: Path,
    options: CompileOptions,
    host: PluginHost,
    inputs: dict[str, np.ndarray],
    expected: list[np.ndarray] | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    repeats: int = 2,
    build_dir: Path | None = None,
    cache_dir: Path | None = None,
    progress: ProgressLike = None,
    toolchain: Toolchain | None = None,
    lsb_tolerance: float | None = None,
    reference: Path | None = None,
    profile: bool = False,
) -> tuple[GeneratedNetwork, ValidationResult]:
    """Like :func:`validate_model` with the data in memory (``expected=None``: ONNX Runtime, or LiteRT on
    ``reference``)."""
    _, generated = compile_model(model_path, options, host, progress)
    if expected is None:
        expected = reference_outputs(model_path, reference, inputs, generated)
    if generated.runtime.board is not None:  # a microcontroller's network runs on its board, not the host
        as_progress(progress).stage("build and run")
        return generated, _validate_on_board(generated, inputs, expected, atol, rtol, lsb_tolerance, repeats, build_dir,
                                             cache_dir)
    toolchain = toolchain or Toolchain.from_environment()
    if profile:
        toolchain = replace(toolchain, extra_flags=(*toolchain.extra_flags, f"-D{PROFILE_DEFINE}"))
    as_progress(progress).stage("build and run")
    with scratch_folder("deeploy-core-") as scratch:
        directory = build_dir or scratch
        executable = build_executable(generated, directory, toolchain, cache_dir)
        actual, best_ns, layer_ns = run_profiled(executable, generated, inputs, repeats)
    comparisons = compare_outputs(generated, actual, expected, atol, rtol, lsb_tolerance)
    return generated, ValidationResult(comparisons, best_ns, actual, layer_ns)


def _validate_on_board(generated: GeneratedNetwork, inputs: dict[str, np.ndarray], expected: list[np.ndarray],
                       atol: float | None, rtol: float | None, lsb_tolerance: float | None, repeats: int,
                       build_dir: Path | None, cache_dir: Path | None = None) -> ValidationResult:
    """Build for the board, run on its emulator, compare as on the host; report.json (in ``build_dir``, and the
    network's report) gains the ``target`` section.  No host clock there: ``best_ns`` is NaN."""
    import json

    from deeploy_core.validate.board_run import validate_on_board

    with scratch_folder("deeploy-core-") as scratch:
        directory = build_dir or scratch
        actual, target = validate_on_board(generated, directory, inputs, repeats, cache_dir)
        generated.report["target"] = target.report_section(generated.report)
        if build_dir is not None:
            (directory / "report.json").write_text(json.dumps(generated.report, indent=2, sort_keys=True) + "\n",
                                                   encoding="utf-8")
    comparisons = compare_outputs(generated, actual, expected, atol, rtol, lsb_tolerance)
    return ValidationResult(comparisons, float("nan"), actual, target=target)
