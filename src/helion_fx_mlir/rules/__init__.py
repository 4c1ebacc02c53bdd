"""Lowering rules by family; importing this package fills `dispatch.LOWERINGS`."""

from . import aten, compute, control_flow, memory, scalars, tensors, tiles  # noqa: F401
