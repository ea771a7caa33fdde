"""Property-based fuzzing of the compiler against ONNX Runtime (needs ``hypothesis``, in the ``dev`` extra).

* :mod:`~deeploy_core.testing.fuzz.graphs` draws random valid float32 graphs
  (layers from :mod:`~deeploy_core.testing.fuzz.layers` and
  :mod:`~deeploy_core.testing.fuzz.windows`, built by
  :mod:`~deeploy_core.testing.fuzz.builder`);
  :mod:`~deeploy_core.testing.fuzz.qdq` turns them into QDQ int8 graphs;
* :mod:`~deeploy_core.testing.fuzz.targets` draws what to compile for
  (generic C, untiled or tiled; the PULP cluster with its L1 and buffering),
  :mod:`~deeploy_core.testing.fuzz.cases` pairs graphs with targets;
* :mod:`~deeploy_core.testing.fuzz.check` compiles, builds, runs and compares
  one graph on one target and says what happened
  (:mod:`~deeploy_core.testing.fuzz.rounding` decides which fixed-point
  outputs can be held to one quantisation step).

The fast profile runs in the plugins' tests, the long one is ``bench/fuzz.py``.
"""
