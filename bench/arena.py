"""Arena bytes against Deeploy's heap peak, per network (issue 21 item 3: memory never above Deeploy).

For every peer model and MLPerf network, the untiled generic-c compile's
arena (``report.json`` ``memory.arena_bytes``: every activation, I/O and
scratch buffer of the network) is printed beside the schedule's lower bound
(the most bytes alive at one time) and Deeploy's measured heap peak over
InitNetwork + one RunNetwork, I/O included — the figures issue 21 quotes and
``../shared/bench/deeploy-mlperf/MANIFEST.md`` records.  The largest scratch
buffer of any layer (``layers[].scratch_bytes`` when the report has it) shows
where a bound comes from.

    python bench/arena.py [--filter TEXT]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.cli.model_options import data_input_types
from deeploy_core.plugins import PluginHost, PluginSelection

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
DEEPLOY_HEAP_PEAK = {
    "CCT_1_16_16_8": 39_976, "miniMobileNet": 5_322, "KeywordSpotting": 36_105, "EEGFormer": 177_408,
    "ImageClassification": 103_498, "AnomalyDetection": 3_968, "VisualWakeWords": 211_970,
}
"""Bytes; issue 21 (measured with Deeploy 0.2.1) and the deeploy-mlperf MANIFEST."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filter", default="")
    args = parser.parse_args()
    roots = (SHARED / "peer-tests" / "deeploy" / "Models", SHARED / "bench" / "deeploy-mlperf")
    if not roots[0].is_dir():
        print(f"peer networks not found in {SHARED}", file=sys.stderr)
        return 2
    host = PluginHost.discover(PluginSelection.from_options(os.environ))
    header = f"{'network':24} {'arena B':>9} {'bound B':>9} {'max scratch B':>13} {'Deeploy B':>10} {'ours/Deeploy':>12}  verdict"
    print(header)
    print("-" * len(header))
    over = 0
    for root in roots:
        for model in sorted(root.rglob("network.onnx")):
            if args.filter not in model.parent.as_posix():
                continue
            folder = model.parent
            is_float = "/FP32/" in folder.as_posix() + "/"
            types = {} if is_float else data_input_types(model, folder / "inputs.npz")
            _, generated = compile_model(model, CompileOptions(platform="generic-c", input_types=types), host)
            report = generated.report
            memory = report["memory"]
            scratch = max((int(layer.get("scratch_bytes", 0)) for layer in report.get("layers", [])), default=0)
            deeploy = DEEPLOY_HEAP_PEAK.get(folder.name)
            arena = int(memory["arena_bytes"])
            if deeploy is None:
                ratio, verdict = "", "(no Deeploy figure)"
            else:
                ratio = f"{arena / deeploy:.3f}"
                verdict = "met" if arena <= deeploy else f"OVER by {arena - deeploy} B"
                over += arena > deeploy
            print(f"{folder.name:24} {arena:9d} {int(memory['lower_bound_bytes']):9d} {scratch:13d} "
                  f"{'' if deeploy is None else deeploy:>10} {ratio:>12}  {verdict}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
