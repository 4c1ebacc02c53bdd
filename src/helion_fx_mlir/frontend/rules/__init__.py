"""Lowering rules by family; importing this package fills `dispatch.LOWERINGS`."""

from helion_fx_mlir.frontend.rules import (
    aten,
    compute,
    control_flow,
    memory,
    scalars,
    tensors,
    tiles,
)

__all__ = ["aten", "compute", "control_flow", "memory", "scalars", "tensors", "tiles"]
