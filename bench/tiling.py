"""Tile Deeploy's peer networks into L1 and print what the tiler did, per network and L1 size.

Two modes.

Tiler table (the default): generic-c, the tiler's default fusion; columns: whole compile time and the tiler's
part split into CP model build, CP-SAT solve and memory-map allocation; number of tiles over all layers; bytes
moved L2 → L1 and L1 → L2 per inference (report.json's ``traffic``); L1 used (tile buffers + tables + scratch)
against the configured size.  ``smallest`` is the size the diagnosis of a too-small L1 names.

    python bench/tiling.py [--filter Models/] [--l1 64000,16000,smallest] [--buffering single]

Fusion comparison (``--fusion-compare``): platform pulp-cluster, each network compiled twice per L1 size and
buffering, layer-wise (``fusion=none``) and fused (``fusion=auto``).  Per row: L2 <-> L1 traffic (report.json's
``traffic``, ``L2->L1`` + ``L1->L2``) of both and the reduction in % (positive: fused moves fewer bytes), the
number of fused patterns (``tiling.patterns``), peak L2 and L1 (``level_peaks``), ``estimated_cycles`` (the
cluster's cost model total) and the compile time of both (wall clock, noisy on a shared machine).  A setting that
does not compile prints its one-line reason in its row.  Then a summary: per network the reduction at each
setting, and totals (settings with lower / equal / higher fused traffic, failures grouped by reason).

    python bench/tiling.py --fusion-compare [--networks all|peer|mlperf|models] [--filter TEXT]
                           [--l1 64000,32000,16000] [--buffering single|double|both] [--markdown]

``--networks``: ``peer`` (every folder under ``../shared/peer-tests/deeploy``), ``mlperf`` (the three of
``../shared/bench/deeploy-mlperf``), ``all`` (both; the comparison's default) or ``models`` (the model set
miniMobileNet, KeywordSpotting, ImageClassification, AnomalyDetection, VisualWakeWords; implies
``--fusion-compare``, its default L1 is 32000 and the summary says on how many the reduction is >= 30 % at every
setting).  ``--filter`` keeps the networks whose path contains
the text (the tiler table's default is ``Models/``; the comparison's is every network of the set).  Defaults of
the comparison: L1 64000,32000,16000 (32000 for ``models``), both bufferings.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root
from deeploy_core.tiling.errors import TilingInfeasibleError

MODEL_SET = ("Models/miniMobileNet", "Models/MLPerf/KeywordSpotting", "ImageClassification", "AnomalyDetection",
             "VisualWakeWords")
"""``--networks models``: the CNN-style networks the fusion summary is about (AnomalyDetection is all Gemm)."""
TARGET_REDUCTION = 30.0
"""The reduction (%) the model summary counts networks against."""
COMPARE_PLATFORM = "pulp-cluster"


def smallest(peer: PeerTest, buffering: str, host: PluginHost, platform: str = "generic-c",
             options: dict[str, object] | None = None) -> int:
    try:
        compile_model(peer.model, CompileOptions(platform=platform, input_types=peer.input_types(),
                                                 level_sizes={"L1": 1}, buffering=buffering,
                                                 options=dict(options or {})), host)
    except TilingInfeasibleError as error:
        found = re.search(r"needs at least (\d+) bytes", str(error))
        if found:
            return int(found.group(1))
    raise SystemExit(f"{peer.name}: no minimum size reported")


def mlperf_root(peer_root: Path | None, start: Path) -> Path | None:
    """``../shared/bench/deeploy-mlperf``: beside the peer tests' ``shared`` folder, else beside an ancestor."""
    candidates = [peer_root.parents[1] / "bench" / "deeploy-mlperf"] if peer_root is not None else []
    here = start.resolve()
    candidates += [folder.parent / "shared" / "bench" / "deeploy-mlperf" for folder in (here, *here.parents)]
    return next((candidate for candidate in candidates if candidate.is_dir()), None)


def select_networks(which: str, contains: str, peer_root: Path | None, bench_root: Path | None) -> list[PeerTest]:
    peers = find_peer_tests(peer_root, contains) if peer_root is not None and which != "mlperf" else []
    mlperf = find_peer_tests(bench_root, contains) if bench_root is not None and which != "peer" else []
    if which == "models":
        found = {peer.name: peer for peer in (*peers, *mlperf)}
        return [found[name] for name in MODEL_SET if name in found]
    return [*peers, *mlperf]


