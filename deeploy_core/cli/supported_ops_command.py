"""``deeploy-core supported-ops``: what a platform can compile, or which nodes of a model each platform supports."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from deeploy_core.cli.model_options import DEFAULT_PLATFORM, data_input_types, parse_input_type
from deeploy_core.cli.session import CliSession
from deeploy_core.cli.table_output import TextTable, print_table
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.input_shapes import parse_input_shape
from deeploy_core.model_support import ModelSupport, check_model
from deeploy_core.node_support_reasons import INPUT_TYPES_HINT, NodeVerdict
from deeploy_core.supported_ops import supported_operators, verification_text

OPERATOR_COLUMNS = ("op", "tiling", "verified", "kernels")
"""The text listing: one line per op (``grep`` finds it); types, sources, platforms and constraints: ``--json``."""
UNSUPPORTED_EXIT = 2
"""The exit status when a node of ``--model`` is not supported (the unsupported-op report's)."""


@click.command("supported-ops")
@click.option("--platform", default=None,
              help=f"Platform to list (default {DEFAULT_PLATFORM}); with --model, the one platform to check the "
                   "model against (default: every installed platform).")
@click.option("--model", type=click.Path(path_type=Path), default=None, metavar="MODEL.onnx",
              help="Say for every node of MODEL whether each platform supports it, and why not; exit 2 when "
                   "a node is not supported.")
@click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME=D1xD2…",
              help="With --model: fix the shape of a graph input (repeatable), as compile does.")
@click.option("--input-type", "input_types", multiple=True, metavar="NAME=TYPE",
              help="With --model: element type of a graph input, e.g. x=int8 (repeatable), as compile does.")
@click.option("--input-types-from", "input_types_from", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              default=None, metavar="SAMPLE.npz",
              help="With --model: pick input types from sample data (.npz, by position) with Deeploy's rule, as "
                   "compile does (an integer network declared float needs them).")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_obj
def supported_ops_command(session: CliSession, platform: str | None, model: Path | None,
                          input_shapes: tuple[str, ...], input_types: tuple[str, ...], input_types_from: Path | None,
                          as_json: bool) -> None:
    """List the operators of a platform (types, constraints, platforms, tiling, verification), or with --model
    which nodes of a model each platform supports."""
    if model is None:
        given = [name for name, values in (("--input-shape", input_shapes), ("--input-type", input_types),
                                           ("--input-types-from", input_types_from)) if values]
        if given:
            raise DeeployError(f"{given[0]} applies to --model only: add --model MODEL.onnx or drop {given[0]}")
        _list_operators(session, platform or DEFAULT_PLATFORM, as_json)
        return
    platforms = (platform,) if platform else tuple(sorted(e.name for e in session.host.extensions("platform")))
    types = data_input_types(model, input_types_from) if input_types_from is not None else {}
    types.update(parse_input_type(text) for text in input_types)
    support = check_model(session.host, model, platforms, dict(parse_input_shape(text) for text in input_shapes),
                          types)
    if as_json:
        click.echo(json.dumps(support.as_json(), indent=2, sort_keys=True))
    else:
        _print_model_support(support)
    if not support.all_supported():
        raise SystemExit(UNSUPPORTED_EXIT)


def _list_operators(session: CliSession, platform: str, as_json: bool) -> None:
    rows = supported_operators(session.host, platform)
    if as_json:
        click.echo(json.dumps(rows, indent=2, sort_keys=True))
        return
    # One line per op (``| grep Conv`` finds it), its kernels last: a line per kernel and type signature with
    # the parser's constraints ran to 780 characters and listed an op once per binding (GRU twice).
    table = TextTable(OPERATOR_COLUMNS, title=f"operators on {platform}")
    for op, op_rows in operator_groups(rows).items():
        table.add_row(op, op_rows[0]["tiling"]["constraint"], verification_text(op_rows[0]), kernel_summary(op, op_rows))
    console = Console(soft_wrap=True)
    print_table(console, table, fallback="plain")
    click.echo(f"{len(table.rows)} ops, {len(rows)} kernel signatures; types, sources, platforms and constraints: "
               f"--json", err=True)


def operator_groups(rows: list[dict]) -> dict[str, list[dict]]:
    """The listing's rows by op, in its order (sorted by op)."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["op"], []).append(row)
    return groups


def kernel_summary(op: str, rows: list[dict]) -> str:
    """The op's kernels, each once, without the op's name they all start with: ``float32; integer``."""
    short = op.rsplit(".", 1)[-1]
    labels = dict.fromkeys(row["kernel"].removeprefix(short).strip() or row["kernel"] for row in rows)
    return "; ".join(labels)


def _cell(verdict: NodeVerdict | None) -> str:
    """``yes``, ``no``, ``?`` (not tried: the model does not import) or ``-`` (no such node on that platform)."""
    if verdict is None:
        return "-"
    return "yes" if verdict.supported else "?" if verdict.kind == "not-checked" else "no"


def _print_model_support(support: ModelSupport) -> None:
    """One node per line: a yes/no column per platform, then every platform's reason (long text goes last)."""
    table = TextTable(("node", "op", "domain", *support.platforms, "why not"),
                      title=f"nodes of {support.model} on {', '.join(support.platforms)}")
    typed_only = 0
    for index, node in enumerate(support.nodes):
        verdicts = [support.verdicts[platform][index] for platform in support.platforms]
        cells = [_cell(verdict) for verdict in verdicts]
        failing = [(platform, verdict) for platform, verdict in zip(support.platforms, verdicts)
                   if verdict is not None and not verdict.supported]
        typed_only = typed_only + 1 if any(v.reason.endswith(INPUT_TYPES_HINT) for _, v in failing) else typed_only
        reasons = [f"{platform}: {verdict.reason.removesuffix(INPUT_TYPES_HINT)}" for platform, verdict in failing]
        label = f"{node.name} (from lowering)" if node.from_lowering else node.name
        table.add_row(label, node.op, node.domain or "-", *cells, "; ".join(reasons) or "-")
    console = Console(soft_wrap=True)
    print_table(console, table, fallback="plain")
    for platform in support.platforms:
        present = [verdict for verdict in support.verdicts[platform] if verdict is not None]
        supported = sum(verdict.supported for verdict in present)
        console.print(f"{platform}: {supported} of {len(present)} nodes supported", highlight=False)
    if typed_only:
        click.echo(f"hint: {typed_only} node(s) fail because a graph input is declared float in an integer network "
                   "(Deeploy's dialect): give its types with --input-types-from SAMPLE.npz or --input-type NAME=TYPE",
                   err=True)
