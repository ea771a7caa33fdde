"""Input types for ``validate --inputs``: the declared ones, or the ones Deeploy's rule reads off the arrays.

Deeploy's integer networks declare float inputs although they compute on
integers, so validating them with their own sample data used to need
``--input-type``/``--input-types-from``.  Validation holds that data, so it can
apply the rule itself — but only where the network is an integer one: a float
network whose sample inputs happen to hold whole numbers must keep computing
in float.  The evidence, in a fixed order (no guessing from results):

1. Only float-declared inputs the user did not type (``--input-type`` wins per
   input) whose array the rule gives an integer type are candidates; float data
   keeps the declared type.  No candidate: nothing changes.
2. Candidates all stored with an integer dtype in the file: the file says
   these are integers, so the integer types are tried first.  When the compiler
   refuses to type or map the network that way (an op without an integer
   kernel, float weights that are not whole numbers — a float network fed
   integer data), the declared types are used instead.
3. Otherwise (whole numbers stored as floats) the declared types are tried
   first, and the integer types only when an integer kernel refuses a
   float-declared candidate input (:class:`FloatInputError`): the network's
   first layers are integer kernels.

Both attempts stop in the compiler's mapping stage, before anything is built,
so a refused attempt costs little.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np

from deeploy_core.frontend.importer import read_model
from deeploy_core.ir import DataType
from deeploy_core.ir.dtypes import from_numpy
from deeploy_core.lowering.integer_types import IntegerTypingError, deeploy_input_type
from deeploy_core.midend.float_inputs import FloatInputError
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.validate.data import graph_input_specs, load_npz_by_position

Result = TypeVar("Result")

NOT_AN_INTEGER_NETWORK = (IntegerTypingError, UnsupportedModelError)
"""Compiler refusals that mean "this network does not compute on these integer inputs"."""


@dataclass(frozen=True)
class SampleTypes:
    """What Deeploy's rule picks from one sample file for the inputs that may change type."""

    source: Path
    picked: dict[str, DataType] = field(default_factory=dict)
    """Float-declared inputs, not typed by the user, whose array holds integers: their integer type."""
    stored_as_integers: bool = False
    """Every array behind ``picked`` has an integer dtype in the file."""

    def notice(self) -> str:
        """``input types from inputs.npz: input=uint8``: the one line telling the user what changed."""
        return f"input types from {self.source.name}: " + ", ".join(
            f"{name}={dtype}" for name, dtype in self.picked.items())


def sample_types(model_path: Path, data: Path, explicit: Mapping[str, DataType]) -> SampleTypes:
    """Deeploy's rule applied to the arrays of ``data`` (bound by position) where it may change a type."""
    specs = graph_input_specs(read_model(model_path))
    arrays = load_npz_by_position(data, len(specs))
    picked: dict[str, DataType] = {}
    stored_as_integers = True
    for (name, declared, _), array in zip(specs, arrays):
        if name in explicit or not from_numpy(np.dtype(declared)).is_float:
            continue
        rule = deeploy_input_type(array)
        if rule.is_float:
            continue
        picked[name] = rule
        stored_as_integers = stored_as_integers and array.dtype.kind in "iu"
    return SampleTypes(data, picked, stored_as_integers and bool(picked))


def with_sample_types(
    attempt: Callable[[dict[str, DataType]], Result],
    explicit: Mapping[str, DataType],
    sample: SampleTypes,
    notice: Callable[[str], None] | None = None,
) -> Result:
    """``attempt(input types)`` with the declared or the sample's types, in the order the module describes.

    ``notice`` hears :meth:`SampleTypes.notice` whenever the result, or the
    error raised, comes from the sample's types.
    """
    as_given = dict(explicit)
    from_data = {**sample.picked, **explicit}

    def announce() -> None:
        if notice is not None:
            notice(sample.notice())

    if not sample.picked:
        return attempt(as_given)
    if sample.stored_as_integers:
        try:
            result = attempt(from_data)
        except NOT_AN_INTEGER_NETWORK as refused:
            try:
                return attempt(as_given)
            except FloatInputError:
                announce()
                raise refused from None
        except Exception:
            announce()
            raise
        announce()
        return result
    try:
        return attempt(as_given)
    except FloatInputError as error:
        if error.input_name not in sample.picked:
            raise
    announce()
    return attempt(from_data)