def tiler_table(args: argparse.Namespace, networks: list[PeerTest], host: PluginHost) -> int:
    """The original table: generic-c, one buffering, the tiler's time split."""
    buffering = args.buffering or "single"
    if buffering == "both":
        print("the tiler table takes one buffering (single or double)", file=sys.stderr)
        return 2
    header = (f"{'network':44} {'L1':>7} {'compile s':>9} {'build s':>8} {'solve s':>8} {'alloc s':>8} "
              f"{'tiles':>6} {'L2→L1 B':>10} {'L1→L2 B':>10} {'L1 used':>8}")
    print(header)
    print("-" * len(header))
    for peer in networks:
        for size_text in (args.l1 or "64000,16000,smallest").split(","):
            size = smallest(peer, buffering, host) if size_text == "smallest" else int(size_text)
            options = CompileOptions(platform="generic-c", input_types=peer.input_types(), level_sizes={"L1": size},
                                     buffering=buffering)
            start = time.perf_counter()
            try:
                _, generated = compile_model(peer.model, options, host)
            except TilingInfeasibleError as error:
                print(f"{peer.name:44} {size:>7} infeasible: {error}")
                continue
            elapsed = time.perf_counter() - start
            tiling = generated.report["tiling"]
            times = generated.timings["tiling"]
            tiles = sum(layer["tiles"] for layer in tiling["layers"])
            traffic = generated.report["traffic"]
            moved_in, moved_out = traffic["L2->L1"], traffic["L1->L2"]
            used = generated.report["memory_levels"]["L1"]["used"]
            print(f"{peer.name:44} {size:>7} {elapsed:>9.2f} {times['model_build']:>8.3f} {times['solve']:>8.3f} "
                  f"{times['allocation']:>8.3f} {tiles:>6} {moved_in:>10} {moved_out:>10} {used:>8}", flush=True)
    return 0


# --- fusion comparison -------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One compile of the comparison: its figures, or why it failed."""

    traffic: int = 0
    patterns: int = 0
    peak_l2: int = 0
    peak_l1: int = 0
    cycles: int | None = None
    seconds: float = 0.0
    failure: str | None = None


def one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def compile_once(peer: PeerTest, input_types: dict[str, Any], size: int, buffering: str, fusion: str,
                 host: PluginHost) -> Outcome:
    options = CompileOptions(platform=COMPARE_PLATFORM, input_types=input_types, level_sizes={"L1": size},
                             buffering=buffering, options={"fusion": fusion})
    start = time.perf_counter()
    try:
        _, generated = compile_model(peer.model, options, host)
    except Exception as error:  # noqa: BLE001 - a benchmark row says why, the run goes on
        return Outcome(failure=one_line(error), seconds=time.perf_counter() - start)
    seconds = time.perf_counter() - start
    report = generated.report
    traffic, peaks = report["traffic"], report["level_peaks"]
    return Outcome(traffic=traffic.get("L2->L1", 0) + traffic.get("L1->L2", 0),
                   patterns=len(report["tiling"].get("patterns", [])), peak_l2=peaks.get("L2", 0),
                   peak_l1=peaks.get("L1", 0), cycles=report.get("estimated_cycles"), seconds=seconds)


def reduction(layerwise: Outcome, fused: Outcome) -> float | None:
    return None if layerwise.traffic == 0 else 100.0 * (layerwise.traffic - fused.traffic) / layerwise.traffic


