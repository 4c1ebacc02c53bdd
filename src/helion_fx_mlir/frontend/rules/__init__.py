"""Lowering rules by family; importing this package fills `dispatch.LOWERINGS`."""

from helion_fx_mlir.frontend.rules import (
    aten,
    compute,
    control_flow,
    index_reductions,
    memory,
    scalars,
    tensors,
    tiles,
)
from helion_fx_mlir.frontend.rules.aten import aten_compute

__all__ = [
    "aten",
    "aten_compute",
    "compute",
    "control_flow",
    "index_reductions",
    "memory",
    "scalars",
    "tensors",
    "tiles",
]
