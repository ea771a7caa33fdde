"""Design-space sweeps: many compiles of a few models over a grid of options, as independent tasks on
dask.distributed, with their figures in ``results.jsonl`` and a Pareto view in ``pareto.html``.

The modules split along who runs them: :mod:`.point` (what one point is and its key) and :mod:`.figures` are
shared; :mod:`.task` runs on a worker and exchanges JSON text only; :mod:`.results`, :mod:`.runner` and
:mod:`.pareto` run in the client, which alone writes files.  ``deeploy-core sweep``
(:mod:`deeploy_core.cli.sweep_command`) puts them together.
"""