class Table:
    """Rows printed as they come: aligned text (widths fixed up front) or Markdown."""

    def __init__(self, columns: list[tuple[str, int]], markdown: bool) -> None:
        self.columns, self.markdown = columns, markdown

    def header(self) -> None:
        titles = [title for title, _ in self.columns]
        if self.markdown:
            print("| " + " | ".join(titles) + " |")
            print("|" + "|".join("---" if index == 0 else "---:" for index in range(len(titles))) + "|")
        else:
            line = self.line(titles)
            print(line)
            print("-" * len(line))

    def line(self, cells: list[str]) -> str:
        if self.markdown:
            return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
        parts = [f"{cell:{width}}" if index == 0 else f"{cell:>{width}}"
                 for index, ((_, width), cell) in enumerate(zip(self.columns, cells))]
        return " ".join(parts).rstrip()

    def row(self, cells: list[str]) -> None:
        print(self.line(cells), flush=True)

    def failed_row(self, leading: list[str], reason: str) -> None:
        if self.markdown:
            self.row([*leading, reason, *[""] * (len(self.columns) - len(leading) - 1)])
        else:
            print(" ".join([self.line(leading), reason]), flush=True)


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def compare_fusion(args: argparse.Namespace, networks: list[PeerTest], host: PluginHost) -> int:
    if COMPARE_PLATFORM not in {extension.name for extension in host.extensions("platform")}:
        print(f"platform {COMPARE_PLATFORM} is not installed (deeploy-pulp-cluster)", file=sys.stderr)
        return 2
    sizes_text = args.l1 or ("32000" if args.networks == "models" else "64000,32000,16000")
    bufferings = ["single", "double"] if args.buffering in (None, "both") else [args.buffering]
    width = max([len("network"), *(len(peer.name) for peer in networks)])
    table = Table([("network", width), ("L1", 7), ("buf", 6), ("L2<->L1 lw", 11), ("L2<->L1 fu", 11),
                   ("red %", 6), ("pat", 4), ("L2 pk lw", 9), ("L2 pk fu", 9), ("L1 pk lw", 8), ("L1 pk fu", 8),
                   ("cycles lw", 10), ("cycles fu", 10), ("s lw", 6), ("s fu", 6)], args.markdown)
    print(f"platform {COMPARE_PLATFORM}; lw = layer-wise (fusion=none), fu = fused (fusion=auto); traffic in bytes per "
          "inference, L2->L1 + L1->L2; red % = (lw - fu) / lw; pat = fused patterns; pk = level_peaks (B); cycles = "
          "estimated_cycles; s = compile seconds")
    table.header()
    reductions: dict[str, dict[tuple[int, str], str]] = {}
    """Per network and (L1, buffering): the reduction as printed, or ``fail``."""
    compared: list[tuple[str, int, str, Outcome, Outcome]] = []
    failures: list[tuple[str, int, str, str]] = []
    started = time.perf_counter()
    for peer in networks:
        reductions[peer.name] = {}
        input_types: dict[str, Any] = {}
        types_failure: str | None = None
        try:
            input_types = peer.input_types()
        except Exception as error:  # noqa: BLE001
            types_failure = one_line(error)
        for size_text in sizes_text.split(","):
            for buffering in bufferings:
                size = (smallest(peer, buffering, host, COMPARE_PLATFORM, {"fusion": "none"})
                        if size_text == "smallest" else int(size_text))
                leading = [peer.name, str(size), buffering]
                if types_failure is not None:
                    failures.append((peer.name, size, buffering, types_failure))
                    reductions[peer.name][size, buffering] = "fail"
                    table.failed_row(leading, f"failed (inputs): {types_failure}")
                    continue
                layerwise = compile_once(peer, input_types, size, buffering, "none", host)
                fused = compile_once(peer, input_types, size, buffering, "auto", host)
                if layerwise.failure or fused.failure:
                    if layerwise.failure == fused.failure:
                        reason = f"both failed: {layerwise.failure}"
                    else:
                        reason = "; ".join(f"{label} failed: {outcome.failure}" for label, outcome in
                                           (("layer-wise", layerwise), ("fused", fused)) if outcome.failure)
                    failures.append((peer.name, size, buffering, reason))
                    reductions[peer.name][size, buffering] = "fail"
                    table.failed_row(leading, reason)
                    continue
                reduced = reduction(layerwise, fused)
                reductions[peer.name][size, buffering] = percent(reduced)
                compared.append((peer.name, size, buffering, layerwise, fused))
                table.row([*leading, str(layerwise.traffic), str(fused.traffic), percent(reduced), str(fused.patterns),
                           str(layerwise.peak_l2), str(fused.peak_l2), str(layerwise.peak_l1), str(fused.peak_l1),
                           str(layerwise.cycles), str(fused.cycles), f"{layerwise.seconds:.2f}",
                           f"{fused.seconds:.2f}"])
    print()
    summary(args, networks, reductions, table.markdown)
    print()
    totals(compared, failures, time.perf_counter() - started)
    return 0


def summary(args: argparse.Namespace, networks: list[PeerTest],
            reductions: dict[str, dict[tuple[int, str], str]], markdown: bool) -> None:
    """Per network, the reduction in % at every setting (``fail`` where it did not compile)."""
    settings = sorted({setting for per_network in reductions.values() for setting in per_network},
                      key=lambda setting: (-setting[0], setting[1] != "single"))
    width = max([len("network"), *(len(peer.name) for peer in networks)])
    table = Table([("network", width), *((f"{size} {buffering}", max(9, len(f"{size} {buffering}")))
                                         for size, buffering in settings)], markdown)
    print("reduction of L2<->L1 traffic, fused against layer-wise (%)")
    table.header()
    for peer in networks:
        row = reductions.get(peer.name, {})
        table.row([peer.name, *(row.get(setting, "") for setting in settings)])
    if args.networks == "models":
        reached = [name for name, row in reductions.items()
                   if row and all(re.fullmatch(r"-?[\d.]+", cell) and float(cell) >= TARGET_REDUCTION
                                  for cell in row.values())]
        print(f"reduction >= {TARGET_REDUCTION:.0f} % at every setting on {len(reached)} of {len(reductions)} "
              f"networks{': ' + ', '.join(reached) if reached else ''}")


def totals(compared: list[tuple[str, int, str, Outcome, Outcome]], failures: list[tuple[str, int, str, str]],
           seconds: float) -> None:
    lower = sum(1 for *_, layerwise, fused in compared if fused.traffic < layerwise.traffic)
    equal = sum(1 for *_, layerwise, fused in compared if fused.traffic == layerwise.traffic)
    higher = [(name, size, buffering) for name, size, buffering, layerwise, fused in compared
              if fused.traffic > layerwise.traffic]
    fused_with_patterns = sum(1 for *_, fused in compared if fused.patterns)
    print(f"settings: {len(compared) + len(failures)}  compared: {len(compared)}  fused traffic lower: {lower}  "
          f"equal: {equal}  higher: {len(higher)}  failed: {len(failures)}  (with >= 1 fused pattern: "
          f"{fused_with_patterns})")
    if higher:
        print("fused traffic higher than layer-wise at: " +
              ", ".join(f"{name} {size} {buffering}" for name, size, buffering in higher))
    else:
        print("fused traffic higher than layer-wise: never in this run")
    lw_cycles = sum(layerwise.cycles or 0 for *_, layerwise, _ in compared)
    fu_cycles = sum(fused.cycles or 0 for *_, fused in compared)
    lw_seconds = sum(layerwise.seconds for *_, layerwise, _ in compared)
    fu_seconds = sum(fused.seconds for *_, fused in compared)
    print(f"over the compared settings: estimated cycles lw {lw_cycles} / fu {fu_cycles}; compile s lw "
          f"{lw_seconds:.1f} / fu {fu_seconds:.1f}; wall time {seconds:.0f} s")
    reasons = Counter(re.sub(r"\b\d+\b", "N", reason) for *_, reason in failures)
    for reason, count in reasons.most_common():
        where = [f"{name} {size} {buffering}" for name, size, buffering, text in failures
                 if re.sub(r"\b\d+\b", "N", text) == reason]
        shown = ", ".join(where[:6]) + (f", ... ({len(where) - 6} more)" if len(where) > 6 else "")
        print(f"failed {count}x: {reason}  [{shown}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filter", default=None,
                        help="substring of the test path (tiler table default: Models/; comparison: every network)")
    parser.add_argument("--l1", default=None, help="comma-separated L1 sizes in bytes, or 'smallest'")
    parser.add_argument("--buffering", default=None, choices=["single", "double", "both"])
    parser.add_argument("--fusion-compare", action="store_true",
                        help="compile layer-wise and fused on pulp-cluster and compare (see above)")
    parser.add_argument("--networks", default=None, choices=["all", "peer", "mlperf", "models"],
                        help="which networks (tiler table default: peer; comparison: all)")
    parser.add_argument("--markdown", action="store_true", help="comparison tables in Markdown")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parent
    peer_root = peer_tests_root(here)
    bench_root = mlperf_root(peer_root, here)
    args.fusion_compare = args.fusion_compare or args.networks == "models"
    which = args.networks or ("all" if args.fusion_compare else "peer")
    if (which != "mlperf" and peer_root is None) or (which != "peer" and bench_root is None):
        print("networks not found (../shared/peer-tests/deeploy, ../shared/bench/deeploy-mlperf)", file=sys.stderr)
        return 2
    contains = args.filter if args.filter is not None else ("" if args.fusion_compare else "Models/")
    networks = select_networks(which, contains, peer_root, bench_root)
    if not networks:
        print(f"no network matches --networks {which} --filter {contains!r}", file=sys.stderr)
        return 2
    host = PluginHost.discover(PluginSelection.from_options(os.environ))
    if args.fusion_compare:
        return compare_fusion(args, networks, host)
    return tiler_table(args, networks, host)


if __name__ == "__main__":
    raise SystemExit(main())
